"""The review sample as a person reads it: the run page's verdict and review section agree on whether a sample was
made, and answering a line on the review page updates its row and the counter in place (htmx), or comes back to
the same view after a plain post."""

# ruff: noqa: F811 (tests take the imported fixtures as parameters)

import csv
import io
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from django.urls import reverse

from oncore.calls.models import Call, Line
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run, RunLine
from transcriber_tests.shapes.runs import api_label
from transcriber_tests.work import tasks as run_tasks

from ..support import Say, read

pytestmark = pytest.mark.django_db


def test_it_says_the_same_about_the_review_sample_in_the_verdict_and_the_review_section(
    admin_client, org, world, no_judge
):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Rules", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call(
        [
            Say("a table for four", candidate="a table for 4"),  # same meaning by rule: the review sample
            Say("under Fitzgerald", candidate="under fitz gerald"),  # left for the judge, who is not there
        ]
    )
    run = run_actions.do_start_run(bank, [call.pk], candidate=cand, confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content
    verdict, review = read(page, "Verdict"), read(page, "Review")
    assert "The review sample holds the 1 line labelled by rule." in verdict
    assert "review sample were made" not in verdict and "No review sample" not in verdict
    assert "0 of 1 line reviewed." in review and "the sample holds lines labelled by rule" in review

    review_page = read(admin_client.get(reverse("runs:review", args=[run.pk])).content)
    assert "every line here was labelled by rule" in review_page and "0 of 1 line reviewed." in review_page


def test_it_says_no_review_sample_was_made_only_when_none_was(admin_client, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run = run_actions.do_start_run(bank, [call_a.pk], confirmed=True)  # no line the rule labels
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content
    assert "No review sample was made" in read(page, "Verdict")
    assert "No review sample" in read(page, "Review") and " reviewed" not in read(page, "Review")
    review_page = read(admin_client.get(reverse("runs:review", args=[run.pk])).content)
    assert "No review sample" in review_page and "0 of 0" not in review_page


def _answer_buttons(html: str, rl: RunLine) -> dict[str, str]:
    """Each answer button of a review row: label value -> its aria-pressed."""
    row = re.search(rf'<tr id="rl-{rl.pk}">.*?</tr>', html, re.S).group(0)
    return dict(re.findall(r'<button type="submit" name="label" value="(\w+)" aria-pressed="(\w+)"', row))


def test_it_updates_the_row_and_the_counter_in_place_when_a_line_is_answered(admin_client, done_run):
    first, second = done_run.lines.filter(in_review=True).order_by("position")[:2]
    answer = admin_client.post(
        reverse("runs:review_line", args=[done_run.pk, first.pk]),
        {"label": first.label},
        HTTP_HX_REQUEST="true",
    )
    body = answer.content.decode()
    assert answer.status_code == 200
    buttons = _answer_buttons(body, first)
    assert buttons.pop(first.label) == "true" and set(buttons.values()) == {"false"}
    assert "✓ you agree" in read(body)
    # The counter above the table is swapped out of band, with the agreement so far.
    progress = re.search(r'<div id="review-progress" hx-swap-oob="true">(.*?)</div>', body, re.S).group(1)
    assert "1 of 4 lines reviewed · agreement with your labels 100.0% (1 of 1)." in read(progress)
    page = admin_client.get(reverse("runs:review", args=[done_run.pk])).content.decode()
    assert '<div id="review-progress">' in page  # what the answer swaps
    assert set(_answer_buttons(page, second).values()) == {"false"}  # nothing chosen yet on the next line

    refused = admin_client.post(
        reverse("runs:review_line", args=[done_run.pk, second.pk]), {"label": "yes"}, HTTP_HX_REQUEST="true"
    )
    assert refused.status_code == 422  # htmx swaps the row back in, with what to fix: not the whole page
    assert f'<tr id="rl-{second.pk}">' in refused.content.decode() and "<html" not in refused.content.decode()
    assert "Choose the label you would give the line." in read(refused.content)


def test_it_styles_the_chosen_answer_as_pressed(admin_client, done_run):
    rl = done_run.lines.filter(in_review=True).first()
    admin_client.post(reverse("runs:review_line", args=[done_run.pk, rl.pk]), {"label": "both_wrong"})
    page = admin_client.get(reverse("runs:review", args=[done_run.pk])).content.decode()
    assert _answer_buttons(page, rl)["both_wrong"] == "true"
    assert 'class="inline review-answers"' in page
    css = (Path(settings.BASE_DIR) / "static" / "css" / "oncore.css").read_text()
    assert '.review-answers button[aria-pressed="true"]' in css


def test_it_comes_back_to_the_same_view_after_a_plain_answer(admin_client, done_run):
    rl = done_run.lines.filter(in_review=True).first()
    page = admin_client.get(reverse("runs:review", args=[done_run.pk]), {"show": "todo"}).content.decode()
    assert 'name="back" value="show=todo"' in page
    answer = admin_client.post(
        reverse("runs:review_line", args=[done_run.pk, rl.pk]),
        {"label": rl.label, "back": "show=todo&evil=1"},
    )
    assert answer.status_code == 302
    assert answer["Location"] == reverse("runs:review", args=[done_run.pk]) + f"?show=todo#rl-{rl.pk}"
    after = read(admin_client.get(answer["Location"]).content)
    assert "1 of 4 lines reviewed" in after


# ---------------------------------------------------------------- at most 120 lines


def test_it_refuses_to_start_with_a_review_sample_over_120_lines():
    """ONCORE_RUN_REVIEW_LINES cannot promise more than the description's 120: the server does not start, and the
    message names the variable."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "oncore.settings", "DEBUG": "1"}
    environment.pop("DATABASE_URL", None)
    code = "import django; django.setup(); from django.conf import settings; print(settings.ONCORE['RUN_REVIEW_LINES'])"
    started = subprocess.run(
        [sys.executable, "-c", code],
        cwd=settings.BASE_DIR,
        env={**environment, "ONCORE_RUN_REVIEW_LINES": "121"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode != 0
    assert "ONCORE_RUN_REVIEW_LINES=121 must be at most 120." in started.stderr
    allowed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=settings.BASE_DIR,
        env={**environment, "ONCORE_RUN_REVIEW_LINES": "120"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.strip() == "120"


def test_it_sets_aside_at_most_120_lines_for_review_whatever_the_run_asks(api, org, tenant, world, no_judge):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Large", controls_per_flag=0)
    # A setting forced past the limit (as a test or a shell could) does not raise it: the run asks for 120.
    with override_settings(ONCORE={**settings.ONCORE, "RUN_REVIEW_LINES": 500}):
        call = world.call([Say("hello")])
        started = run_actions.do_start_run(bank, [call.pk], candidate=cand, confirmed=True)
    assert started.review_size == 120
    run_actions.do_cancel_run(started)

    # A run whose row says more (an older run, an edit) still sets aside 120 of its 130 judge-labelled lines.
    call = Call.objects.create(
        tenant=tenant, started_at=datetime.now(UTC), recorded=True, live_transcriber=world.live
    )
    lines = Line.objects.bulk_create(
        Line(call=call, position=i, speaker="caller", text=f"line {i}", start_s=i, end_s=i + 0.5)
        for i in range(130)
    )
    run = Run.objects.create(
        organization=org,
        bank=bank,
        bank_name=bank.name,
        candidate=cand,
        seed=7,
        review_size=500,
        status=Run.JUDGING,
    )
    RunLine.objects.bulk_create(
        RunLine(
            run=run,
            line=line,
            position=i,
            compared=True,
            differs=True,
            live_text=line.text,
            candidate_text="something else",
            label=(RunLine.SAME_MEANING, RunLine.BOTH_WRONG)[i % 2],
            label_source=RunLine.BY_JUDGE,
        )
        for i, line in enumerate(lines)
    )
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    assert api.get(f"/runs/{run.pk}").json()["review"]["sample"] == 120
    assert api.get(f"/runs/{run.pk}/review").json()["count"] == 120


# ---------------------------------------------------------------- blind on every surface


def _awaiting(run) -> RunLine:
    """A line of the review sample labelled by the judge, with its reasoning, not reviewed yet."""
    rl = run.lines.filter(in_review=True, label_source=RunLine.BY_JUDGE).exclude(reasoning="").first()
    assert rl is not None and not rl.human_label
    return rl


def test_a_line_awaiting_review_shows_its_label_nowhere(admin_client, api, done_run):
    rl = _awaiting(done_run)
    word = api_label(rl.label)

    item = next(i for i in api.get(f"/runs/{done_run.pk}/lines").json()["items"] if i["id"] == rl.pk)
    assert (item["label"], item["label_source"], item["reasoning"], item["pattern_id"]) == (
        None,
        None,
        "",
        None,
    )
    under_its_label = api.get(f"/runs/{done_run.pk}/lines", {"label": word}).json()["items"]
    assert rl.pk not in [i["id"] for i in under_its_label]  # listed under its label would tell it
    in_sample = api.get(f"/runs/{done_run.pk}/lines", {"label": "review"}).json()["items"]
    assert [i["label"] for i in in_sample if i["id"] == rl.pk] == [None]

    rows = list(csv.DictReader(io.StringIO(b"".join(api.get(f"/runs/{done_run.pk}/lines.csv")).decode())))
    row = next(r for r in rows if r["line_id"] == str(rl.line_id))
    assert (row["label"], row["label_source"], row["reasoning"], row["pattern"]) == ("", "", "", "")

    page = admin_client.get(reverse("runs:detail", args=[done_run.pk])).content.decode()
    cells = read(re.search(rf'<tr id="rl-{rl.pk}">.*?</tr>', page, re.S).group(0))
    assert "awaiting review" in cells and rl.reasoning not in cells
    filtered = admin_client.get(
        reverse("runs:detail", args=[done_run.pk]), {"label": rl.label}
    ).content.decode()
    assert f'id="rl-{rl.pk}"' not in filtered
    assert "of the review sample are not listed under a label until reviewed" in read(filtered, "Lines")

    # Reviewed, it shows its label everywhere again.
    api.post(f"/runs/{done_run.pk}/review/{rl.pk}", {"label": word})
    item = next(i for i in api.get(f"/runs/{done_run.pk}/lines").json()["items"] if i["id"] == rl.pk)
    assert (item["label"], item["reasoning"]) == (word, rl.reasoning)
    under_its_label = api.get(f"/runs/{done_run.pk}/lines", {"label": word}).json()["items"]
    assert rl.pk in [i["id"] for i in under_its_label]


def test_the_first_answer_stands_and_a_later_one_is_its_correction(admin_client, api, done_run):
    rl = _awaiting(done_run)
    wrong = next(label for label in ("same_meaning", "both_wrong") if label != rl.label)
    first = api.post(f"/runs/{done_run.pk}/review/{rl.pk}", {"label": wrong}).json()
    assert (first["human_label"], first["review_agrees"], first["correction"]) == (wrong, False, None)

    # Shown the label, the reviewer answers again with it: recorded beside the first, which still counts.
    again = api.post(f"/runs/{done_run.pk}/review/{rl.pk}", {"label": api_label(rl.label)}).json()
    assert (again["human_label"], again["review_agrees"]) == (wrong, False)
    assert again["correction"] == api_label(rl.label) and again["corrected_at"]
    review = api.get(f"/runs/{done_run.pk}").json()["review"]
    assert review["agrees"] == 0 and review["reviewed"] == 1

    page = admin_client.get(reverse("runs:review", args=[done_run.pk])).content.decode()
    row = re.search(rf'<tr id="rl-{rl.pk}">.*?</tr>', page, re.S).group(0)
    assert _answer_buttons(page, rl)[rl.label] == "true"  # the latest answer is the one pressed
    assert "✗ you disagree" in read(row) and "stands" in read(row) and "is recorded beside it" in read(row)
    rows = list(csv.DictReader(io.StringIO(b"".join(api.get(f"/runs/{done_run.pk}/lines.csv")).decode())))
    row = next(r for r in rows if r["line_id"] == str(rl.line_id))
    assert (row["review"], row["review_label"], row["review_correction"]) == ("disagree", wrong, rl.label)
