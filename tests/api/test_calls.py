"""Catalogue, organization, calls (list, detail, import) and a line's audio over the API."""

import json
from datetime import UTC, datetime

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from oncore import audio
from oncore.calls.models import Call
from oncore.transcribers.models import Transcriber
from tests.fixtures import assert_error, make_call
from transcriber_tests import actions

pytestmark = pytest.mark.django_db


def test_it_lists_the_catalogue_with_filters(api, make_transcriber):
    a = make_transcriber("alpha")
    b = make_transcriber("beta")
    b.enabled = False
    b.save()
    body = api.get("/transcribers", {"provider": "generic"}).json()
    assert body["count"] == 2 and [t["slug"] for t in body["items"]] == ["test-alpha", "test-beta"]
    assert body["items"][0]["price_per_minute"] == "0.006000"
    assert "options" not in body["items"][0] and "api_key_env" not in body["items"][0]
    enabled = api.get("/transcribers", {"enabled": "true", "provider": "generic"}).json()["items"]
    assert [t["id"] for t in enabled] == [a.pk]
    everything = api.get("/transcribers", {"limit": 200}).json()
    assert everything["count"] >= 2 and [t["display_name"] for t in everything["items"]] == sorted(
        t["display_name"] for t in everything["items"]
    )
    assert api.get(f"/transcribers/{b.pk}").json()["enabled"] is False
    modes = {t["slug"]: (t["provider"], t["mode"]) for t in everything["items"]}
    assert modes["test-alpha"] == ("generic", "batch") and ("faster_whisper", "streaming") in modes.values()
    assert_error(api.get("/transcribers/999999"), 404, "not_found")


def test_it_describes_the_organization_and_its_assistants(api, org, recorded_call, tenant):
    body = api.get("/organization").json()
    assert body["slug"] == "acme" and body["tenants"] == [
        {"id": tenant.pk, "slug": "bistro", "name": "Bistro"}
    ]
    assistants = api.get("/assistants", {"tenant": tenant.pk}).json()
    assert assistants["count"] == 1 and assistants["items"][0]["name"] == "Bookings"


def test_it_lists_calls_newest_first_with_filters(
    api, tenant, live_transcriber, recorded_call, tmp_path, bank
):
    older = make_call(tenant, live_transcriber, caller_texts=["hello"])
    Call.objects.filter(pk=older.pk).update(started_at=datetime(2024, 1, 5, 9, 30, tzinfo=UTC))
    actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan", bank=None)

    body = api.get("/calls").json()
    assert [c["id"] for c in body["items"]] == [recorded_call.pk, older.pk]
    first = body["items"][0]
    assert first["lines"] == 8 and first["flags"] == 1 and first["tenant"]["slug"] == "bistro"
    assert first["live_transcriber"]["id"] == live_transcriber.pk
    assert body["items"][1]["started_at"] == "2024-01-05T09:30:00Z"

    assert [c["id"] for c in api.get("/calls", {"has_flags": "true"}).json()["items"]] == [recorded_call.pk]
    assert [c["id"] for c in api.get("/calls", {"has_flags": "false"}).json()["items"]] == [older.pk]
    assert [c["id"] for c in api.get("/calls", {"date_to": "2024-01-05"}).json()["items"]] == [older.pk]
    assert [c["id"] for c in api.get("/calls", {"date_from": "2024-01-06"}).json()["items"]] == [
        recorded_call.pk
    ]
    # A tenant the organization does not have is refused, named, never answered with an empty list.
    unknown = assert_error(api.get("/calls", {"tenant": tenant.pk + 1000}), 422, "validation_error")
    assert f"No tenant '{tenant.pk + 1000}'" in unknown["message"]
    assert unknown["detail"]["errors"][0]["loc"] == ["query", "tenant"]
    assert api.get("/calls", {"assistant": older.assistant_id}).json()["count"] == 1
    paged = api.get("/calls", {"limit": 1, "offset": 1}).json()
    assert paged["count"] == 2 and [c["id"] for c in paged["items"]] == [older.pk]


def test_it_keeps_list_queries_fixed_as_calls_grow(
    api, tenant, live_transcriber, tmp_path, django_assert_max_num_queries
):
    for _ in range(5):
        make_call(tenant, live_transcriber, caller_texts=["hi", "bye"], recorded=False)
    with django_assert_max_num_queries(4):  # key, (touch), count, page
        assert api.get("/calls").json()["count"] == 5


