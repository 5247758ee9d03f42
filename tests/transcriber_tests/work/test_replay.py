"""The flag -> transcribe -> score pipeline, end to end through real HTTP engines and the queue functions."""

import random

import pytest

from tests.fixtures import make_call
from transcriber_tests import actions, errors, handles
from transcriber_tests.lib import scoring
from transcriber_tests.models import Bank, ControlLine, Flag, Score, Transcription
from transcriber_tests.work import replay, tasks

pytestmark = pytest.mark.django_db


def caller_lines(call):
    return list(call.lines.filter(speaker="caller").order_by("position"))


def outcomes_for(bank):
    names = [c.transcriber.slug for c in bank.candidates.select_related("transcriber")]
    result = []
    for s in Score.objects.filter(flag__bank=bank, source=Score.CANDIDATE).select_related("transcriber"):
        line_score = (
            None
            if s.failed
            else scoring.score_line(
                s.control.expected_text if s.control_id else s.flag.expected_text, s.hypothesis
            )
        )
        result.append(scoring.Outcome(s.transcriber.slug, (s.flag_id, s.control_id), line_score))
    return scoring.summarize(result, names, bank.threshold)


def test_it_scores_a_flag_with_every_candidate_and_the_live_transcript(bank, recorded_call):
    line = caller_lines(recorded_call)[0]
    flag = actions.do_flag_line(
        line, "Siobhan, table for four at eight thirty", bank=bank, tags=["name", "time"]
    )

    live = Score.objects.get(flag=flag, control=None, source=Score.LIVE)
    assert (live.match, live.wer) == (False, pytest.approx(4 / 7))
    assert Transcription.objects.filter(line=line).count() == 2
    assert flag.controls.count() == 1

    tasks.drain()

    scores = {
        s.transcriber.slug: s for s in Score.objects.filter(flag=flag, control=None, source=Score.CANDIDATE)
    }
    assert scores["test-good"].match is True
    assert scores["test-bad"].match is False
    assert scores["test-bad"].wer == pytest.approx(3 / 7)
    assert scores["test-good"].normalizer_version == scoring.NORMALIZER_VERSION
    summary = outcomes_for(bank)
    assert summary.leader == "test-good"
    assert Transcription.objects.get(line=line, transcriber__slug="test-good").cost > 0


def test_it_marks_a_match_that_differs_only_in_capitals_or_punctuation(org, make_transcriber, recorded_call):
    bank = actions.do_create_bank(org, name="Notes", controls_per_flag=0)
    actions.do_add_candidate(
        bank, make_transcriber("caps", "siobhan table for four at eight thirty"), confirmed=True
    )
    flag = actions.do_flag_line(
        caller_lines(recorded_call)[0], "Siobhan, table for four at eight thirty", bank=bank
    )
    tasks.drain()
    score = Score.objects.get(flag=flag, source=Score.CANDIDATE)
    assert score.match and score.case_or_punctuation_only


@pytest.mark.parametrize("controls", [0, 1, 2])
def test_it_samples_the_banks_number_of_controls_from_other_caller_lines(
    org, make_transcriber, recorded_call, controls
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=controls)
    actions.do_add_candidate(bank, make_transcriber("x", "hello"), confirmed=True)
    lines = caller_lines(recorded_call)
    flag = actions.do_flag_line(lines[0], "Siobhan", bank=bank)
    sampled = list(flag.controls.select_related("line"))
    assert len(sampled) == controls
    for control in sampled:
        assert control.line.speaker == "caller" and control.line != lines[0]
        assert control.expected_text == control.line.text
    tasks.drain()
    assert Score.objects.filter(flag=flag, control__isnull=False, source=Score.CANDIDATE).count() == controls
    assert (
        Score.objects.filter(flag=flag, control__isnull=False, source=Score.LIVE, match=True).count()
        == controls
    )


