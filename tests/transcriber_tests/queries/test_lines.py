"""Recording per assistant: an assistant records calls from a date on (until it is turned off again); a call
imported without its own `recorded` takes its assistant's setting at its start; the call page, the API and a
refused flag say why an unrecorded call cannot be tested."""

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from oncore import audio
from oncore.calls.importer import ImportFormatError, do_import_calls
from oncore.calls.models import Assistant, Call
from tests.fixtures import assert_error

pytestmark = pytest.mark.django_db

FROM_14_MARCH = {"records_from": "2026-03-14T00:00:00+00:00"}


def _call(external_id, started_at, **changes):
    call = {
        "external_id": external_id,
        "tenant": "bistro",
        "assistant": "Front Desk",
        "started_at": started_at,
        "recording": None,
        "live_transcriber": {"name": "Some STT"},
        "lines": [
            {"speaker": "assistant", "text": "Hello, Bistro."},
            {"speaker": "caller", "text": "Table for two."},
        ],
    }
    call.update(changes)
    if call["recording"] is None:
        call.pop("recording")
    return call


def _import(tmp_path, org, calls, name="calls.json", **setting):
    data = {
        "format": "oncore-calls/1",
        "tenants": [{"slug": "bistro", "name": "Bistro"}],
        "assistants": [{"tenant": "bistro", "name": "Front Desk", **setting}],
        "calls": calls,
    }
    (tmp_path / name).write_text(json.dumps(data))
    return do_import_calls(tmp_path / name, org)


def _flac(tmp_path, name):
    t = np.arange(8000 * 3) / 8000
    audio.write_recording(tmp_path / name, np.stack([np.sin(t * 2000), np.sin(t * 3000)], axis=1) * 0.2, 8000)


def _caller_line(api, external_id):
    call = Call.objects.get(external_id=external_id)
    body = api.get(f"/calls/{call.pk}").json()
    return call, body, next(ln for ln in body["line_items"] if ln["speaker"] == "caller")


def test_it_keeps_an_assistants_recording_setting_and_the_api_shows_it(api, org, tmp_path):
    _import(
        tmp_path,
        org,
        [],
        records_from="2026-03-01T09:00:00+01:00",
        records_until="2026-03-10T18:00:00+01:00",
    )
    assistant = Assistant.objects.get(name="Front Desk")
    assert assistant.records_from == datetime(2026, 3, 1, 8, tzinfo=UTC)
    assert assistant.records_until == datetime(2026, 3, 10, 17, tzinfo=UTC)
    (item,) = api.get("/assistants").json()["items"]
    assert item["records_from"] == "2026-03-01T08:00:00Z" and item["records_until"] == "2026-03-10T17:00:00Z"


def test_it_gives_a_call_without_recorded_its_assistants_setting_at_its_start(api, org, tmp_path):
    _flac(tmp_path, "with-audio.flac")
    calls = [
        _call("before", "2026-03-12T10:00:00+00:00"),
        _call("after", "2026-03-15T10:00:00+00:00"),
        _call("after-says-no", "2026-03-15T11:00:00+00:00", recorded=False),
        _call("before-says-yes", "2026-03-12T11:00:00+00:00", recorded=True),
        _call("before-with-audio", "2026-03-12T12:00:00+00:00", recording="with-audio.flac"),
    ]
    _import(tmp_path, org, calls, **FROM_14_MARCH)
    recorded = {c["external_id"]: c["recorded"] for c in api.get("/calls").json()["items"]}
    assert recorded == {
        "before": False,
        "after": True,
        "after-says-no": False,
        "before-says-yes": True,
        "before-with-audio": True,  # it came with its recording
    }
    has_recording = {c["external_id"]: c["has_recording"] for c in api.get("/calls").json()["items"]}
    assert [k for k, v in has_recording.items() if v] == ["before-with-audio"]


def test_it_keeps_todays_rule_for_an_assistant_without_a_setting(org, tmp_path):
    _flac(tmp_path, "with-audio.flac")
    calls = [
        _call("no-audio", "2026-03-15T10:00:00+00:00"),
        _call("audio", "2026-03-15T11:00:00+00:00", recording="with-audio.flac"),
    ]
    _import(tmp_path, org, calls)
    assert dict(Call.objects.values_list("external_id", "recorded")) == {"no-audio": False, "audio": True}


