"""Recordings in S3-compatible object storage (STORAGE_BUCKET), against a real S3 server on 127.0.0.1 (moto in
server mode): import, a line's audio with Range, a candidate's transcription by the queue's worker code and a
full-call run all read the bucket, by byte ranges, never downloading a whole recording."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from oncore import audio
from oncore.calls.models import Call
from tests.api.test_calls import _calls_file, _flac
from tests.fixtures import make_call, tone_recording
from transcriber_tests import actions
from transcriber_tests.models import Run, Score
from transcriber_tests.queries import runs as run_queries
from transcriber_tests.work import tasks
from transcriber_tests.work import tasks as run_tasks


@pytest.fixture
def ranged_reads(monkeypatch):
    """Counts the bytes read from object storage through oncore.audio.RangedFile."""
    fetched = []
    original = audio.RangedFile.readinto

    def readinto(self, buffer):
        n = original(self, buffer)
        fetched.append(n)
        return n

    monkeypatch.setattr(audio.RangedFile, "readinto", readinto)
    return fetched


def _keys(s3_storage) -> list[str]:
    return [o["Key"] for o in s3_storage.client.list_objects_v2(Bucket=s3_storage.bucket).get("Contents", [])]


def test_it_imports_a_call_with_its_recording_into_the_bucket(s3_storage, api, org, tenant, tmp_path):
    response = api.upload("/calls/import", {"file": _calls_file(), "recordings": [_flac(tmp_path)]})
    assert response.status_code == 200, response.content
    call = Call.objects.get(external_id="ext-1")
    assert call.recording.name in _keys(s3_storage)
    assert audio.probe(audio.stored(call.recording)).duration_s == pytest.approx(3.0)


def test_it_serves_a_lines_audio_with_range_from_the_bucket(
    s3_storage, api, tenant, live_transcriber, ranged_reads
):
    # A ten-minute recording: a line's clip and any range of it are read without fetching the whole object.
    call = make_call(tenant, live_transcriber, caller_texts=["hello"] * 150)
    size = s3_storage.client.head_object(Bucket=s3_storage.bucket, Key=call.recording.name)["ContentLength"]
    line = call.lines.filter(speaker="caller").order_by("position")[100]
    whole = api.get(f"/lines/{line.pk}/audio")
    assert whole.status_code == 200
    data = whole.getvalue()
    local = audio.locate_clip(tone_recording(round(150 * 4 + 1.0, 3)), line.start_s, line.end_s)
    assert data == b"".join(local.wav_bytes())
    part = api.get(f"/lines/{line.pk}/audio", Range="bytes=1000-1999")
    assert part.status_code == 206 and part.getvalue() == data[1000:2000]
    assert sum(ranged_reads) < size / 2  # two requests' worth of byte ranges, well under the recording


def test_a_worker_transcribes_a_candidate_from_the_bucket(
    s3_storage, bank, recorded_call, stt_server, ranged_reads
):
    line = recorded_call.lines.get(position=0)
    flag = actions.do_flag_line(line, "Siobhan, table for four at eight thirty", bank=bank)
    assert (
        tasks.drain() >= 2
    )  # the queue's worker code: claim, cut the clip from the bucket, transcribe, score
    scores = Score.objects.filter(flag=flag, source=Score.CANDIDATE, control__isnull=True)
    assert sorted(s.failed for s in scores) == [False, False] and ranged_reads
    assert {"good", "bad"} <= set(stt_server.requests)


def test_a_full_call_run_reads_its_calls_from_the_bucket(s3_storage, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    assert call_a.recording.name in _keys(s3_storage)
    from transcriber_tests.actions import runs as run_actions

    run = run_actions.do_start_run(bank, [call_a.pk, call_b.pk], confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    assert run_queries.run_summary(run).compared == 7


def test_it_says_a_recording_missing_from_the_bucket_is_unavailable(s3_storage, api, recorded_call):
    s3_storage.client.delete_object(Bucket=s3_storage.bucket, Key=recorded_call.recording.name)
    response = api.get(f"/lines/{recorded_call.lines.first().pk}/audio")
    assert response.status_code == 409 and response.json()["error"]["code"] == "recording_unavailable"


def test_the_bucket_stays_out_of_a_local_run(settings):
    """Without STORAGE_BUCKET (make run, the tests by default) recordings are files under MEDIA_ROOT."""
    from django.core.files.storage import default_storage

    assert settings.STORAGES["default"]["BACKEND"] == "django.core.files.storage.FileSystemStorage"
    saved = default_storage.save("probe.flac", SimpleUploadedFile("probe.flac", b"x"))
    assert (settings.MEDIA_ROOT / saved).is_file()