def test_it_gives_fewer_controls_when_the_call_has_fewer_lines(
    org, tenant, live_transcriber, make_transcriber, tmp_path
):
    call = make_call(tenant, live_transcriber, caller_texts=["one line", "another"])
    bank = actions.do_create_bank(org, name="B", controls_per_flag=2)
    flag = actions.do_flag_line(caller_lines(call)[0], "one line", bank=bank, confirm_matches_live=True)
    assert flag.controls.count() == 1


def test_it_samples_controls_at_random(org, make_transcriber, recorded_call):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    lines = caller_lines(recorded_call)
    seen = set()
    for seed in range(12):
        flag = actions.do_flag_line(lines[0], "Siobhan", bank=bank, rng=random.Random(seed))
        seen.add(flag.controls.get().line_id)
        flag.delete()
    assert len(seen) > 1


def test_it_refuses_each_unflaggable_line_with_its_own_error(org, tenant, bank, recorded_call, tmp_path):
    lines = caller_lines(recorded_call)
    assistant_line = recorded_call.lines.get(position=1)
    with pytest.raises(errors.LineNotCaller):
        actions.do_flag_line(assistant_line, "Sure", bank=bank)
    with pytest.raises(errors.ExpectedTextEmpty, match="at least one word"):
        actions.do_flag_line(lines[0], "  ,  ", bank=bank)

    actions.do_flag_line(lines[0], "Siobhan", bank=bank)
    with pytest.raises(errors.FlagExists):
        actions.do_flag_line(lines[0], "Siobhan again", bank=bank)

    no_timing = lines[1]
    no_timing.start_s = no_timing.end_s = None
    no_timing.save()
    with pytest.raises(errors.LineHasNoTiming):
        actions.do_flag_line(no_timing, "yes", bank=bank)

    unrecorded = make_call(tenant, recorded_call.live_transcriber, caller_texts=["hi"], recorded=False)
    with pytest.raises(errors.LineNotRecorded, match=f"Call {unrecorded.pk} was not recorded"):
        actions.do_flag_line(caller_lines(unrecorded)[0], "hi", bank=bank)

    unknown = make_call(tenant, None, caller_texts=["hi"])
    with pytest.raises(errors.LiveTranscriberUnknown):
        actions.do_flag_line(caller_lines(unknown)[0], "hi", bank=bank)

    missing = make_call(tenant, recorded_call.live_transcriber, caller_texts=["hi"])
    missing.recording.storage.delete(missing.recording.name)
    with pytest.raises(errors.RecordingUnavailable, match=f"call {missing.pk}"):
        actions.do_flag_line(caller_lines(missing)[0], "hi", bank=bank)
    assert Flag.objects.count() == 1


def test_it_finds_an_older_calls_live_transcriber_by_name(org, tenant, bank, live_transcriber, tmp_path):
    call = make_call(tenant, None, caller_texts=["hi there"])
    call.live_transcriber_name = live_transcriber.display_name
    call.save()
    flag = actions.do_flag_line(caller_lines(call)[0], "hi there", bank=bank, confirm_matches_live=True)
    assert Score.objects.get(flag=flag, control=None, source=Score.LIVE).transcriber == live_transcriber


def test_it_gives_the_same_rows_when_tasks_run_twice(bank, recorded_call):
    flag = actions.do_flag_line(
        caller_lines(recorded_call)[0], "Siobhan, table for four at eight thirty", bank=bank
    )
    handles.pump(flag.organization_id)
    dispatched = list(Transcription.objects.filter(status=Transcription.RUNNING).values_list("id", flat=True))
    assert dispatched
    for pk in dispatched:
        assert tasks.transcribe(pk) == "done"
        assert tasks.transcribe(pk) == "skipped"
    tasks.drain()
    before = sorted(
        Score.objects.values_list("flag_id", "control_id", "transcriber_id", "source", "match"), key=str
    )
    for pk in Transcription.objects.values_list("id", flat=True):
        tasks.transcribe(pk)
    after = sorted(
        Score.objects.values_list("flag_id", "control_id", "transcriber_id", "source", "match"), key=str
    )
    assert before == after
    assert Score.objects.count() == len(set(before))


