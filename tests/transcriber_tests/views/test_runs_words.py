"""What the run page, its CSV and the new-run form say (issue 34, 5.8 and 5.9): a flagged line reads flagged
from the start, not only once the run compares it; a queued run has not started; an estimate of nothing to pay
reads free; the boxes say when a line is counted twice; with no leader the form asks for a candidate."""

# ruff: noqa: F811 (tests take the imported fixtures as parameters)

import csv
import io

import pytest
from django.urls import reverse

from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run
from transcriber_tests.work import tasks
from transcriber_tests.work import tasks as run_tasks

from ..support import Say, caller_lines, read
from .test_runs_page import _row, local_world  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db

SAID = "Siobhan, table for four at 830"


def csv_rows(client, run) -> list[dict]:
    body = b"".join(client.get(reverse("runs:export", args=[run.pk])).streaming_content).decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(body)))


def test_a_queued_runs_flagged_line_reads_flagged_and_the_run_queued(admin_client, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run = run_actions.do_start_run(bank, [call_a.pk, call_b.pk], confirmed=True)  # not run yet: queued
    html = admin_client.get(reverse("runs:detail", args=[run.pk])).content.decode()
    page = read(html)
    assert "Queued" in page and "(waiting to start)" in page and "Started" not in page
    row = _row(html, f"call {call_a.pk} · 1<")  # the flagged line: its live text is marked word by word
    assert f"Said: “{SAID}”" in row and "waiting… ⚑ flagged" in row
    assert "⚑ flagged" not in _row(html, f"call {call_a.pk} · 3<")
    rows = csv_rows(admin_client, run)
    assert [(r["flagged"], r["expected_text"]) for r in rows if r["flagged"] == "yes"] == [("yes", SAID)]
    assert sum(r["flagged"] == "no" for r in rows) == 6

    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    page = read(admin_client.get(reverse("runs:detail", args=[run.pk])).content)
    assert "Started" in page and "waiting to start" not in page
    assert [
        (r["flagged"], r["expected_text"]) for r in csv_rows(admin_client, run) if r["flagged"] == "yes"
    ] == [("yes", SAID)]


def test_an_estimate_of_nothing_to_pay_reads_free(admin_client, local_world, no_judge):
    bank, cand, call = local_world
    run = run_actions.do_start_run(bank, [call.pk], candidate=cand, confirmed=True)
    page = read(admin_client.get(reverse("runs:detail", args=[run.pk])).content)
    assert "Estimate free (nothing to pay: the candidate runs on this server, no judge)" in page
    assert "$0.00" not in page


def test_the_boxes_say_which_line_they_count_twice(admin_client, org, world, no_judge):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Twice", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    # The candidate writes both lines as the live transcript did; the first is flagged with other words.
    call = world.call([Say("yes that's right"), Say("thank you")])
    actions.do_flag_line(caller_lines(call)[0], "yes that is right", bank=bank)
    tasks.drain()
    run = run_actions.do_start_run(bank, [call.pk], candidate=cand, confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    page = read(admin_client.get(reverse("runs:detail", args=[run.pk])).content)
    assert "Both wrong 1" in page and "Identical 2" in page
    assert (
        "Fixes, breaks, same meaning, both wrong, identical, differing not labelled and no text count 3 for the "
        "run's 2 compared lines: 1 flagged line the candidate wrote as the live transcript did is counted twice, "
        "as identical and as same meaning or both wrong against what was said." in page
    )
    assert "Flagged lines 1 (in the boxes above too)" in page


def test_the_boxes_count_each_line_once_without_an_identical_flagged_line(admin_client, done_run):
    page = read(admin_client.get(reverse("runs:detail", args=[done_run.pk])).content)
    assert "no text count each of the run's 7 compared lines once." in page


def test_with_no_leader_the_new_run_form_asks_for_a_candidate(admin_client, org, world, no_judge):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="No leader", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call([Say("hello")])
    html = admin_client.get(reverse("runs:new", args=[bank.pk])).content.decode()
    assert (
        "The bank&#x27;s leader" not in html
        and '<option value="" selected>Choose a candidate</option>' in html
    )
    refused = admin_client.post(reverse("runs:new", args=[bank.pk]), {"calls": [call.pk], "candidate": ""})
    assert refused.status_code == 422
    assert "This bank has no leader yet (no scored lines): choose a candidate." in read(refused.content)


def test_with_a_leader_the_new_run_form_names_it(admin_client, run_setup):
    bank, cand, call_a, call_b = run_setup
    html = admin_client.get(reverse("runs:new", args=[bank.pk])).content.decode()
    assert f'<option value="" selected>The bank&#x27;s leader ({cand.display_name})</option>' in html