def test_it_shows_each_line_with_whether_it_can_be_flagged_and_why_not(api, recorded_call, bank):
    flagged = recorded_call.lines.get(position=0)
    actions.do_flag_line(flagged, "Siobhan, table for four at eight thirty", bank=bank)
    body = api.get(f"/calls/{recorded_call.pk}").json()
    lines = body["line_items"]
    assert [ln["position"] for ln in lines] == list(range(8))
    assert lines[0]["flaggable"] is False and lines[0]["not_flaggable"]["code"] == "flag_exists"
    assert lines[0]["flag"]["bank_id"] == bank.pk and lines[0]["flag"]["tags"] == []
    assert lines[1]["speaker"] == "assistant" and lines[1]["not_flaggable"]["code"] == "line_not_caller"
    assert lines[2]["flaggable"] is True and lines[2]["not_flaggable"] is None
    assert lines[2]["audio_url"] == f"/api/v1/lines/{lines[2]['id']}/audio"
    assert body["live_transcriber_known"] is True and body["flags"] == 1


def test_it_says_why_lines_of_unrecorded_and_unknown_calls_cannot_be_flagged(
    api, tenant, live_transcriber, tmp_path
):
    unrecorded = make_call(tenant, live_transcriber, caller_texts=["hi"], recorded=False)
    line = api.get(f"/calls/{unrecorded.pk}").json()["line_items"][0]
    assert line["not_flaggable"]["code"] == "line_not_recorded" and line["audio_url"] is None
    unknown = make_call(tenant, None, caller_texts=["hi"])
    Call.objects.filter(pk=unknown.pk).update(live_transcriber_name="Retired STT")
    body = api.get(f"/calls/{unknown.pk}").json()
    assert body["live_transcriber_known"] is False and body["live_transcriber_name"] == "Retired STT"
    assert body["line_items"][0]["not_flaggable"]["code"] == "live_transcriber_unknown"


def test_it_finds_an_older_calls_live_transcriber_by_name_once(
    api, tenant, live_transcriber, tmp_path, django_assert_max_num_queries
):
    call = make_call(tenant, None, caller_texts=["a", "b", "c", "d", "e"])
    Call.objects.filter(pk=call.pk).update(live_transcriber_name=live_transcriber.display_name)
    with django_assert_max_num_queries(6):
        body = api.get(f"/calls/{call.pk}").json()
    assert body["live_transcriber_known"] is True
    assert all(ln["flaggable"] for ln in body["line_items"] if ln["speaker"] == "caller")


def test_it_hides_another_organizations_calls_and_lines(other_api, recorded_call):
    assert other_api.get("/calls").json()["count"] == 0
    assert_error(other_api.get(f"/calls/{recorded_call.pk}"), 404, "not_found")
    assert_error(other_api.get(f"/lines/{recorded_call.lines.first().pk}/audio"), 404, "not_found")


def test_it_serves_a_lines_audio_with_ranges(api, recorded_call):
    line = recorded_call.lines.get(position=0)
    whole = api.get(f"/lines/{line.pk}/audio")
    assert (
        whole.status_code == 200
        and whole["Content-Type"] == "audio/wav"
        and whole["Accept-Ranges"] == "bytes"
    )
    data = whole.getvalue()  # streamed
    assert data[:4] == b"RIFF" and int(whole["Content-Length"]) == len(data)
    part = api.get(f"/lines/{line.pk}/audio", Range="bytes=0-99")
    assert part.status_code == 206 and part.getvalue() == data[:100]
    assert part["Content-Range"] == f"bytes 0-99/{len(data)}"
    error = assert_error(
        api.get(f"/lines/{line.pk}/audio", Range=f"bytes={len(data) + 10}-"), 416, "range_not_satisfiable"
    )
    assert error["detail"]["length"] == len(data)


def test_it_says_why_a_line_has_no_audio(api, tenant, live_transcriber, recorded_call):
    unrecorded = make_call(tenant, live_transcriber, caller_texts=["hi"], recorded=False)
    assert_error(api.get(f"/lines/{unrecorded.lines.first().pk}/audio"), 409, "line_not_recorded")
    line = recorded_call.lines.get(position=2)
    line.start_s = line.end_s = None
    line.save()
    assert_error(api.get(f"/lines/{line.pk}/audio"), 409, "line_has_no_timing")
    recorded_call.recording.storage.delete(recorded_call.recording.name)
    assert_error(api.get(f"/lines/{recorded_call.lines.first().pk}/audio"), 409, "recording_unavailable")