def test_it_says_on_the_call_page_why_an_unrecorded_call_cannot_be_tested(admin_client, org, tmp_path):
    _import(tmp_path, org, [_call("before", "2026-03-12T10:00:00+00:00")], **FROM_14_MARCH)
    call = Call.objects.get(external_id="before")
    page = admin_client.get(reverse("tt:call", args=[call.pk])).content.decode()
    assert (
        f"Call {call.pk} was not recorded: recording was off for assistant Front Desk on 12 March 2026 "
        "(it records calls from 14 March 2026 on), so its lines cannot be replayed."
    ) in page
    assert "— it records calls from 14 March 2026 on" in page  # beside the assistant's name
    assert 'Cannot be flagged: the call was not recorded (<a href="#not-recorded">why</a>)' in page
    assert "Turn recording on" not in page  # it is on
    assert "Run this call in full" not in page  # a run would refuse it


def test_it_says_in_the_api_why_a_line_of_an_unrecorded_call_cannot_be_flagged(api, org, tmp_path):
    _import(tmp_path, org, [_call("before", "2026-03-12T10:00:00+00:00")], **FROM_14_MARCH)
    call, body, line = _caller_line(api, "before")
    assert body["recorded"] is False and body["has_recording"] is False
    assert line["flaggable"] is False and line["not_flaggable"] == {
        "code": "line_not_recorded",
        "message": f"Call {call.pk} was not recorded: recording was off for assistant Front Desk on "
        "12 March 2026 (it records calls from 14 March 2026 on), so its lines cannot be replayed.",
    }
    refused = assert_error(
        api.post("/flags", {"line_id": line["id"], "expected_text": "Table for two"}),
        409,
        "line_not_recorded",
    )
    assert refused["message"] == line["not_flaggable"]["message"]


def test_it_says_when_recording_was_turned_off_again(api, org, tmp_path):
    _import(
        tmp_path,
        org,
        [_call("between", "2026-03-12T10:00:00+00:00")],
        records_from="2026-03-01T00:00:00+00:00",
        records_until="2026-03-10T00:00:00+00:00",
    )
    call, _, line = _caller_line(api, "between")
    assert line["not_flaggable"]["message"] == (
        f"Call {call.pk} was not recorded: recording was off for assistant Front Desk on 12 March 2026 "
        "(it recorded calls from 1 March 2026 until 10 March 2026), so its lines cannot be replayed. "
        "Turn recording on again for the assistant; it covers calls from then on."
    )


def test_it_says_to_turn_recording_on_for_an_assistant_that_never_recorded(admin_client, api, org, tmp_path):
    _import(tmp_path, org, [_call("never", "2026-03-12T10:00:00+00:00")])
    call, _, line = _caller_line(api, "never")
    assert line["not_flaggable"]["message"] == (
        f"Call {call.pk} was not recorded: recording was off for assistant Front Desk on 12 March 2026, "
        "so its lines cannot be replayed. Turn recording on for the assistant; it covers calls from then on."
    )
    page = admin_client.get(reverse("tt:call", args=[call.pk])).content.decode()
    assert line["not_flaggable"]["message"] in page and 'id="assistant-recording"' not in page


def test_it_says_the_time_when_recording_was_turned_on_the_day_of_the_call(api, org, tmp_path):
    org.timezone = "Europe/Berlin"
    org.save(update_fields=["timezone"])
    # 08:12 and 08:30 UTC are 09:12 and 09:30 in Berlin; the call's day is Berlin's.
    _import(
        tmp_path,
        org,
        [_call("early", "2026-03-14T08:12:00+00:00"), _call("late-evening", "2026-03-12T23:30:00+00:00")],
        records_from="2026-03-14T08:30:00+00:00",
    )
    call, _, line = _caller_line(api, "early")
    assert line["not_flaggable"]["message"].startswith(
        f"Call {call.pk} was not recorded: recording was off for assistant Front Desk on 14 March 2026 at "
        "09:12 Europe/Berlin (it records calls from 14 March 2026 at 09:30 Europe/Berlin on)"
    )
    _, _, line = _caller_line(api, "late-evening")
    assert "on 13 March 2026 (it records calls from 14 March 2026 on)" in line["not_flaggable"]["message"]


