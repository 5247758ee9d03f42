"""Full-call runs end to end: a local STT server, the per-org queue run in-process, and the local Messages API
server for the judge."""

# ruff: noqa: F811 (tests take the imported fixtures as parameters)

import random
from decimal import Decimal

import pytest
from django.db.models import Count
from django.urls import reverse

from oncore.templatetags.oncore_tags import pct_number
from tests.llm_server import error
from transcriber_tests import actions, errors, handles, judge
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.errors import EstimateNotConfirmed, NotFound, RunInProgress
from transcriber_tests.models import Run, RunLine, RunPattern, Transcription
from transcriber_tests.queries import runs as run_queries
from transcriber_tests.work import runs as pipeline
from transcriber_tests.work import tasks
from transcriber_tests.work import tasks as run_tasks

from ..support import Say, caller_lines, scripted_judge, shown_lines

pytestmark = pytest.mark.django_db


def start(bank, calls, **kwargs):
    """Start a confirmed run over calls (objects or ids)."""
    return run_actions.do_start_run(bank, [getattr(c, "pk", c) for c in calls], confirmed=True, **kwargs)


def test_it_runs_whole_calls_with_labels_patterns_verdict_review_sample_and_calibration(
    run_setup, llm_server, world
):
    bank, cand, call_a, call_b = run_setup
    llm_server.responder = scripted_judge
    requests_before = world.server.requests.count("cand")

    run = start(bank, [call_a, call_b])
    assert run.candidate == cand  # the bank's leader by default
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE

    run.refresh_from_db()
    assert run.judge_status == Run.JUDGE_DONE
    lines = {rl.live_text: rl for rl in run.lines.all()}
    assert len(lines) == 7  # caller lines only
    assert lines["Shivon table for for at 830"].label == RunLine.CANDIDATE_RIGHT
    assert lines["Shivon table for for at 830"].label_source == RunLine.BY_FLAG
    assert lines["yes that's right"].differs is False and lines["yes that's right"].label == ""
    assert lines["I'd like to book for Friday"].differs is False
    assert lines["my number is 0 8 7 1 2"].label == RunLine.LIVE_RIGHT
    assert lines["my number is 0 8 7 1 2"].reasoning == "Judged 'my number is 0 8 7'."
    assert lines["thank you by"].label == RunLine.CANDIDATE_RIGHT
    assert lines["under Fitzgerald"].label == RunLine.LIVE_RIGHT
    assert lines["four people"].label == RunLine.SAME_MEANING

    summary = run_queries.run_summary(run)
    assert (summary.fixes, summary.breaks, summary.same_meaning, summary.both_wrong) == (2, 2, 1, 0)
    assert summary.identical == 2 and summary.unlabelled == 0
    assert (
        summary.transcriptions == summary.transcriptions_finished == 14
    )  # 7 candidate, 7 calibration replays

    pattern = RunPattern.objects.get(run=run)
    assert (pattern.name, pattern.count) == ("drops digits", 2)
    assert {rl.live_text for rl in pattern.lines.all()} == {"my number is 0 8 7 1 2", "under Fitzgerald"}
    assert run.verdict.startswith("It would fix the names")

    # Every judge-labelled line (4 of them, under 120) is in the review sample; the flagged one is not.
    assert set(run.lines.filter(in_review=True).values_list("label_source", flat=True)) == {RunLine.BY_JUDGE}
    assert summary.review_sample == 4
    # Calibration: 7 lines under the default 20, one replay came out differently.
    assert summary.calibration_sampled == 7
    assert (summary.calibration_matched, summary.calibration_compared) == (6, 7)
    assert pct_number(summary.audio_path_agreement) == pytest.approx(85.7)
    assert not summary.calibration_low

    # The flagged line was already transcribed by the candidate: not paid for again.
    assert world.server.requests.count("cand") - requests_before == 6
    assert Transcription.objects.filter(transcriber=cand).count() == 7
    assert run.judge_input_tokens > 0 and run.judge_cost > 0 and run.judge_model
    # The two differing lines of each call went to the judge together: two label requests for four lines.
    labels = [b for b in llm_server.bodies if b["tool_choice"]["name"] == judge.LABEL_TOOL_NAME]
    assert len(labels) == run.judge_label_requests == summary.judge_requests == 2
    assert {rl.label_prompt_version for rl in run.lines.filter(label_source=RunLine.BY_JUDGE)} == {
        judge.JUDGE_PROMPT_VERSION
    }


