"""Unlabelled is not zero: a run's fixes, breaks, patterns and verdict say how many differing lines carry no label
and why, never 0, on the run page and in the runs list."""

# ruff: noqa: F811 (tests take the imported fixtures as parameters)

import pytest
from django.urls import reverse

from tests.llm_server import error
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run
from transcriber_tests.work import runs as pipeline
from transcriber_tests.work import tasks as run_tasks

from ..support import Say, read, scripted_judge

pytestmark = pytest.mark.django_db

NOT_CONFIGURED = "the judge is not configured on this server"


def start(bank, calls, **kwargs):
    return run_actions.do_start_run(bank, [c.pk for c in calls], confirmed=True, **kwargs)


@pytest.fixture
def unlabelled_run(org, world, no_judge):
    """No judge, no flag: three lines that differ and that no rule reads as the same."""
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Plain", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call(
        [
            Say("my number is 0 8 7 1 2", candidate="my number is 0 8 7"),
            Say("under Fitzgerald", candidate="under fitz gerald"),
            Say("four people", candidate="for people"),
            Say("yes that's right"),
        ]
    )
    run = start(bank, [call], candidate=cand)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    return run


def test_it_says_not_labelled_instead_of_zero_when_no_differing_line_is_labelled(
    admin_client, unlabelled_run
):
    page = admin_client.get(reverse("runs:detail", args=[unlabelled_run.pk])).content
    why = f"3 differing lines are not labelled: {NOT_CONFIGURED}."
    for card, caption in (
        ("Fixes", "candidate right, live wrong"),
        ("Breaks", "live right, candidate wrong"),
    ):
        assert read(page, card) == f"{card} not labelled {caption} {why}"
    other = read(page, "Other lines")
    assert "Same meaning not labelled" in other and "Both wrong not labelled" in other
    assert "Identical 1" in other and "Differing, not labelled 3" in other
    assert read(page, "Patterns") == (
        f"What it breaks patterns Not grouped: the judge groups the breaks, and {NOT_CONFIGURED}. "
        "3 differing lines are not labelled."
    )
    assert read(page, "Verdict").startswith(
        f"Verdict No verdict: {NOT_CONFIGURED}. The run transcribed and compared every line. "
        "3 differing lines are not labelled. Nothing was invented for them."
    )


def test_it_says_not_labelled_in_the_runs_list(admin_client, unlabelled_run):
    listing = read(admin_client.get(reverse("runs:bank_runs", args=[unlabelled_run.bank_id])).content)
    assert f"not labelled (3 differing lines: {NOT_CONFIGURED})" in listing
    assert f"Run {unlabelled_run.pk} Run cand done judge not configured 1 4 not labelled" in listing


def test_the_api_says_how_many_differing_lines_are_unlabelled_and_why(api, unlabelled_run):
    brief = api.get("/runs").json()["items"][0]
    assert (brief["fixes"], brief["breaks"], brief["differing"], brief["unlabelled"]) == (0, 0, 3, 3)
    assert brief["unlabelled_why"] == NOT_CONFIGURED
    counts = api.get(f"/runs/{unlabelled_run.pk}").json()["counts"]
    assert (counts["unlabelled"], counts["unlabelled_why"]) == (3, NOT_CONFIGURED)


def test_it_shows_how_many_differing_lines_are_labelled_beside_a_partial_figure(
    admin_client, run_setup, no_judge
):
    bank, cand, call_a, call_b = run_setup
    run = start(
        bank, [call_a, call_b]
    )  # the flagged line is labelled against what was said; 4 others are not
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content
    note = f"1 of 5 differing lines labelled; 4 not labelled: {NOT_CONFIGURED}."
    # the shares are of the lines whose outcome is known: the identical ones and the one labelled
    assert read(page, "Fixes") == (
        f"Fixes 1 candidate right, live wrong 33.3% of 3 lines whose outcome is known · 95% interval 6.1–79.2% {note}"
    )
    assert read(page, "Breaks").startswith("Breaks 0 live right, candidate wrong 0.0% of 3 lines")
    assert read(page, "Breaks").endswith(note)
    assert f"Flagged lines 1 (in the boxes above too) Same meaning and both wrong: {note}" in read(
        page, "Other lines"
    )

    listing = read(admin_client.get(reverse("runs:bank_runs", args=[bank.pk])).content)
    assert "4 differing lines not labelled: " + NOT_CONFIGURED in listing
    assert "1 (1 of 5 differing lines labelled) 0 (1 of 5 differing lines labelled)" in listing


def test_it_says_the_judge_failed_beside_what_it_labelled_before_it_failed(
    admin_client, run_setup, llm_server, settings
):
    settings.ANTHROPIC_MAX_RETRIES = 0
    bank, cand, call_a, call_b = run_setup
    answers = iter([scripted_judge, lambda body: error(500)])
    llm_server.responder = lambda body: next(answers)(body)
    run = start(bank, [call_a, call_b])
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content
    note = "3 of 5 differing lines labelled; 2 not labelled: the judge failed."
    assert read(page, "Breaks") == (
        f"Breaks 1 live right, candidate wrong 20.0% of 5 lines whose outcome is known · 95% interval 3.6–62.4% {note}"
    )
    assert read(page, "Patterns") == f"What it breaks patterns Not grouped: {note}"
    assert f"No verdict: {note}" in read(page, "Verdict")


def test_it_shows_no_count_before_the_lines_are_compared(admin_client, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run = start(bank, [call_a])
    pipeline.advance(run.pk)  # transcribing: nothing compared yet
    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content
    assert read(page, "Fixes") == "Fixes — candidate right, live wrong Counted once the lines are compared."
    assert read(page, "Other lines") == "Other lines Counted once the lines are compared."
    listing = read(admin_client.get(reverse("runs:bank_runs", args=[bank.pk])).content)
    assert f"Run {run.pk} Run cand transcribing 1 4 — — —" in listing


def test_it_says_a_verdict_was_written_from_the_labelled_lines_only(admin_client, run_setup, llm_server):
    bank, cand, call_a, call_b = run_setup

    def never_labels_the_digits(body):
        answer = scripted_judge(body)
        for entry in answer.get("labels", []):
            if "0 8 7" in entry["reasoning"]:
                entry["label"] = "mostly_right"
        return answer

    llm_server.responder = never_labels_the_digits
    run = start(bank, [call_a, call_b])
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content
    note = "4 of 5 differing lines labelled; 1 not labelled: the judge's answer was invalid twice."
    assert (
        f"It would fix the names and break the numbers; not worth it yet. Written from the lines that are labelled: {note}"
        in read(page, "Verdict")
    )
    assert read(page, "Breaks") == (
        f"Breaks 1 live right, candidate wrong 16.7% of 6 lines whose outcome is known · 95% interval 3.0–56.4% {note}"
    )
    assert f"Grouped from the breaks among the lines that are labelled: {note}" in read(page, "Patterns")