def test_it_marks_a_vendor_that_keeps_failing_as_failed_and_leaves_it_out_of_the_division(
    bank, recorded_call, stt_server
):
    stt_server.statuses["bad"] = 500
    flag = actions.do_flag_line(
        caller_lines(recorded_call)[0], "Siobhan, table for four at eight thirty", bank=bank
    )
    tasks.drain()
    failed = Transcription.objects.get(line=flag.line, transcriber__slug="test-bad")
    assert failed.status == Transcription.FAILED
    assert failed.attempts == 4
    assert "500" in failed.error
    score = Score.objects.get(flag=flag, control=None, transcriber__slug="test-bad")
    assert score.failed and not score.match
    row = {r.candidate: r for r in outcomes_for(bank).rows}["test-bad"]
    assert (row.scored, row.failed, row.accuracy) == (0, 2, None)


def test_it_fails_a_rejected_key_at_once_without_retrying(bank, recorded_call, monkeypatch):
    monkeypatch.setenv("ONCORE_TEST_STT_KEY", "wrong")
    flag = actions.do_flag_line(caller_lines(recorded_call)[0], "Siobhan", bank=bank)
    tasks.drain()
    t = Transcription.objects.filter(line=flag.line).first()
    assert t.status == Transcription.FAILED and t.attempts == 1
    assert "wrong" not in t.error


def test_it_keeps_an_unbanked_flag_unscored_until_it_moves_into_a_bank(bank, recorded_call):
    flag = actions.do_flag_line(caller_lines(recorded_call)[0], "Siobhan, table for four at eight thirty")
    assert flag.bank is None
    assert (
        not Score.objects.exists() and not Transcription.objects.exists() and not ControlLine.objects.exists()
    )
    actions.do_move_flag(flag, bank)
    tasks.drain()
    assert Score.objects.filter(flag=flag, control=None, source=Score.CANDIDATE).count() == 2
    assert flag.controls.count() == 1


def test_it_backfills_a_new_candidate_after_the_estimate_is_confirmed(bank, recorded_call, make_transcriber):
    actions.do_flag_line(caller_lines(recorded_call)[0], "Siobhan, table for four at eight thirty", bank=bank)
    tasks.drain()
    third = make_transcriber("third", "Siobhan, table for four at eight thirty", price="0.06")
    estimate = actions.estimate_backfill(bank, third)
    assert estimate.lines == 2 and estimate.cost > 0
    with pytest.raises(errors.EstimateNotConfirmed) as refused:
        actions.do_add_candidate(bank, third)
    assert refused.value.detail["lines"] == 2
    actions.do_add_candidate(bank, third, confirmed=True)
    tasks.drain()
    assert Score.objects.filter(transcriber=third, source=Score.CANDIDATE).count() == 2
    assert actions.estimate_backfill(bank, third).lines == 0


def test_it_does_not_transcribe_a_line_again_for_another_bank(org, bank, recorded_call, stt_server):
    flag = actions.do_flag_line(caller_lines(recorded_call)[0], "Siobhan", bank=bank)
    tasks.drain()
    calls_before = len(stt_server.requests)
    other = actions.do_create_bank(org, name="Other", controls_per_flag=0)
    for candidate in bank.candidates.all():
        actions.do_add_candidate(other, candidate.transcriber, confirmed=True)
    actions.do_move_flag(flag, other)
    tasks.drain()
    assert len(stt_server.requests) == calls_before
    assert Score.objects.filter(flag=flag, control=None, source=Score.CANDIDATE).count() == 2


