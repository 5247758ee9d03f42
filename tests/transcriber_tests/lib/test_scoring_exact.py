"""Every scoring rule exact: a text with no words is a failure ("no text", apart from "error") for candidates and
live rows alike; ties for the lead are decided exactly on both paths (database aggregates and the pure core); the
threshold is compared exactly."""

import csv
import io
import random
from decimal import Decimal

import pytest
from django.urls import reverse

from tests.fixtures import make_call
from transcriber_tests import actions, queries
from transcriber_tests.actions import scores
from transcriber_tests.lib import scoring
from transcriber_tests.models import Bank, Candidate, Flag, Score
from transcriber_tests.shapes.turns import TURN_COLUMNS
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


def caller_lines(call):
    return list(call.lines.filter(speaker="caller").order_by("position"))


# ---------------------------------------------------------------- pure core


def test_it_ties_two_tenths_and_four_tenths_with_three_and_three_and_gives_the_lead_to_the_one_listed_first():
    expected = " ".join(f"w{i}" for i in range(20))

    def wrong(n):  # n of the 20 words substituted: WER n/20
        return " ".join([f"x{i}" for i in range(n)] + [f"w{i}" for i in range(n, 20)])

    outcomes = [
        scoring.Outcome("a", 1, scoring.score_line(expected, wrong(2))),
        scoring.Outcome("a", 2, scoring.score_line(expected, wrong(4))),
        scoring.Outcome("b", 1, scoring.score_line(expected, wrong(3))),
        scoring.Outcome("b", 2, scoring.score_line(expected, wrong(3))),
    ]
    assert 0.1 + 0.2 != 0.15 + 0.15  # summed in floating point they differ, and used to decide the lead
    summary = scoring.summarize(outcomes, ["a", "b"], 0.6)
    a, b = summary.rows
    assert a.mean_wer == b.mean_wer == 0.15
    assert summary.leader == "a"
    assert scoring.summarize(outcomes, ["b", "a"], 0.6).leader == "b"


def test_it_holds_every_wer_of_up_to_24_words_exactly():
    for words in range(1, 25):
        for errors in range(0, 3 * words):
            assert scoring.wer_units(errors, words) * words == errors * scoring.WER_SCALE


def test_it_clears_a_typed_threshold_exactly():
    hit = scoring.Outcome("a", 0, scoring.score_line("table for four", "table for four"))
    miss = scoring.Outcome("a", 1, scoring.score_line("table for four", "table"))
    outcomes = [hit] * 351 + [miss] * 149  # 351 of 500 = 70.2%
    assert float(Decimal("70.2")) / 100 > 351 / 500  # the float the form used to store is above 70.2%
    assert scoring.summarize(outcomes, ["a"], Decimal("70.2") / 100).leader_clears_threshold
    assert scoring.summarize(outcomes, ["a"], 0.702).leader_clears_threshold
    assert not scoring.summarize(outcomes, ["a"], Decimal("0.7021")).leader_clears_threshold
    assert scoring.summarize([hit] + [miss] * 9, ["a"], 0.1).leader_clears_threshold  # 1/10 clears 0.1


@pytest.mark.parametrize("text", ["", "   ", "...", " - , ! "])
def test_it_counts_a_text_without_words_as_a_failed_line(text):
    outcomes = [
        scoring.Outcome("a", 0, scoring.score_line("table for four", text)),
        scoring.Outcome("a", 1, scoring.score_line("four", "four")),
    ]
    (row,) = scoring.summarize(outcomes, ["a"], 0.6).rows
    assert (row.scored, row.matches, row.failed, row.accuracy) == (1, 1, 1, 1.0)
    assert scoring.failure_of(text) == scoring.NO_TEXT
    assert scoring.failure_of(None) == scoring.ERROR
    assert scoring.failure_of("hi") == ""


# ---------------------------------------------------------------- the database path


def test_it_fails_a_candidate_and_a_live_transcript_without_words_as_no_text(
    admin_client, org, tenant, live_transcriber, make_transcriber, stt_server
):
    bank = actions.do_create_bank(org, name="Empty", controls_per_flag=0)
    actions.do_add_candidate(bank, make_transcriber("silent", " ... "), confirmed=True)
    actions.do_add_candidate(bank, make_transcriber("right", "table for four"), confirmed=True)
    actions.do_add_candidate(bank, make_transcriber("down", "x"), confirmed=True)
    stt_server.statuses["down"] = 400
    call = make_call(tenant, live_transcriber, caller_texts=["", "table for for"])
    empty_live, _ = caller_lines(call)
    flag = actions.do_flag_line(empty_live, "table for four", bank=bank)
    tasks.drain()

    scores = {s.transcriber.model: s for s in Score.objects.filter(flag=flag).select_related("transcriber")}
    assert (scores["silent"].failed, scores["silent"].failure) == (True, Score.NO_TEXT)
    assert (scores["down"].failed, scores["down"].failure) == (True, Score.ERROR)
    assert (scores["live"].failed, scores["live"].failure) == (True, Score.NO_TEXT)  # the live row alike
    assert not scores["right"].failed and scores["right"].match

    results = queries.bank_results(bank)
    silent, right, down = (card.summary for card in results.cards)
    assert (silent.scored, silent.failed, silent.accuracy) == (0, 1, None)
    assert (down.scored, down.failed) == (0, 1)
    assert (right.scored, right.matches) == (1, 1)
    ((_, live, _),) = results.live_rows
    assert (live.scored, live.failed, live.accuracy) == (0, 1, None)

    turns = admin_client.get(reverse("tt:turn_table", args=[bank.pk])).content.decode()
    assert "✗ no text" in turns and "✗ error" in turns
    export = admin_client.get(reverse("tt:export_turns", args=[bank.pk]))
    rows = list(csv.DictReader(io.StringIO(b"".join(export.streaming_content).decode("utf-8-sig"))))
    assert "failure" in TURN_COLUMNS
    reasons = {r["transcriber"]: (r["failed"], r["failure"]) for r in rows}
    assert reasons == {
        "Test silent": ("yes", "no text"),
        "Test right": ("no", ""),
        "Test down": ("yes", "error"),
        "Test live": ("yes", "no text"),
    }


