"""Streaming candidates in the pipeline: a line replayed through a streaming catalogue entry over a real WebSocket
to a fake vendor (tests/transcribers/stream_vendors.py), scored as any candidate with its time to final kept;
the queue counting open sessions (at most ORG_STREAMS streaming ones per organization); a stalling vendor
retried and then failed with its reason; and a full-call run calibrating a streaming live transcriber with a
streaming replay. Pacing runs 20 times faster than real time here (session.SPEED): these tests are not about it."""

import pytest

from oncore.transcribers.engines.streaming import session
from oncore.transcribers.models import Transcriber
from tests.fixtures import make_call
from tests.transcribers.stream_vendors import FakeDeepgramLive
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run, Score, Transcription
from transcriber_tests.work import tasks
from transcriber_tests.work.tasks import drain_run

pytestmark = pytest.mark.django_db

SAID = "Siobhan, table for four at eight thirty"


@pytest.fixture(autouse=True)
def fast_pacing(monkeypatch):
    monkeypatch.setattr(session, "SPEED", 20.0)


@pytest.fixture
def vendor(monkeypatch):
    with FakeDeepgramLive(transcript=SAID) as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        yield fake


def streaming_entry(vendor, slug="test-deepgram-live", **options) -> Transcriber:
    return Transcriber.objects.create(
        slug=slug,
        provider="deepgram",
        model="nova-3",
        mode=Transcriber.STREAMING,
        display_name="Deepgram live (test)",
        price_per_minute="0.0048",
        api_key_env=vendor.key_env,
        options={"base_url": vendor.base_url, "connect_timeout_s": 2, "final_timeout_s": 1, **options},
    )


def test_a_streaming_candidate_replays_the_line_as_a_live_call_and_is_scored_with_its_time_to_final(
    org, recorded_call, vendor
):
    bank = actions.do_create_bank(org, name="Live", controls_per_flag=0)
    live = streaming_entry(vendor)
    actions.do_add_candidate(bank, live, confirmed=True)
    line = recorded_call.lines.get(position=2)  # 4.2-5.8 s: its clip is the line and 0.3 s on each side
    flag = actions.do_flag_line(line, SAID, bank=bank)

    tasks.drain()

    t = Transcription.objects.get(line=line, transcriber=live)
    assert (t.status, t.mode, t.text) == (Transcription.DONE, Transcription.STREAMING, SAID)
    # the clip is the line plus 0.3 s on each side: its end of speech is 0.3 s (at 20x, 15 ms) before the end of
    # the audio, after which Deepgram is asked to finalize; time to final counts from the end of speech
    assert t.latency_s >= 0.3 / 20 - 0.002
    assert t.first_partial_s is not None and t.partials >= 1 and t.partial_revisions == 0
    clip_s = line.end_s - line.start_s + 0.6
    assert t.audio_seconds == pytest.approx(clip_s, abs=0.01)
    assert t.frames_sent == -(-round(clip_s * 8000) // 160) and t.frames_off_schedule is not None
    (record,) = vendor.sessions
    assert record.query["sample_rate"] == "8000" and len(record.audio) >= round(clip_s * 8000) * 2
    score = Score.objects.get(flag=flag, transcriber=live, source=Score.CANDIDATE)
    assert score.match and score.latency_s == t.latency_s  # the latency figures read it as its time to final


def test_a_batch_replay_stays_a_batch_replay_without_streaming_figures(flag):
    t = Transcription.objects.filter(line=flag.line).first()
    assert t.mode == Transcription.BATCH and t.first_partial_s is None and t.frames_sent is None


def test_a_stalling_streaming_vendor_is_retried_and_then_fails_with_its_reason(org, recorded_call, vendor):
    vendor.scenario = "stall"
    bank = actions.do_create_bank(org, name="Live", controls_per_flag=0)
    live = streaming_entry(vendor, final_timeout_s=0.3)
    actions.do_add_candidate(bank, live, confirmed=True)
    line = recorded_call.lines.get(position=0)
    actions.do_flag_line(line, SAID, bank=bank)

    tasks.drain(max_seconds=60)

    t = Transcription.objects.get(line=line, transcriber=live)
    assert t.status == Transcription.FAILED and t.attempts == 4
    assert "Deepgram sent no final transcript within 0.3 s of the end of the audio" in t.error
    assert len(vendor.sessions) == 4


def test_a_streaming_live_transcriber_is_calibrated_by_a_streaming_replay(
    org, tenant, vendor, make_transcriber, no_judge, settings
):
    settings.ONCORE = {**settings.ONCORE, "RUN_CALIBRATION_LINES": 2}
    live = streaming_entry(vendor)
    call = make_call(tenant, live, caller_texts=[SAID, SAID, SAID])
    bank = actions.do_create_bank(org, name="Live", controls_per_flag=0)
    candidate = make_transcriber("candidate", SAID)
    actions.do_add_candidate(bank, candidate, confirmed=True)
    actions.do_flag_line(call.lines.get(position=0), "Siobhan, a table for four at eight thirty", bank=bank)
    tasks.drain()

    run = run_actions.do_start_run(bank, [call.pk], candidate=candidate, confirmed=True)
    assert drain_run(run.pk, max_seconds=60) == Run.DONE

    calibration = list(run.lines.filter(calibration=True).select_related("line"))
    assert len(calibration) == 2 and {rl.replay_transcriber_id for rl in calibration} == {live.pk}
    replays = Transcription.objects.filter(transcriber=live, line__in=[rl.line for rl in calibration])
    assert {(t.status, t.mode) for t in replays} == {(Transcription.DONE, Transcription.STREAMING)}
    assert all(t.latency_s is not None and t.frames_sent for t in replays)
    assert all(rl.replay_matches for rl in calibration)  # the stream heard what the live call stored
    assert len(vendor.sessions) == 2