def test_it_refuses_more_than_eight_candidates_and_duplicates(org, make_transcriber):
    bank = actions.do_create_bank(org, name="Full")
    first = make_transcriber("c0")
    actions.do_add_candidate(bank, first, confirmed=True)
    with pytest.raises(errors.CandidateExists):
        actions.do_add_candidate(bank, first, confirmed=True)
    for i in range(1, 8):
        actions.do_add_candidate(bank, make_transcriber(f"c{i}"), confirmed=True)
    with pytest.raises(errors.BankFull):
        actions.do_add_candidate(bank, make_transcriber("c8"), confirmed=True)


def test_it_reorders_and_removes_candidates(org, make_transcriber):
    bank = actions.do_create_bank(org, name="Order")
    a, b, c = (make_transcriber(n) for n in "abc")
    for t in (a, b, c):
        actions.do_add_candidate(bank, t, confirmed=True)
    actions.do_reorder_candidates(bank, [c.pk, a.pk, b.pk])
    assert list(bank.candidates.values_list("transcriber_id", flat=True)) == [c.pk, a.pk, b.pk]
    actions.do_remove_candidate(bank, a)
    assert list(bank.candidates.values_list("transcriber_id", "position")) == [(c.pk, 0), (b.pk, 1)]
    with pytest.raises(errors.ActionError):
        actions.do_reorder_candidates(bank, [c.pk])


def test_it_rescores_when_the_expected_text_is_edited(bank, recorded_call):
    flag = actions.do_flag_line(caller_lines(recorded_call)[0], "Shivon table for four at 830", bank=bank)
    tasks.drain()
    assert Score.objects.get(flag=flag, control=None, transcriber__slug="test-bad").match
    actions.do_edit_flag(flag, expected_text="Siobhan, table for four at eight thirty", tags=["name"])
    assert not Score.objects.get(flag=flag, control=None, transcriber__slug="test-bad").match
    assert Score.objects.get(flag=flag, control=None, transcriber__slug="test-good").match


def test_it_refuses_banked_work_while_the_queue_is_full_and_accepts_again_after_it_drains(
    settings, org, tenant, bank, live_transcriber, tmp_path
):
    settings.ONCORE = {**settings.ONCORE, "ORG_QUEUE_LIMIT": 3}
    call = make_call(tenant, live_transcriber, caller_texts=["a", "b", "c", "d"])
    lines = caller_lines(call)
    actions.do_flag_line(
        lines[0], "a", bank=bank, confirm_matches_live=True
    )  # 2 candidates x (flag + 1 control) = 4 queued
    with pytest.raises(errors.QueueFull, match="Wait for the queue to drain"):
        actions.do_flag_line(lines[1], "b", bank=bank, confirm_matches_live=True)
    unbanked = actions.do_flag_line(
        lines[1], "b", confirm_matches_live=True
    )  # flags into no bank are still accepted
    assert unbanked.bank is None
    tasks.drain()
    actions.do_flag_line(lines[2], "c", bank=bank, confirm_matches_live=True)


def test_it_lets_two_organizations_share_the_workers(
    settings, org, other_org, tenant, other_tenant, make_transcriber, live_transcriber, tmp_path
):
    settings.ONCORE = {**settings.ONCORE, "ORG_CONCURRENCY": 2}
    busy_bank = actions.do_create_bank(org, name="Busy", controls_per_flag=2)
    quiet_bank = actions.do_create_bank(other_org, name="Quiet", controls_per_flag=0)
    for i in range(3):
        actions.do_add_candidate(busy_bank, make_transcriber(f"busy{i}", "x"), confirmed=True)
    actions.do_add_candidate(quiet_bank, make_transcriber("quiet", "y"), confirmed=True)
    busy_call = make_call(tenant, live_transcriber, caller_texts=list("abcdef"))
    for line in caller_lines(busy_call)[:3]:
        actions.do_flag_line(line, "a", bank=busy_bank, confirm_matches_live=True)
    quiet_call = make_call(other_tenant, live_transcriber, caller_texts=["z"])
    actions.do_flag_line(caller_lines(quiet_call)[0], "z", bank=quiet_bank, confirm_matches_live=True)

    assert Transcription.objects.filter(organization=org).count() > 10
    tasks.pump_all()
    running = Transcription.objects.filter(status=Transcription.RUNNING)
    assert running.filter(organization=org).count() == 2  # the busy one is held to its concurrency
    assert running.filter(organization=other_org).count() == 1  # the quiet one is not starved
    tasks.drain()
    assert not Transcription.objects.exclude(status=Transcription.DONE).exists()


