"""Audio and uploads cannot exhaust the server: recordings, lines and line timing are checked at import; a line
longer than the maximum cannot be flagged or run; a clip is streamed and a Range request decodes only its bytes,
so peak memory per request stays bounded on a one-hour 48 kHz stereo recording; request bodies, uploaded files
and the calls file are capped with 413; the call page shows the largest call allowed a page at a time."""

import io
import json
import time
import tracemalloc

import numpy as np
import pytest
import soundfile as sf
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from oncore import audio
from oncore.calls.models import Call, Line
from tests.fixtures import assert_error, make_call
from transcriber_tests import actions, queries
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Flag, Run
from transcriber_tests.queries.lines import why_not_flaggable

pytestmark = pytest.mark.django_db

HOUR_S = 3600
RATE = 48000
# Peak Python memory (tracemalloc: numpy arrays and bytes included) one audio request may take, whatever the
# length of the line: the old code took more than 2 GB on the one-hour line.
MAX_REQUEST_PEAK_BYTES = 16 * 2**20


@pytest.fixture(scope="session")
def hour_flac(tmp_path_factory) -> bytes:
    """One hour of 48 kHz stereo silence: a 670 KB FLAC that decodes to 691 MB of PCM, written a minute at a
    time."""
    path = tmp_path_factory.mktemp("hour") / "hour.flac"
    with sf.SoundFile(path, "w", samplerate=RATE, channels=2, format="FLAC", subtype="PCM_16") as out:
        minute = np.zeros((RATE * 60, 2), dtype=np.int16)
        for _ in range(HOUR_S // 60):
            out.write(minute)
    return path.read_bytes()


@pytest.fixture
def hour_line(tenant, live_transcriber, hour_flac):
    """The reproduction: a call holding the one-hour recording, with one caller line timed 0-3600 s."""
    call = Call.objects.create(
        tenant=tenant, started_at="2025-03-01T18:00:00Z", recorded=True, live_transcriber=live_transcriber
    )
    call.recording.save("hour.flac", ContentFile(hour_flac), save=True)
    return Line.objects.create(call=call, position=0, speaker="caller", text="hello", start_s=0, end_s=HOUR_S)


def peak_while_reading(get) -> tuple[int, int, float]:
    """(bytes received, peak traced memory, seconds) of one request, its streamed body read to the end."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        response = get()
        received = sum(len(chunk) for chunk in response.streaming_content)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return received, peak, time.perf_counter() - started


# ---------------------------------------------------------------- the one-hour line


def test_it_answers_a_range_of_a_one_hour_line_by_decoding_only_those_bytes(api, admin_client, hour_line):
    expected_size = audio.WAV_HEADER_BYTES + HOUR_S * RATE * 2 * 2  # the whole clip: 691 MB
    for get in (
        lambda: api.get(f"/lines/{hour_line.pk}/audio", Range="bytes=0-99"),
        lambda: admin_client.get(reverse("tt:line_audio", args=[hour_line.pk]), HTTP_RANGE="bytes=0-99"),
    ):
        response = get()
        assert response.status_code == 206
        assert response["Content-Range"] == f"bytes 0-99/{expected_size}"
        received, peak, seconds = peak_while_reading(get)
        assert received == 100 and peak < 2 * 2**20 and seconds < 2, (received, peak, seconds)
    middle = api.get(f"/lines/{hour_line.pk}/audio", Range="bytes=345600044-345600143")
    assert middle.status_code == 206 and middle.getvalue() == bytes(100)  # half an hour in: silence


@pytest.mark.slow
def test_it_streams_a_one_hour_line_whole_in_bounded_memory(api, hour_line):
    response = api.get(f"/lines/{hour_line.pk}/audio")
    assert response.status_code == 200 and response.streaming
    assert int(response["Content-Length"]) == audio.WAV_HEADER_BYTES + HOUR_S * RATE * 4
    received, peak, _ = peak_while_reading(lambda: api.get(f"/lines/{hour_line.pk}/audio"))
    assert received == int(response["Content-Length"])
    assert peak < MAX_REQUEST_PEAK_BYTES, f"peak {peak / 2**20:.1f} MB"


def test_it_refuses_to_flag_or_run_a_line_longer_than_the_maximum_and_says_why(
    api, admin_client, hour_line, bank
):
    error = assert_error(
        api.post("/flags", {"line_id": hour_line.pk, "expected_text": "hello"}), 409, "line_too_long"
    )
    assert "3600 s long" in error["message"] and "120 s" in error["message"]
    response = admin_client.post(
        reverse("tt:flag_line", args=[hour_line.pk]), {"expected_text": "hello there"}
    )
    assert response.status_code == 422 and "longer than 120 s" in response.content.decode()
    assert not Flag.objects.exists()

    detail = api.get(f"/calls/{hour_line.call_id}").json()["line_items"][0]
    assert detail["flaggable"] is False and detail["not_flaggable"]["code"] == "line_too_long"
    page = admin_client.get(reverse("tt:call", args=[hour_line.call_id])).content.decode()
    assert "Cannot be flagged: This line is 3600 s long" in page

    assert run_actions.run_lines_of([hour_line.call]) == []  # a run leaves it out; with no other line:
    with pytest.raises(actions.errors.ActionError):
        run_actions.do_start_run(bank, [hour_line.call_id], confirmed=True)
    assert not Run.objects.exists()


def test_it_never_draws_a_line_longer_than_the_maximum_as_a_control(org, tenant, live_transcriber):
    call = make_call(tenant, live_transcriber, caller_texts=["table for two", "at eight please"])
    long = Line.objects.create(
        call=call, position=9, speaker="caller", text="a long turn", start_s=0, end_s=500
    )
    bank = actions.do_create_bank(org, name="Two controls", controls_per_flag=2)
    flag = actions.do_flag_line(call.lines.get(position=0), "table for two please", bank=bank)
    assert list(flag.controls.values_list("line_id", flat=True)) == [call.lines.get(position=2).pk]
    assert long.pk not in set(flag.controls.values_list("line_id", flat=True))


def test_it_takes_the_line_limit_from_settings(api, hour_line, settings):
    settings.ONCORE = {**settings.ONCORE, "MAX_LINE_S": HOUR_S}
    assert why_not_flaggable(hour_line) is None
    settings.ONCORE = {**settings.ONCORE, "MAX_LINE_S": 30}
    assert "longer than 30 s" in why_not_flaggable(hour_line).message


# ---------------------------------------------------------------- import: recordings, timing, lines


def calls_file(lines=None, recording="ext-1.flac", **call):
    data = {
        "format": "oncore-calls/1",
        "tenants": [{"slug": "bistro", "name": "Bistro"}],
        "calls": [
            {
                "external_id": "ext-1",
                "tenant": "bistro",
                "started_at": "2025-03-01T18:00:00+01:00",
                "recording": recording,
                "live_transcriber": {"name": "Old STT"},
                "lines": lines
                if lines is not None
                else [{"speaker": "caller", "text": "Table for two.", "start_s": 0.5, "end_s": 1.5}],
                **call,
            }
        ],
    }
    return SimpleUploadedFile("calls.json", json.dumps(data).encode(), content_type="application/json")


def flac(seconds=3.0, rate=8000, name="ext-1.flac") -> SimpleUploadedFile:
    t = np.arange(int(seconds * rate)) / rate
    out = io.BytesIO()
    audio.write_recording(out, np.stack([np.sin(t * 2000), np.sin(t * 3000)], axis=1) * 0.2, rate)
    return SimpleUploadedFile(name, out.getvalue(), content_type="audio/flac")


def import_(api, file, *recordings):
    return api.upload("/calls/import", {"file": file, "recordings": list(recordings) or [flac()]})


def assert_refused(response, *words):
    error = assert_error(response, 400, "import_format_error")
    for word in words:
        assert word in error["message"], error["message"]
    assert not Call.objects.exists() and not Line.objects.exists()
    return error


@pytest.mark.parametrize(
    ("start", "end", "why"),
    [
        (float("nan"), 1.0, "NaN is not a number JSON allows"),
        (0.5, float("inf"), "Infinity is not a number JSON allows"),
        (float("-inf"), 1.0, "-Infinity is not a number JSON allows"),
        (-0.5, 1.0, "0 ≤ start_s < end_s ≤ 3.000 s"),
        (1.0, 1.0, "0 ≤ start_s < end_s"),
        (2.0, 1.0, "0 ≤ start_s < end_s"),
        (1.0, 3.5, "end of the recording, which is 3.000 s long"),
        ("1", 2.0, "must both be numbers"),
        (1.0, None, "must both be numbers"),
    ],
)
def test_it_refuses_line_timing_that_is_not_finite_or_outside_the_recording(api, org, start, end, why):
    lines = [{"speaker": "caller", "text": "hi", "start_s": start, "end_s": end}]
    assert_refused(import_(api, calls_file(lines)), why)


def test_it_refuses_a_huge_number_that_json_reads_as_infinity(api, org):
    raw = json.dumps(json.loads(calls_file().read())).replace('"end_s": 1.5', '"end_s": 1e400')
    response = import_(api, SimpleUploadedFile("calls.json", raw.encode()))
    assert_refused(response, "call ext-1, line 1", "numbers of seconds")


def test_it_keeps_the_call_json_valid_and_its_audio_answering_for_the_lines_it_imports(api, org):
    assert import_(api, calls_file()).status_code == 200
    detail = api.get(f"/calls/{Call.objects.get().pk}")
    assert detail.status_code == 200 and "Infinity" not in detail.content.decode()
    json.loads(detail.content, parse_constant=lambda c: pytest.fail(f"{c} in the call's JSON"))


def test_it_refuses_a_recording_longer_than_the_maximum_naming_the_call(api, org, settings):
    settings.ONCORE = {**settings.ONCORE, "MAX_RECORDING_S": 2.0}
    assert_refused(
        import_(api, calls_file()), "call ext-1", "is 3.0 s long; at most 2.0 s", "MAX_RECORDING_S"
    )


def test_it_refuses_a_recording_sampled_above_48_khz_naming_the_call(api, org):
    assert_refused(import_(api, calls_file(), flac(rate=96000)), "call ext-1", "96000 Hz", "48000 Hz")


def test_it_refuses_a_call_with_more_lines_than_allowed(api, org, settings):
    settings.ONCORE = {**settings.ONCORE, "MAX_LINES_PER_CALL": 3}
    lines = [
        {"speaker": "caller", "text": f"line {i}", "start_s": i * 0.5, "end_s": i * 0.5 + 0.4}
        for i in range(4)
    ]
    assert_refused(import_(api, calls_file(lines)), "call ext-1", "4 lines", "at most 3")
    lines.pop()
    assert import_(api, calls_file(lines)).json()["lines"] == 3


def test_it_refuses_impossible_timing_in_the_database_too(recorded_call):
    from django.db import IntegrityError, transaction

    for start, end in ((-1.0, 1.0), (1.0, float("inf")), (1.0, 2e6)):
        with pytest.raises(IntegrityError), transaction.atomic():
            Line.objects.create(call=recorded_call, position=50, speaker="caller", start_s=start, end_s=end)


# ---------------------------------------------------------------- request size


def test_it_refuses_an_oversized_request_with_413_before_reading_it(api, admin_client, org, settings):
    declared = str(300 * 2**20)  # a 300 MB import part: refused on its Content-Length, never read
    response = api.client.post(
        "/api/v1/calls/import", {"file": calls_file()}, headers=api.headers, CONTENT_LENGTH=declared
    )
    error = assert_error(response, 413, "request_too_large")
    assert "300.0 MB" in error["message"] and "256 MB" in error["message"]
    page = admin_client.post(reverse("tt:bank_new"), {"name": "x"}, CONTENT_LENGTH=declared)
    assert page.status_code == 413 and "at most 256 MB" in page.content.decode()
    assert not Call.objects.exists()


def test_it_refuses_a_calls_file_over_its_own_limit_with_413(api, org, settings):
    settings.ONCORE = {**settings.ONCORE, "MAX_IMPORT_FILE_MB": 1}
    lines = [{"speaker": "caller", "text": "x" * 1000, "start_s": 0.5, "end_s": 1.5}] * 1200
    response = import_(api, calls_file(lines))
    error = assert_error(response, 413, "request_too_large")
    assert "calls.json is 1.2 MB" in error["message"] and "at most 1 MB" in error["message"]
    assert not Call.objects.exists()


def test_it_refuses_an_oversized_json_body_with_413(api, flag):
    response = api.patch(f"/flags/{flag.pk}", {"note": "x" * (3 * 2**20)})
    assert_error(response, 413, "request_too_large")


def test_it_streams_uploaded_recordings_to_disk(settings):
    assert settings.FILE_UPLOAD_MAX_MEMORY_SIZE <= 2.5 * 2**20
    assert "django.core.files.uploadhandler.TemporaryFileUploadHandler" in settings.FILE_UPLOAD_HANDLERS


# ---------------------------------------------------------------- the largest call allowed


def test_it_shows_the_largest_call_allowed_a_page_at_a_time(
    admin_client, api, tenant, live_transcriber, django_assert_max_num_queries, settings
):
    call = make_call(tenant, live_transcriber, caller_texts=["hello"])
    n = settings.ONCORE["MAX_LINES_PER_CALL"]
    Line.objects.bulk_create(
        Line(call=call, position=p, speaker="caller", text=f"line {p}", start_s=1.0, end_s=1.5)
        for p in range(2, n)
    )
    url = reverse("tt:call", args=[call.pk])
    started = time.perf_counter()
    with django_assert_max_num_queries(15):
        page = admin_client.get(url)
    assert page.status_code == 200 and time.perf_counter() - started < 3
    text = page.content.decode()
    assert f"Page 1 of {n // queries.CALL_PAGE_LINES}" in text and text.count('class="line ') == 200
    last = Line.objects.get(call=call, position=n - 1)
    on_its_page = admin_client.get(url, {"line": last.pk}).content.decode()
    assert f'id="line-{last.pk}"' in on_its_page and f"Page {n // 200} of {n // 200}" in on_its_page
    # The API's call detail holds every line (at most ONCORE_MAX_LINES_PER_CALL) in a fixed number of queries.
    started = time.perf_counter()
    with django_assert_max_num_queries(15):
        detail = api.get(f"/calls/{call.pk}")
    assert len(detail.json()["line_items"]) == n and time.perf_counter() - started < 5