def _calls_file(**call_changes):
    call = {
        "external_id": "ext-1",
        "tenant": "bistro",
        "assistant": "Front desk",
        "started_at": "2025-03-01T18:00:00+01:00",
        "recording": "ext-1.flac",
        "live_transcriber": {"name": "Some STT"},
        "lines": [
            {"speaker": "assistant", "text": "Hello, Bistro.", "start_s": 0.1, "end_s": 0.9},
            {"speaker": "caller", "text": "Table for two.", "start_s": 1.0, "end_s": 1.8},
        ],
    }
    call.update(call_changes)
    data = {
        "format": "oncore-calls/1",
        "tenants": [{"slug": "bistro", "name": "Bistro"}],
        "assistants": [{"tenant": "bistro", "name": "Front desk", "instructions": "Bookings."}],
        "calls": [call],
    }
    return SimpleUploadedFile("calls.json", json.dumps(data).encode(), content_type="application/json")


def _flac(tmp_path, name="ext-1.flac"):
    path = tmp_path / name
    t = np.arange(8000 * 3) / 8000
    audio.write_recording(path, np.stack([np.sin(t * 2000), np.sin(t * 3000)], axis=1) * 0.2, 8000)
    return SimpleUploadedFile(name, path.read_bytes(), content_type="audio/flac")


def test_it_imports_calls_with_their_uploaded_recordings_once(api, org, tenant, tmp_path):
    response = api.upload("/calls/import", {"file": _calls_file(), "recordings": [_flac(tmp_path)]})
    assert response.status_code == 200, response.content
    assert response.json() == {"tenants": 0, "assistants": 1, "calls": 1, "lines": 2, "skipped": 0}
    call = Call.objects.get(external_id="ext-1")
    assert (
        call.tenant == tenant
        and call.recorded
        and call.recording
        and call.live_transcriber_name == "Some STT"
    )
    again = api.upload("/calls/import", {"file": _calls_file(), "recordings": [_flac(tmp_path)]})
    assert again.json()["skipped"] == 1 and Call.objects.count() == 1


def test_it_refuses_an_import_that_breaks_the_format_or_misses_a_recording(api, org, tmp_path):
    error = assert_error(api.upload("/calls/import", {"file": _calls_file()}), 400, "recording_missing")
    assert error["detail"]["missing"] == "ext-1.flac"
    bad_json = SimpleUploadedFile("calls.json", b"{not json")
    assert_error(api.upload("/calls/import", {"file": bad_json}), 400, "import_format_error")
    error = assert_error(
        api.upload("/calls/import", {"file": _calls_file(lines=None)}), 400, "import_format_error"
    )
    assert "lines" in error["message"]
    sneaky = _calls_file(recording="../../etc/passwd")
    assert_error(api.upload("/calls/import", {"file": sneaky}), 400, "import_format_error")
    wrong_speaker = _calls_file(recording=None, lines=[{"speaker": "robot", "text": "beep"}])
    error = assert_error(api.upload("/calls/import", {"file": wrong_speaker}), 400, "import_format_error")
    assert "speaker" in error["message"] and "calls-" not in error["message"]
    not_audio = SimpleUploadedFile("ext-1.flac", b"this is not audio")
    assert_error(
        api.upload("/calls/import", {"file": _calls_file(), "recordings": [not_audio]}),
        400,
        "import_format_error",
    )
    assert Call.objects.count() == 0
    assert_error(api.upload("/calls/import", {}), 422, "validation_error")


@pytest.mark.parametrize(
    "changes",
    [
        {"lines": None},  # the format's validator
        {"started_at": 20250301},  # the format's validator
        {"recording": None, "lines": [{"speaker": "robot", "text": "beep"}]},  # the importer's own check
    ],
)
def test_the_api_and_the_command_refuse_a_bad_file_in_the_same_words(api, org, tmp_path, changes):
    from django.core.management import CommandError, call_command

    upload = _calls_file(**changes)
    error = assert_error(api.upload("/calls/import", {"file": upload}), 400, "import_format_error")
    upload.seek(0)
    (tmp_path / "calls.json").write_bytes(upload.read())
    with pytest.raises(CommandError) as refused:
        call_command("import_calls", str(tmp_path / "calls.json"), "--org", org.slug)
    assert str(refused.value) == f"Nothing was imported: {error['message']}"
    assert "call ext-1" in error["message"]


def test_it_shows_a_transcribers_price_source_and_date_and_its_shutdown_date(api):
    whisper = Transcriber.objects.get(slug="openai-whisper-1")
    body = api.get(f"/transcribers/{whisper.pk}").json()
    assert body["deprecation_date"] == "2027-02-26" and body["enabled"] is True
    assert body["price_per_minute"] == "0.006000" and "April 2026" in body["price_source"]
    assert body["price_date"] == "2026-04-01"
    current = api.get("/transcribers", {"provider": "openai", "enabled": "true"}).json()["items"]
    assert {t["model"]: t["deprecation_date"] for t in current}["gpt-transcribe"] is None
