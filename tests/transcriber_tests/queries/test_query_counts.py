"""List pages, the results page and the turn table hold a fixed number of queries as a bank grows."""

import pytest
from django.urls import reverse

from transcriber_tests import queries
from transcriber_tests.actions.synthetic import fill_bank
from transcriber_tests.lib import scoring
from transcriber_tests.models import Score

pytestmark = pytest.mark.django_db


@pytest.fixture
def big_bank(org, tenant):
    return fill_bank(org, flags=5000, candidates=3)


@pytest.mark.slow
def test_it_keeps_pages_at_a_fixed_query_count_with_5000_flags_and_agrees_with_the_pure_summary(
    admin_client, big_bank, django_assert_max_num_queries
):
    results = reverse("tt:bank", args=[big_bank.pk])
    # A window never read before is computed once, in the request (queries/snapshots.py): the cards, latency, costs and
    # monthly projections, trends, tags, the per-tenant tables, the pacing of streaming replays, the expected-text
    # check, and the snapshot kept.
    with django_assert_max_num_queries(48):
        assert admin_client.get(results).status_code == 200
    pages = {
        # From then on it reads the snapshot: the session, the user, the bank, its candidates, the waiting work.
        results: 10,
        reverse("tt:turn_table", args=[big_bank.pk]): 16,
        reverse("tt:turn_table", args=[big_bank.pk]) + "?disagree=1&tag=name&kind=flags": 16,
        reverse("tt:calls"): 14,
        reverse(
            "tt:banks"
        ): 12,  # with the live transcribers' models (where a lead comes from) and the leaders' entities
        reverse("tt:unbanked_flags"): 12,
    }
    for url, limit in pages.items():
        with django_assert_max_num_queries(limit):
            response = admin_client.get(url)
        assert response.status_code == 200, url

    # The database aggregates agree with the pure summary over the same scores.
    results = queries.bank_results(big_bank)
    names = [c.transcriber_id for c in big_bank.candidates.order_by("position")]
    outcomes = [
        scoring.Outcome(
            s.transcriber_id,
            (s.flag_id, s.control_id),
            scoring.score_line(
                s.control.expected_text if s.control_id else s.flag.expected_text, s.hypothesis
            ),
        )
        for s in Score.objects.filter(flag__bank=big_bank, source="candidate").select_related(
            "flag", "control"
        )
    ]
    pure = scoring.summarize(outcomes, names, big_bank.threshold)
    assert results.leader.transcriber.pk == pure.leader
    for card, row in zip(results.cards, pure.rows, strict=True):
        assert (card.summary.scored, card.summary.matches) == (row.scored, row.matches)
        assert card.summary.mean_wer == pytest.approx(row.mean_wer)


def test_flagging_a_line_into_a_bank_takes_a_fixed_number_of_queries(
    admin_client, org, recorded_call, make_transcriber, django_assert_max_num_queries
):
    """The request writes the flag and leaves the rest to the queue, which writes the live scores of the flag and
    its controls at once and counts the flag once in the totals (93 queries in the request before, with two
    controls and two candidates; 48 when it did all of it, the page's answer included)."""
    from transcriber_tests import actions

    bank = actions.do_create_bank(org, name="Flags", controls_per_flag=2)
    for name in ("a", "b"):
        actions.do_add_candidate(bank, make_transcriber(name, "hello there"), confirmed=True)
    line = recorded_call.lines.filter(speaker="caller").first()
    with django_assert_max_num_queries(22):
        response = admin_client.post(
            reverse("tt:flag_line", args=[line.pk]),
            {"expected_text": "hello there friend", "bank": bank.pk},
            HTTP_HX_REQUEST="true",
        )
    assert response.status_code == 200 and b"Flagged" in response.content
    assert b"Transcribing and scoring: this updates by itself." in response.content
    flag = bank.flags.get()
    assert not flag.settled and flag.controls.count() == 0 and not flag.scores.exists()
    with django_assert_max_num_queries(40):
        assert actions.settle_waiting() == 1
    flag.refresh_from_db()
    assert flag.settled and flag.controls.count() == 2 and flag.scores.filter(source="live").count() == 3