def test_it_keeps_flags_when_their_bank_is_deleted(bank, recorded_call):
    flag = actions.do_flag_line(caller_lines(recorded_call)[0], "Siobhan", bank=bank)
    actions.do_delete_bank(bank)
    flag.refresh_from_db()
    assert flag.bank is None
    assert not Bank.objects.exists()


def test_a_worker_goes_straight_on_with_its_organizations_next_rows_within_its_concurrency(
    settings,
    bank,
    recorded_call,
    other_org,
    other_tenant,
    make_transcriber,
    live_transcriber,
    tmp_path,
    monkeypatch,
):
    from datetime import timedelta

    from django.utils import timezone

    settings.ONCORE = {**settings.ONCORE, "ORG_CONCURRENCY": 2}
    for line in caller_lines(recorded_call)[:3]:
        actions.do_flag_line(line, "table for four", bank=bank)
    other_bank = actions.do_create_bank(other_org, name="Other", controls_per_flag=0)
    actions.do_add_candidate(other_bank, make_transcriber("other", "z"), confirmed=True)
    other_call = make_call(other_tenant, live_transcriber, caller_texts=["z"])
    actions.do_flag_line(caller_lines(other_call)[0], "z", bank=other_bank, confirm_matches_live=True)
    mine = Transcription.objects.filter(organization=bank.organization)
    later = mine.order_by("-id").first()  # a retry whose backoff has not passed
    mine.filter(pk=later.pk).update(not_before=timezone.now() + timedelta(minutes=5))
    assert mine.count() >= 6

    first, second = handles.pump(bank.organization_id)
    running_seen = []
    transcribe_one = replay.transcribe_claimed

    def counting(t):
        running_seen.append(mine.filter(status=Transcription.RUNNING).count())
        return transcribe_one(t)

    monkeypatch.setattr(replay, "transcribe_claimed", counting)
    assert tasks.transcribe(first) == "done"

    assert (
        len(running_seen) == mine.count() - 2
    )  # its own row and every ready row but the other dispatched one
    assert max(running_seen) == 2  # never more than the organization's concurrency at once
    statuses = dict(mine.values_list("pk", "status"))
    assert statuses.pop(second) == Transcription.RUNNING  # left to the task it was dispatched to
    assert statuses.pop(later.pk) == Transcription.QUEUED  # waits for its backoff
    assert set(statuses.values()) == {Transcription.DONE}
    assert not Transcription.objects.filter(organization=other_org, status=Transcription.DONE).exists()


def test_a_worker_does_only_its_own_row_when_chaining_is_off(settings, bank, recorded_call):
    settings.ONCORE = {**settings.ONCORE, "TASK_CHAIN_S": 0.0}
    actions.do_flag_line(caller_lines(recorded_call)[0], "table for four", bank=bank)
    first, *_ = handles.pump(bank.organization_id)
    assert tasks.transcribe(first) == "done"
    assert Transcription.objects.filter(status=Transcription.DONE).count() == 1


def test_run_queue_says_how_many_line_transcriptions_it_ran(bank, recorded_call):
    import io

    from django.core.management import call_command

    for line in caller_lines(recorded_call)[:2]:
        actions.do_flag_line(line, "table for four", bank=bank)
    rows = Transcription.objects.count()
    out = io.StringIO()
    call_command("run_queue", stdout=out)
    assert Transcription.objects.filter(status=Transcription.DONE).count() == rows
    assert (
        out.getvalue().strip()
        == f"Ran {rows} transcriptions; 0 still waiting (retries wait for their backoff)."
    )