def test_it_gives_the_same_leader_from_the_database_on_an_exact_tie(org, tenant, live_transcriber):
    from oncore.transcribers.models import Transcriber

    expected = " ".join(f"w{i}" for i in range(20))
    wrong = {n: " ".join([f"x{i}" for i in range(n)] + [f"w{i}" for i in range(n, 20)]) for n in (2, 3, 4)}
    call = make_call(tenant, live_transcriber, caller_texts=["a", "b"], recorded=False)
    bank = Bank.objects.create(organization=org, name="Tie", controls_per_flag=0)
    a, b = (Transcriber.objects.create(slug=s, provider="generic", model=s, display_name=s) for s in "ab")
    Candidate.objects.bulk_create([Candidate(bank=bank, transcriber=a, position=0)])
    Candidate.objects.bulk_create([Candidate(bank=bank, transcriber=b, position=1)])
    for line, (na, nb) in zip(caller_lines(call), [(2, 3), (4, 3)], strict=True):
        flag = Flag.objects.create(organization=org, line=line, bank=bank, expected_text=expected)
        scores.write_score(flag, None, a.pk, Score.CANDIDATE, wrong[na], expected)
        scores.write_score(flag, None, b.pk, Score.CANDIDATE, wrong[nb], expected)
    results = queries.bank_results(bank)
    assert results.leader.transcriber == a
    assert results.cards[0].summary.mean_wer == results.cards[1].summary.mean_wer == 0.15


def test_it_agrees_with_the_pure_summary_on_random_banks(org, tenant, live_transcriber):
    """Random banks of near-tied candidates: the database aggregates and scoring.summarize give the same leader
    and the same rows (every count, the exact WER sum, accuracy and mean WER), for candidates and live rows."""
    from oncore.transcribers.models import Transcriber

    rng = random.Random(14)
    words = "table for four at eight thirty please".split()
    ts = [
        Transcriber.objects.create(slug=f"r{i}", provider="generic", model=f"r{i}", display_name=f"R{i}")
        for i in range(3)
    ]
    for round_ in range(8):
        bank = Bank.objects.create(
            organization=org, name=f"Random {round_}", threshold=Decimal(rng.randint(0, 10000)) / 10000
        )
        order = rng.sample(ts, 3)
        Candidate.objects.bulk_create(
            [Candidate(bank=bank, transcriber=t, position=i) for i, t in enumerate(order)]
        )
        call = make_call(tenant, live_transcriber, caller_texts=["x"] * 12, recorded=False)
        outcomes, live = [], []
        for line in caller_lines(call):
            expected = " ".join(rng.choice(words) for _ in range(rng.choice([5, 10, 20, 25])))
            flag = Flag.objects.create(organization=org, line=line, bank=bank, expected_text=expected)
            for t in [*order, live_transcriber]:
                if rng.random() < 0.1:
                    hypothesis = rng.choice([None, "", "..."])
                else:
                    said = expected.split()
                    for _ in range(rng.randint(0, 3)):
                        said[rng.randrange(len(said))] = rng.choice(words + ["tables"])
                    hypothesis = " ".join(said)
                source = Score.LIVE if t == live_transcriber else Score.CANDIDATE
                scores.write_score(flag, None, t.pk, source, hypothesis, expected)
                (live if t == live_transcriber else outcomes).append(
                    scoring.outcome(t.pk, line.pk, expected, hypothesis)
                )
        pure = scoring.summarize(outcomes, [t.pk for t in order], bank.threshold)
        results = queries.bank_results(bank)
        assert [card.summary for card in results.cards] == list(pure.rows)
        assert (results.leader.transcriber.pk if results.leader else None) == pure.leader
        assert results.leader_clears_threshold == pure.leader_clears_threshold
        assert (results.runner_up.transcriber.pk if results.runner_up else None) == pure.runner_up
        (live_row,) = scoring.summarize(live, [live_transcriber.pk], 0).rows
        assert [s for _, s, _ in results.live_rows] == [live_row]


def test_it_stores_a_typed_threshold_exactly_and_clears_it_at_351_of_500(admin_client, org):
    from oncore.transcribers.models import Transcriber

    response = admin_client.post(
        reverse("tt:bank_new"), {"name": "Exact", "threshold_pct": "70.2", "controls_per_flag": "0"}
    )
    assert response.status_code == 302
    bank = Bank.objects.get(name="Exact")
    assert bank.threshold == Decimal("0.702")
    t = Transcriber.objects.create(slug="t", provider="generic", model="t", display_name="T")
    Candidate.objects.create(bank=bank, transcriber=t, position=0)
    rows = [scoring.summary_row(t.pk, 500, 351, 0, 0)]
    assert scoring.rank(rows, bank.threshold).leader_clears_threshold
    assert not scoring.rank(
        [scoring.summary_row(t.pk, 500, 350, 0, 0)], bank.threshold
    ).leader_clears_threshold
    form = admin_client.get(reverse("tt:bank_edit", args=[bank.pk])).content.decode()
    assert 'value="70.2"' in form