def test_it_runs_without_a_judge_key_and_says_what_is_missing(run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run = start(bank, [call_a, call_b])
    assert run.estimate["judge_configured"] is False and run.estimate["judge_cost"] == "0.000000"
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    run.refresh_from_db()
    assert run.judge_status == Run.JUDGE_NOT_CONFIGURED
    assert run.judge_error == "the judge is not configured on this server"
    summary = run_queries.run_summary(run)
    assert summary.compared == 7
    assert summary.fixes == 1  # the flagged line, scored against what was said
    assert summary.unlabelled == 4  # differing lines nobody invented a label for
    assert summary.review_sample == 0 and not run.patterns.exists() and run.verdict == ""
    assert summary.calibration_compared == 7


def test_it_counts_a_flagged_line_where_neither_matches_as_both_wrong(org, world, no_judge):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="B", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call([Say("table for for", candidate="table for for")])
    actions.do_flag_line(caller_lines(call)[0], "table for four", bank=bank)
    tasks.drain()
    run = start(bank, [call])
    run_tasks.drain_run(run.pk, max_seconds=30)
    line = run.lines.get()
    assert (line.differs, line.label, line.candidate_match, line.live_match) == (
        False,
        RunLine.BOTH_WRONG,
        False,
        False,
    )


def test_it_shows_the_estimate_before_starting(run_setup, llm_server):
    bank, cand, call_a, call_b = run_setup
    with pytest.raises(EstimateNotConfirmed) as refused:
        run_actions.do_start_run(bank, [call_a.pk, call_b.pk])
    detail = refused.value.detail
    assert detail["lines"] == 6 and detail["already_transcribed"] == 1  # 7 lines, the flagged one transcribed
    estimate = run_actions.estimate_run(bank, [call_a.pk, call_b.pk])
    minutes = Decimal(str(estimate.audio_seconds)) / 60
    assert estimate.audio_cost == (minutes * Decimal("0.006")).quantize(Decimal("0.000001"))
    assert estimate.calibration_lines == 7 and estimate.calibration_cost > 0
    assert estimate.judge_configured and 0 < estimate.judge_input_tokens <= estimate.max_judge_input_tokens
    assert estimate.expected_judged_lines == 6  # no control lines to learn from: every unflagged line
    assert estimate.total_cost == estimate.audio_cost + estimate.calibration_cost + estimate.judge_cost
    assert not Run.objects.exists()


def test_it_allows_one_run_per_organization_and_names_the_one_in_progress(run_setup, no_judge, other_org):
    bank, cand, call_a, call_b = run_setup
    first = start(bank, [call_a])
    with pytest.raises(RunInProgress) as refused:
        start(bank, [call_b])
    assert f"Run {first.pk}" in refused.value.message and refused.value.detail == {
        "run": first.pk,
        "status": "queued",
    }
    run_actions.do_cancel_run(first)
    second = start(bank, [call_b])
    assert second.status == Run.QUEUED


def test_it_refuses_calls_it_cannot_run(run_setup, no_judge, world, other_tenant):
    bank, cand, call_a, call_b = run_setup
    with pytest.raises(errors.TooManyCalls):
        start(bank, [call_a.pk] * 1 + list(range(10_000, 10_010)))
    with pytest.raises(NotFound):
        start(bank, [call_a, call_b.pk + 1000])
    unrecorded = world.call([Say("hello")], recorded=False)
    with pytest.raises(actions.errors.LineNotRecorded):
        start(bank, [call_a, unrecorded])
    with pytest.raises(errors.NoCallsChosen):
        run_actions.do_start_run(bank, [], confirmed=True)
    empty_bank = actions.do_create_bank(bank.organization, name="Empty")
    with pytest.raises(errors.NoCandidate):
        start(empty_bank, [call_a])
    assert not Run.objects.exists()


def test_it_cancels_a_run_mid_transcription_and_drops_its_queued_work(run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run = start(bank, [call_a, call_b])
    assert pipeline.advance(run.pk) == "waiting"
    assert Transcription.objects.filter(transcriber=cand, status=Transcription.QUEUED).count() > 0
    run_actions.do_cancel_run(run)
    assert run.status == Run.CANCELLED and run.finished_at
    # Queued work nobody else needs is dropped; the flagged line's transcription is kept.
    assert not Transcription.objects.filter(status=Transcription.QUEUED).exists()
    assert Transcription.objects.filter(transcriber=cand, status=Transcription.DONE).count() == 1
    assert pipeline.advance(run.pk) == "skipped"
    with pytest.raises(errors.RunNotActive):
        run_actions.do_cancel_run(run)
    assert start(bank, [call_a]).status == Run.QUEUED


def test_it_stops_labelling_when_cancelled_mid_judging(run_setup, llm_server, monkeypatch):
    bank, cand, call_a, call_b = run_setup
    run = start(bank, [call_a, call_b])
    real = judge.label_lines
    calls = []

    def label_then_cancel(**kwargs):
        calls.append(kwargs)
        result = real(**kwargs)
        run_actions.do_cancel_run(run)
        return result

    monkeypatch.setattr(judge, "label_lines", label_then_cancel)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.CANCELLED
    assert len(calls) == 1  # the first call's two lines, in one request
    assert run.lines.filter(label_source=RunLine.BY_JUDGE).count() <= 2
    assert not run.patterns.exists() and Run.objects.get(pk=run.pk).verdict == ""


class WorkerKilled(BaseException):
    """Stands in for a worker process dying: nothing in the step catches it."""


def test_it_finishes_without_duplicate_rows_after_a_worker_stops_mid_run(run_setup, llm_server, monkeypatch):
    bank, cand, call_a, call_b = run_setup
    llm_server.responder = scripted_judge
    run = start(bank, [call_a, call_b])
    assert pipeline.advance(run.pk) == "waiting"
    assert pipeline.begin(run.pk) == "skipped"  # a second delivery queues nothing twice
    tasks.drain()
    assert pipeline.advance(run.pk) == "judging"
    real, labelled = judge.label_lines, []

    def dies_on_the_second(**kwargs):
        if len(labelled) == 1:
            raise WorkerKilled()
        labelled.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(judge, "label_lines", dies_on_the_second)
    with pytest.raises(WorkerKilled):
        pipeline.advance(run.pk)
    run.refresh_from_db()
    assert run.status == Run.JUDGING and run.judge_claimed_at is not None
    assert pipeline.advance(run.pk) == "skipped"  # the dead worker's claim holds until its lease runs out

    monkeypatch.setattr(judge, "label_lines", real)
    Run.objects.filter(pk=run.pk).update(judge_claimed_at=run.judge_claimed_at.replace(year=2000))
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    assert pipeline.advance(run.pk) == "skipped"

    assert run.lines.count() == 7
    assert not run.lines.values("line").annotate(n=Count("id")).filter(n__gt=1).exists()
    assert RunPattern.objects.filter(run=run).count() == 1
    assert run_queries.run_summary(run).unlabelled == 0
    assert Transcription.objects.filter(transcriber=cand).count() == 7
    assert (
        not Transcription.objects.values("line", "transcriber")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .exists()
    )
    labels = [b for b in llm_server.bodies if b["tool_choice"]["name"] == judge.LABEL_TOOL_NAME]
    assert len(labels) == 2  # one request before the stop, one after: no line labelled twice


def test_it_keeps_what_it_has_when_the_judge_fails_mid_run_and_can_retry(run_setup, llm_server, settings):
    settings.ANTHROPIC_MAX_RETRIES = 0
    bank, cand, call_a, call_b = run_setup
    answers = iter([scripted_judge, lambda body: error(500)])
    llm_server.responder = lambda body: next(answers)(body)
    run = start(bank, [call_a, call_b])
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    run.refresh_from_db()
    assert run.judge_status == Run.JUDGE_FAILED
    assert "The judge failed: the judge's service failed (500)" in run.judge_error
    assert "2 differing lines left unlabelled" in run.judge_error
    summary = run_queries.run_summary(run)
    assert summary.compared == 7 and summary.breaks == 1 and summary.unlabelled == 2
    assert summary.review_sample == 2

    llm_server.responder = scripted_judge
    run_actions.do_retry_judge(run)
    assert run.status == Run.JUDGING
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    run.refresh_from_db()
    assert run.judge_status == Run.JUDGE_DONE and run.judge_error == ""
    assert run_queries.run_summary(run).unlabelled == 0 and run.verdict
    with pytest.raises(errors.JudgeNotFailed):
        run_actions.do_retry_judge(run)


def test_it_compares_as_soon_as_the_runs_last_transcription_finishes(run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run = start(bank, [call_a])
    pipeline.advance(run.pk)
    pending = list(
        Transcription.objects.filter(status__in=Transcription.ACTIVE)
        .order_by("id")
        .values_list("pk", flat=True)
    )
    assert len(pending) > 1
    handles.pump(run.organization_id)
    first = Transcription.objects.filter(status=Transcription.RUNNING).order_by("id").first()
    tasks.transcribe(first.pk)
    assert run_tasks.transcription_finished(first.pk) == "waiting"
    tasks.drain()
    assert run_tasks.transcription_finished(pending[-1]) == "judging"
    assert Run.objects.get(pk=run.pk).status == Run.JUDGING


def test_it_labels_in_batches_that_hand_on_to_the_next_task(run_setup, llm_server):
    bank, cand, call_a, call_b = run_setup
    run = start(bank, [call_a, call_b])
    pipeline.advance(run.pk)
    tasks.drain()
    pipeline.advance(run.pk)
    assert pipeline.judge_step(run.pk, budget_s=0) == "continues"
    run.refresh_from_db()
    assert run.status == Run.JUDGING and run.judge_claimed_at is None
    assert (
        run_queries.run_summary(run).fixes
        + run_queries.run_summary(run).breaks
        + run_queries.run_summary(run).same_meaning
        >= 1
    )
    assert pipeline.advance(run.pk) == "done"


def test_it_replays_a_sample_of_lines_and_warns_when_the_audio_path_agreement_is_low(
    org, world, no_judge, settings, admin_client
):
    settings.ONCORE = {**settings.ONCORE, "RUN_CALIBRATION_LINES": 4}
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="B", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call([Say(f"line {i}", replay=f"lime {i}" if i % 2 else None) for i in range(6)])
    run = start(bank, [call], candidate=cand)
    run_tasks.drain_run(run.pk, max_seconds=60)
    summary = run_queries.run_summary(run)
    assert summary.calibration_sampled == summary.calibration_compared == 4
    assert world.server.requests.count("live") == 4  # only the sample is replayed
    odd = run.lines.filter(calibration=True, position__in=[1, 3, 5]).count()
    assert summary.calibration_matched == 4 - odd
    assert summary.calibration_low is (summary.calibration_matched / 4 < 0.8)

    settings.ONCORE = {**settings.ONCORE, "RUN_CALIBRATION_WARN": 1.01}  # any disagreement at all warns
    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert "Give this run&#x27;s numbers less weight" in page or "Give this run's numbers less weight" in page


def test_it_counts_lines_the_candidate_could_not_transcribe(org, world, no_judge):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="B", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call([Say("hello there"), Say("goodbye")])
    world.server.failing.add("cand")
    run = start(bank, [call], candidate=cand)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    summary = run_queries.run_summary(run)
    assert summary.candidate_failed == 2 and summary.differing == 0 and summary.labelled == 0
    assert "this transcriber is set to fail" in run.lines.first().candidate_error


def test_it_drives_runs_to_their_end_from_the_command_line(run_setup, no_judge, capsys):
    from django.core.management import call_command

    bank, cand, call_a, call_b = run_setup
    run = start(bank, [call_a])
    call_command("run_runs")
    assert capsys.readouterr().out.strip() == f"Run {run.pk}: done."
    call_command("run_runs")
    assert capsys.readouterr().out.strip() == "No queued or running runs."


# ---------------------------------------------------------------- rule labels, the fair judge


def rule_world(org, world):
    """A bank and one call: two lines that read the same by rule, one the judge must label."""
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Rules", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call(
        [
            Say("Tuesday at ten forty five works for me.", candidate="Tuesday at 10:45 works for me"),
            Say("The 12th of March, 1991", candidate="The twelfth of March, nineteen ninety one."),
            Say("my number is 0 8 7 1 2", candidate="my number is 0 8 7"),
        ]
    )
    return bank, cand, call


def test_it_labels_lines_that_read_the_same_by_rule_without_asking_the_judge(org, world, llm_server):
    bank, cand, call = rule_world(org, world)
    llm_server.responder = scripted_judge
    run = start(bank, [call], candidate=cand)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    lines = {rl.live_text: rl for rl in run.lines.all()}
    time = lines["Tuesday at ten forty five works for me."]
    assert (time.label, time.label_source) == (RunLine.SAME_MEANING, RunLine.BY_RULE)
    assert time.reasoning == 'Times: "10:45" = "ten forty five".'
    date = lines["The 12th of March, 1991"]
    assert date.label_source == RunLine.BY_RULE
    assert date.reasoning == 'Ordinals: "twelfth" = "12th"; years: "nineteen ninety one" = "1991".'
    assert lines["my number is 0 8 7 1 2"].label == RunLine.LIVE_RIGHT  # the judge's
    # The judge was asked about the one line that needed an opinion, alone.
    requests = [b for b in llm_server.bodies if b["tool_choice"]["name"] == judge.LABEL_TOOL_NAME]
    assert len(requests) == 1
    asked = [texts for _, *texts in shown_lines(requests[0])]
    assert asked in (
        [["my number is 0 8 7 1 2", "my number is 0 8 7"]],
        [["my number is 0 8 7", "my number is 0 8 7 1 2"]],
    )
    summary = run_queries.run_summary(run)
    assert (summary.rule_labelled, summary.same_meaning, summary.unlabelled) == (2, 2, 0)
    run.refresh_from_db()
    assert run.judge_calls_saved == 0  # the three lines would have gone in one request anyway
    assert {rl.label_source for rl in run.lines.filter(in_review=True)} == {RunLine.BY_RULE, RunLine.BY_JUDGE}


def test_it_labels_by_rule_and_offers_those_labels_for_review_without_a_judge_key(org, world, no_judge):
    bank, cand, call = rule_world(org, world)
    run = start(bank, [call], candidate=cand)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    summary = run_queries.run_summary(run)
    assert (summary.rule_labelled, summary.unlabelled, summary.review_sample) == (2, 1, 2)
    assert set(run.lines.filter(in_review=True).values_list("label_source", flat=True)) == {RunLine.BY_RULE}


def test_it_counts_the_judge_requests_rule_labels_save(org, world, llm_server):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Rules", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    calls = [
        world.call([Say("a table for four", candidate="a table for 4")]),
        world.call([Say("at half past eight", candidate="at 8:30"), Say("hello", candidate="hallo")]),
    ]
    run = start(bank, calls, candidate=cand)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    run.refresh_from_db()
    summary = run_queries.run_summary(run)
    # The first call's only differing line is labelled by rule: its request is never sent.
    assert (summary.rule_labelled, summary.judge_calls_saved, summary.judge_requests) == (2, 1, 1)
    assert run.judge_label_requests == 1


def test_it_shows_the_judge_each_line_in_an_order_drawn_from_the_runs_seed(org, world, llm_server):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Order", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call([Say(f"line number {i}", candidate=f"lime number {i}") for i in range(20)])
    run = start(bank, [call], candidate=cand)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    stored = {rl.live_text: rl.live_shown_first for rl in run.lines.all()}
    # Both orders occur (twenty lines all alike: one run in half a million; with ten it failed one in 512).
    assert set(stored.values()) == {True, False}
    assert all(rl.live_shown_first == pipeline.shown_first(run.seed, rl.line_id) for rl in run.lines.all())
    for body in llm_server.bodies:
        if body["tool_choice"]["name"] == judge.LABEL_TOOL_NAME:
            for _, first, second in shown_lines(body):
                live = first if first.startswith("line") else second
                assert stored[live] is (first == live)


def test_it_leaves_a_line_the_judge_answers_invalidly_twice_unlabelled_and_goes_on(
    run_setup, llm_server, admin_client
):
    bank, cand, call_a, call_b = run_setup

    def never_labels_the_digits(body):
        answer = scripted_judge(body)
        if body["tool_choice"]["name"] == judge.LABEL_TOOL_NAME:
            for entry, (_, first, second) in zip(answer["labels"], shown_lines(body), strict=True):
                if "0 8 7" in first + second:
                    entry["label"] = "mostly_right"
        return answer

    llm_server.responder = never_labels_the_digits
    run = start(bank, [call_a, call_b])
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    run.refresh_from_db()
    assert run.judge_status == Run.JUDGE_DONE and run.verdict  # judging went on
    digits = run.lines.get(live_text="my number is 0 8 7 1 2")
    assert (
        digits.label == "" and "invalid twice" in digits.label_error and "mostly_right" in digits.label_error
    )
    summary = run_queries.run_summary(run)
    assert (summary.judge_gave_up, summary.unlabelled, summary.breaks) == (1, 1, 1)
    assert run.judge_label_requests == 3  # call A twice (its second asking only for the digits), call B once
    page = admin_client.get(reverse("runs:detail", args=[run.pk]), {"label": "gave_up"}).content.decode()
    assert (
        "Left unlabelled: the judge&#x27;s answer was invalid twice" in page
        and "my number is 0 8 7 1 2" in page
    )


def test_it_counts_rule_labelled_lines_as_free_in_the_estimate(org, world, llm_server):
    bank, cand, call = rule_world(org, world)
    first = start(bank, [call], candidate=cand)
    run_tasks.drain_run(first.pk, max_seconds=60)
    estimate = run_actions.estimate_run(
        bank, [call.pk], cand
    )  # every line is transcribed already: known exactly
    assert estimate.already_transcribed == 3 and estimate.audio_cost == 0
    assert (estimate.expected_rule_lines, estimate.expected_judged_lines, estimate.judge_requests) == (
        2,
        1,
        1,
    )
    assert estimate.judge_input_tokens < estimate.max_judge_input_tokens


def test_it_groups_the_judges_requests_by_the_calls_line_positions_as_the_estimate_does(
    org, world, llm_server
):
    # Caller lines 1 and 14 of a call where the assistant answers every line: 13 caller lines apart, 26 lines of the
    # call apart, beyond the span one label request covers. The estimate counts two requests; so does the run.
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Span", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    says = [Say(f"the blue house number {n}") for n in range(14)]
    says[0] = Say("the blue house", candidate="the blew house")
    says[13] = Say("a red door", candidate="a read door")
    call = world.call(says)
    differing = [ln for ln in caller_lines(call) if ln.text in ("the blue house", "a red door")]
    assert [ln.position for ln in differing] == [0, 26]
    llm_server.responder = scripted_judge
    run = start(bank, [call], candidate=cand)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    labels = [b for b in llm_server.bodies if b["tool_choice"]["name"] == judge.LABEL_TOOL_NAME]
    assert len(labels) == len(pipeline.chunks(differing)) == 2
    assert [len(shown_lines(b)) for b in labels] == [1, 1]


def test_it_estimates_the_judges_tokens_from_the_context_actually_sent(org, world, llm_server):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Ctx", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    short = world.call([Say("hello"), Say("goodbye")])
    long = world.call([Say("hello"), Say("goodbye")])
    long.lines.filter(speaker="assistant").update(
        text="Certainly, let me read that back to you in full. " * 10
    )
    estimate_short = run_actions.estimate_run(bank, [short.pk], cand)
    estimate_long = run_actions.estimate_run(bank, [long.pk], cand)
    assert estimate_long.max_judge_input_tokens > estimate_short.max_judge_input_tokens + 200


def test_it_draws_the_review_sample_from_every_label():
    pool = {"live_right": set(range(100)), "both_wrong": {1000, 1001}, "same_meaning": set(range(200, 210))}
    chosen = pipeline.stratified_sample(pool, 8, random.Random(1))
    by_label = {label: len(set(chosen) & items) for label, items in pool.items()}
    assert by_label == {"both_wrong": 2, "live_right": 3, "same_meaning": 3} and len(set(chosen)) == 8
    assert len(pipeline.stratified_sample(pool, 500, random.Random(1))) == 112
