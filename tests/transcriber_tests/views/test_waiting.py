"""While a bank's lines are waiting for their transcriptions, its empty sections say what is waiting rather than
reading as final (issue 34, 5.7: "Flag lines into this bank" with 29 flags waiting; "No word errors in this
window" for a candidate that had scored nothing yet)."""

import pytest
from django.urls import reverse

from tests.transcriber_tests.support import read
from transcriber_tests import actions
from transcriber_tests.queries import snapshots
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db

SAID = "Siobhan, table for four at eight thirty"


@pytest.fixture
def waiting(org, recorded_call, make_transcriber):
    """A bank without controls whose one candidate hears the first line right, two lines flagged into it and
    nothing transcribed yet."""
    bank = actions.do_create_bank(org, name="Waiting", controls_per_flag=0)
    actions.do_add_candidate(bank, make_transcriber("right", SAID), confirmed=True)
    lines = list(recorded_call.lines.filter(speaker="caller").order_by("position"))
    actions.do_flag_line(lines[0], SAID, bank=bank)
    actions.do_flag_line(lines[1], "yes that's right", bank=bank, confirm_matches_live=True)
    return bank


def test_the_results_page_says_its_flags_are_waiting_not_to_flag_lines(admin_client, waiting):
    page = read(admin_client.get(reverse("tt:bank", args=[waiting.pk])).content)
    assert "2 line transcriptions waiting for this bank" in page
    assert (
        "No scored lines in this window yet: none of its 2 flagged lines (and their control lines) has a score "
        "from a candidate yet." in page
    )
    assert "Flag lines into this bank" not in page


def test_a_bank_with_flags_and_no_candidates_asks_for_candidates(admin_client, org, recorded_call):
    bank = actions.do_create_bank(org, name="Bare", controls_per_flag=0)
    actions.do_flag_line(recorded_call.lines.get(position=0), SAID, bank=bank)
    page = read(admin_client.get(reverse("tt:bank", args=[bank.pk])).content)
    assert (
        "No scored lines in this window yet: its 1 flagged line waits for candidates. Add candidates" in page
    )
    empty = actions.do_create_bank(org, name="Empty")
    page = read(admin_client.get(reverse("tt:bank", args=[empty.pk])).content)
    assert "No scored lines in this window yet. Flag lines into this bank and add candidates." in page


def test_the_trust_section_says_nothing_is_scored_yet_then_how_many_lines_had_no_error(admin_client, waiting):
    url = reverse("tt:bank_trust", args=[waiting.pk])
    admin_client.get(url)  # the trust key is read once: the queue computes it
    snapshots.drain()
    page = read(admin_client.get(url).content)
    assert (
        "Nothing scored in this window yet: line transcriptions were waiting when these figures were computed"
        in (page)
    )
    assert "No word errors in this window" not in page
    assert (
        "No scored lines in this window yet (2 line transcriptions were waiting when these figures were"
        in page
    )

    tasks.drain()
    page = read(admin_client.get(url).content)
    # Right on the first line; on the second it heard the first line's words: errors there, listed as pairs.
    assert "Nothing scored in this window yet" not in page


def test_a_candidate_without_errors_says_on_how_many_lines(
    admin_client, org, recorded_call, make_transcriber
):
    bank = actions.do_create_bank(org, name="Right", controls_per_flag=0)
    actions.do_add_candidate(bank, make_transcriber("right", SAID), confirmed=True)
    actions.do_flag_line(recorded_call.lines.get(position=0), SAID, bank=bank)
    url = reverse("tt:bank_trust", args=[bank.pk])
    admin_client.get(url)
    tasks.drain()
    page = read(admin_client.get(url).content)
    assert "No word errors on its 1 scored line in this window." in page
