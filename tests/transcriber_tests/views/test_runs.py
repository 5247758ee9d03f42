"""Run pages: the runs of a bank, a new run with its estimate, the run page and its polling, review, CSV."""

# ruff: noqa: F811 (tests take the imported fixtures as parameters)

import csv
import io

import pytest
from django.urls import reverse
from django.utils.html import escape

from oncore.templatetags.oncore_tags import pct_number
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run, RunLine
from transcriber_tests.queries import runs as run_queries
from transcriber_tests.work import runs as pipeline
from transcriber_tests.work import tasks as run_tasks

from ..support import Say, read

pytestmark = pytest.mark.django_db


def test_it_starts_a_run_from_a_call_after_showing_the_estimate(admin_client, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    response = admin_client.get(reverse("runs:from_call", args=[call_a.pk]))
    assert response.status_code == 302 and response["Location"] == reverse("runs:new", args=[bank.pk]) + (
        f"?call={call_a.pk}"
    )
    page = admin_client.get(response["Location"])
    assert page.status_code == 200
    assert f'value="{call_a.pk}" id="call-{call_a.pk}" checked' in page.content.decode()
    assert "The bank's leader is Run cand." in page.content.decode()

    estimate = admin_client.post(
        reverse("runs:new", args=[bank.pk]), {"calls": [call_a.pk], "more_calls": f"{call_b.pk}"}
    )
    body = estimate.content.decode()
    assert estimate.status_code == 200 and "Confirm and start" in body
    assert "judge not configured: no tokens" in body
    assert "Lines to transcribe 6 and 1 already transcribed (free)" in read(body, "Estimate")
    assert not Run.objects.exists()

    started = admin_client.post(
        reverse("runs:new", args=[bank.pk]), {"more_calls": f"{call_a.pk},{call_b.pk}", "confirmed": "on"}
    )
    run = Run.objects.get()
    assert started.status_code == 302 and started["Location"] == reverse("runs:detail", args=[run.pk])
    assert [c.pk for c in run.calls.order_by("run_calls__position")] == [call_a.pk, call_b.pk]
    assert run.created_by.username == "ada"

    again = admin_client.post(
        reverse("runs:new", args=[bank.pk]), {"more_calls": f"{call_a.pk}", "confirmed": "on"}
    )
    assert again.status_code == 422
    assert (
        f"Run {run.pk}" in again.content.decode()
        and reverse("runs:detail", args=[run.pk]) in again.content.decode()
    )


def test_it_refuses_more_than_ten_calls_on_the_form(admin_client, run_setup, no_judge):
    bank, *_ = run_setup
    response = admin_client.post(
        reverse("runs:new", args=[bank.pk]), {"more_calls": ",".join(str(i) for i in range(1, 12))}
    )
    assert response.status_code == 422 and "at most 10 calls" in response.content.decode()


def test_it_shows_a_finished_run_with_counts_patterns_verdict_calibration_and_review(admin_client, done_run):
    response = admin_client.get(reverse("runs:detail", args=[done_run.pk]))
    body = response.content.decode()
    assert response.status_code == 200
    assert 'aria-label="Fixes"><header><h2>Fixes</h2></header><p class="big">2<' in body
    assert 'aria-label="Breaks"><header><h2>Breaks</h2></header><p class="big">2<' in body
    assert "85.7%" in body and "6 of 7 lines came out the same" in body
    assert "drops digits" in body and "It would fix the names" in body
    assert "0 of 4 lines reviewed" in body
    assert reverse("tt:line_audio", args=[done_run.lines.first().line_id]) in body
    assert "hx-trigger" not in body  # nothing left to poll

    def breaks():
        return admin_client.get(reverse("runs:detail", args=[done_run.pk]), {"label": "live_right"}).content

    # Every break is in the review sample, awaiting review: the review is blind, so none is listed as a break.
    assert "my number is 0 8 7 1 2" not in breaks().decode() and "No lines match" in read(breaks())
    for rl in done_run.lines.filter(in_review=True):
        admin_client.post(reverse("runs:review_line", args=[done_run.pk, rl.pk]), {"label": rl.label})
    assert "my number is 0 8 7 1 2" in breaks().decode() and "thank you by" not in breaks().decode()


def test_it_polls_progress_until_the_run_is_done(admin_client, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run = run_actions.do_start_run(bank, [call_a.pk], confirmed=True)
    pipeline.advance(run.pk)
    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert 'hx-trigger="every 2s"' in page and "Transcribing: 1 of" in page
    url = reverse("runs:detail", args=[run.pk]) + "?fragment=progress"
    assert admin_client.get(url, HTTP_HX_REQUEST="true").status_code == 200
    run_tasks.drain_run(run.pk, max_seconds=60)
    done = admin_client.get(url, HTTP_HX_REQUEST="true")
    assert done.status_code == 286
    assert "judge not configured" in done.content.decode()


def test_it_cancels_a_run_from_its_page(admin_client, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run = run_actions.do_start_run(bank, [call_a.pk], confirmed=True)
    response = admin_client.post(reverse("runs:cancel", args=[run.pk]), follow=True)
    assert "cancelled" in response.content.decode()
    assert Run.objects.get(pk=run.pk).status == Run.CANCELLED


def test_it_reviews_blind_then_shows_the_label_given_agreement_and_kappa(admin_client, done_run):
    sample = list(done_run.lines.filter(in_review=True).order_by("position"))
    page = admin_client.get(reverse("runs:review", args=[done_run.pk])).content.decode()
    assert all(f'id="rl-{rl.pk}"' in page for rl in sample)
    assert reverse("tt:line_audio", args=[sample[0].line_id]) in page
    # Blind: neither the label given nor the judge's reasoning shows before the reviewer labels the line.
    assert all(escape(rl.reasoning) not in page for rl in sample)
    assert page.count("Shown once you have given yours.") == len(sample)

    row = admin_client.post(
        reverse("runs:review_line", args=[done_run.pk, sample[0].pk]),
        {"label": sample[0].label},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert "✓ you agree" in row and escape(sample[0].reasoning) in row
    other = next(label for label, _ in RunLine.LABELS if label != sample[1].label)
    plain = admin_client.post(reverse("runs:review_line", args=[done_run.pk, sample[1].pk]), {"label": other})
    assert plain.status_code == 302
    assert RunLine.objects.get(pk=sample[1].pk).human_label == other
    summary = run_queries.run_summary(done_run)
    assert (summary.reviewed, summary.review_agrees, pct_number(summary.judge_human_agreement)) == (
        2,
        1,
        50.0,
    )
    run_page = admin_client.get(reverse("runs:detail", args=[done_run.pk])).content.decode()
    assert "agreement with your labels <strong>50.0%</strong>" in run_page
    assert "judge prompts judge-3" in run_page and "Cohen" in run_page
    (version,) = run_queries.review_agreement(done_run)
    assert version.prompt_version == "judge-3" and version.agreement.n == 2

    refused = admin_client.post(
        reverse("runs:review_line", args=[done_run.pk, sample[2].pk]), {"label": "yes"}
    )
    assert refused.status_code == 302 and RunLine.objects.get(pk=sample[2].pk).human_label == ""
    outside = done_run.lines.filter(in_review=False).first()
    admin_client.post(reverse("runs:review_line", args=[done_run.pk, outside.pk]), {"label": "same_meaning"})
    assert RunLine.objects.get(pk=outside.pk).review_agrees is None


def test_it_exports_every_line_of_the_run_with_its_label(admin_client, done_run):
    for rl in done_run.lines.filter(in_review=True):  # reviewed: the labels are no longer blind
        admin_client.post(reverse("runs:review_line", args=[done_run.pk, rl.pk]), {"label": rl.label})
    response = admin_client.get(reverse("runs:export", args=[done_run.pk]))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    assert len(rows) == 7
    by_text = {r["live_text"]: r for r in rows}
    assert by_text["my number is 0 8 7 1 2"]["label"] == "live_right"
    assert by_text["my number is 0 8 7 1 2"]["pattern"] == "drops digits"
    assert by_text["Shivon table for for at 830"]["label_source"] == "flag"
    assert by_text["Shivon table for for at 830"]["expected_text"] == "Siobhan, table for four at 830"
    assert by_text["under Fitzgerald"]["replay_matches"] == "no"


def test_it_lists_runs_per_bank_and_keeps_a_run_reachable_after_its_bank_is_deleted(admin_client, done_run):
    bank = done_run.bank
    url = reverse("runs:bank_runs", args=[bank.pk])
    listing = admin_client.get(url).content.decode()
    assert f"Run {done_run.pk}" in listing and "85.7%" in listing
    actions.do_delete_bank(bank)
    done_run.refresh_from_db()
    assert done_run.bank is None and done_run.bank_name == "English"
    assert admin_client.get(url).status_code == 404
    assert not Run.objects.filter(bank__isnull=False).exists()
    page = admin_client.get(reverse("runs:detail", args=[done_run.pk]))
    assert (
        page.status_code == 200
        and 'English <span class="badge muted">deleted</span>' in page.content.decode()
    )


def test_it_keeps_the_runs_list_and_run_page_to_a_fixed_number_of_queries(
    admin_client, done_run, run_setup, django_assert_max_num_queries
):
    bank, cand, call_a, call_b = run_setup
    second = run_actions.do_start_run(bank, [call_b.pk], confirmed=True)
    run_tasks.drain_run(second.pk, max_seconds=60)
    with django_assert_max_num_queries(8):
        assert admin_client.get(reverse("runs:bank_runs", args=[done_run.bank_id])).status_code == 200
    with django_assert_max_num_queries(12):
        assert admin_client.get(reverse("runs:detail", args=[done_run.pk])).status_code == 200
    with django_assert_max_num_queries(9):
        assert admin_client.get(reverse("runs:review", args=[done_run.pk])).status_code == 200


def _urls(run, bank):
    return [
        ("get", reverse("runs:bank_runs", args=[bank.pk])),
        ("get", reverse("runs:new", args=[bank.pk])),
        ("get", reverse("runs:detail", args=[run.pk])),
        ("get", reverse("runs:review", args=[run.pk])),
        ("get", reverse("runs:export", args=[run.pk])),
        ("post", reverse("runs:cancel", args=[run.pk])),
        ("post", reverse("runs:retry_judge", args=[run.pk])),
        ("post", reverse("runs:review_line", args=[run.pk, run.lines.first().pk])),
    ]


def test_it_shows_members_a_403(member_client, done_run):
    for method, url in _urls(done_run, done_run.bank):
        assert getattr(member_client, method)(url).status_code == 403, url


def test_it_hides_runs_of_other_organizations(other_client, done_run):
    for method, url in _urls(done_run, done_run.bank):
        assert getattr(other_client, method)(url).status_code == 404, url


def test_it_refuses_the_wrong_method(admin_client, done_run):
    assert admin_client.get(reverse("runs:cancel", args=[done_run.pk])).status_code == 405
    assert admin_client.get(reverse("runs:retry_judge", args=[done_run.pk])).status_code == 405
    assert (
        admin_client.get(
            reverse("runs:review_line", args=[done_run.pk, done_run.lines.first().pk])
        ).status_code
        == 405
    )
    assert admin_client.post(reverse("runs:detail", args=[done_run.pk])).status_code == 405
    assert admin_client.post(reverse("runs:bank_runs", args=[done_run.bank_id])).status_code == 405
    assert admin_client.put(reverse("runs:new", args=[done_run.bank_id])).status_code == 405


def test_it_shows_lines_labelled_by_rule_and_the_judge_requests_they_saved(
    admin_client, org, world, llm_server
):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Rules", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    by_rule = world.call([Say("a table for four", candidate="a table for 4")])
    judged = world.call([Say("under Fitzgerald", candidate="under fitz gerald")])
    run = run_actions.do_start_run(bank, [by_rule.pk, judged.pk], candidate=cand, confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    for rl in run.lines.filter(in_review=True):  # reviewed: their labels and reasoning are no longer blind
        admin_client.post(reverse("runs:review_line", args=[run.pk, rl.pk]), {"label": rl.label})

    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert "<dt>Labelled by rule</dt><dd>1 <span" in page and "(1 judge request saved)" in page
    assert escape('Numbers: "4" = "four".') in page and 'title="The texts read the same' in page
    rule_lines = admin_client.get(reverse("runs:detail", args=[run.pk]), {"label": "rule"}).content.decode()
    assert "a table for four" in rule_lines and "under Fitzgerald" not in rule_lines

    estimate = admin_client.post(
        reverse("runs:new", args=[bank.pk]),
        {"more_calls": f"{by_rule.pk},{judged.pk}", "candidate": cand.pk},
    ).content.decode()
    assert "About 1 differing line will read the same" in estimate and "in about 1 request" in estimate