def test_it_says_a_call_imported_as_not_recorded_while_its_assistant_recorded(api, org, tmp_path):
    _import(tmp_path, org, [_call("said-no", "2026-03-15T10:00:00+00:00", recorded=False)], **FROM_14_MARCH)
    call, _, line = _caller_line(api, "said-no")
    assert line["not_flaggable"]["message"] == (
        f"Call {call.pk} was imported as not recorded, though assistant Front Desk was recording calls then "
        "(it records calls from 14 March 2026 on), so its lines cannot be replayed."
    )


def test_it_says_a_recorded_call_came_without_its_recording(admin_client, api, org, tmp_path):
    _import(tmp_path, org, [_call("no-audio", "2026-03-15T10:00:00+00:00")], **FROM_14_MARCH)
    call, body, line = _caller_line(api, "no-audio")
    assert body["recorded"] is True and body["has_recording"] is False
    message = f"Call {call.pk} was recorded, but its recording was not imported with it, so its lines cannot be replayed."
    assert line["not_flaggable"] == {"code": "line_not_recorded", "message": message}
    page = admin_client.get(reverse("tt:call", args=[call.pk])).content.decode()
    assert "recording missing" in page and message in page
    assert "Cannot be flagged: the call's recording is missing" in page


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ({"records_until": "2026-03-10T00:00:00+00:00"}, "records_until needs records_from"),
        (
            {"records_from": "2026-03-10T00:00:00+00:00", "records_until": "2026-03-01T00:00:00+00:00"},
            "records_until '2026-03-01T00:00:00+00:00' must be after records_from '2026-03-10T00:00:00+00:00'",
        ),
        ({"records_from": "2026-03-10"}, "records_from '2026-03-10' must be ISO 8601 with a time zone"),
        ({"records_from": "2026-02-30T00:00:00+00:00"}, "must be ISO 8601 with a time zone"),
    ],
)
def test_it_refuses_a_recording_setting_that_cannot_be(org, tmp_path, setting, says):
    with pytest.raises(ImportFormatError, match="assistant 'Front Desk': ") as refused:
        _import(tmp_path, org, [_call("c1", "2026-03-12T10:00:00+00:00")], **setting)
    assert says in str(refused.value)
    assert not Assistant.objects.exists() and not Call.objects.exists()


def test_it_takes_a_newer_setting_from_a_file_that_states_it_and_keeps_it_otherwise(org, tmp_path):
    _import(tmp_path, org, [], **FROM_14_MARCH)
    _import(tmp_path, org, [_call("c1", "2026-03-20T10:00:00+00:00")], name="second.json")  # says nothing
    assistant = Assistant.objects.get()
    assert assistant.records_from == datetime(2026, 3, 14, tzinfo=UTC) and Call.objects.get().recorded
    _import(
        tmp_path,
        org,
        [],
        name="third.json",
        records_from=FROM_14_MARCH["records_from"],
        records_until="2026-03-18T00:00:00+00:00",
    )
    assistant.refresh_from_db()
    assert assistant.records_until == datetime(2026, 3, 18, tzinfo=UTC)
    assert Call.objects.get().recorded  # a call keeps what it was imported as


def test_it_moves_the_recording_setting_with_the_files_dates(org, tmp_path):
    data = {
        "format": "oncore-calls/1",
        "reference_date": "2026-03-20T00:00:00+00:00",
        "tenants": [{"slug": "bistro"}],
        "assistants": [{"tenant": "bistro", "name": "Front Desk", **FROM_14_MARCH}],
        "calls": [_call("after", "2026-03-15T10:00:00+00:00")],
    }
    (tmp_path / "calls.json").write_text(json.dumps(data))
    now = datetime(2026, 11, 30, tzinfo=UTC)
    do_import_calls(tmp_path / "calls.json", org, shift_to=now)
    assert Assistant.objects.get().records_from == now - timedelta(days=6)
    assert Call.objects.get().recorded


def test_it_refuses_in_the_database_a_recording_that_ends_before_it_starts(tenant):
    with pytest.raises(IntegrityError), transaction.atomic():
        Assistant.objects.create(tenant=tenant, name="A", records_until=datetime(2026, 3, 1, tzinfo=UTC))
    with pytest.raises(IntegrityError), transaction.atomic():
        Assistant.objects.create(
            tenant=tenant,
            name="B",
            records_from=datetime(2026, 3, 2, tzinfo=UTC),
            records_until=datetime(2026, 3, 1, tzinfo=UTC),
        )
