"""What integrators used to Stripe, Deepgram or AssemblyAI expect of the API: the headers (X-Request-Id,
WWW-Authenticate, Retry-After, Location), Idempotency-Key on every POST, exact validation locations, unknown fields
and non-JSON bodies refused, one format for money, times and positions in JSON and CSV, the lookups (a call by
your own id, tenants by slug, every run, a fixed period), and error messages that reveal no server setting."""

import csv
import io
import logging
import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from oncore.accounts.models import IdempotentRequest
from oncore.calls.models import Call
from tests.fixtures import ApiClient, assert_error, make_call
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Bank, Run

pytestmark = pytest.mark.django_db


# ---------------------------------------------------------------- headers


def test_it_gives_every_answer_a_request_id_and_logs_it(api, client, caplog):
    with caplog.at_level(logging.INFO, logger="oncore.requests"):
        generated = api.get("/banks")
        echoed = api.get("/banks", None, **{"X-Request-Id": "support-ticket-42"})
    assert len(generated["X-Request-Id"]) == 32 and echoed["X-Request-Id"] == "support-ticket-42"
    assert (
        f"request_id={generated['X-Request-Id']}" in caplog.text
        and "request_id=support-ticket-42" in caplog.text
    )
    unusable = api.get("/banks", None, **{"X-Request-Id": "two words"})
    assert unusable["X-Request-Id"] != "two words" and len(unusable["X-Request-Id"]) == 32
    assert client.get("/api/v1/no-such-thing")["X-Request-Id"]  # outside the operations too


def test_it_asks_for_a_bearer_key_on_401_and_says_when_to_retry_on_429(
    api, client, bank, recorded_call, settings
):
    refused = assert_error(client.get("/api/v1/banks"), 401, "unauthorized")
    assert refused and client.get("/api/v1/banks")["WWW-Authenticate"] == "Bearer"
    settings.ONCORE = {**settings.ONCORE, "ORG_QUEUE_LIMIT": 1}
    actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan", bank=bank)
    response = api.post(
        "/flags",
        {"line_id": recorded_call.lines.get(position=4).pk, "expected_text": "087", "bank_id": bank.pk},
    )
    assert_error(response, 429, "queue_full")
    assert int(response["Retry-After"]) > 0


# ---------------------------------------------------------------- what a request may be


def test_it_refuses_unknown_fields_and_bodies_not_sent_as_json(api, client, org):
    error = assert_error(api.post("/banks", {"name": "English", "colour": "blue"}), 422, "validation_error")
    assert error["detail"]["errors"] == [
        {"loc": ["body", "colour"], "msg": "Extra inputs are not permitted", "type": "extra_forbidden"}
    ]
    for content_type in ("text/plain", "application/x-www-form-urlencoded"):
        response = client.post(
            "/api/v1/banks", '{"name": "English"}', content_type=content_type, headers=api.headers
        )
        error = assert_error(response, 415, "unsupported_media_type")
        assert "application/json" in error["message"]
    assert not Bank.objects.exists()
    assert api.post("/banks", {"name": "English"}).status_code == 201  # application/json
    vendor = client.post(
        "/api/v1/banks", '{"name": "French"}', content_type="application/vnd.api+json", headers=api.headers
    )
    assert vendor.status_code == 201


def test_it_locates_each_invalid_field_exactly(api, recorded_call):
    error = assert_error(
        api.post("/flags", {"line_id": 0, "expected_text": 5, "tags": "name"}), 422, "validation_error"
    )
    assert [e["loc"] for e in error["detail"]["errors"]] == [
        ["body", "line_id"],
        ["body", "expected_text"],
        ["body", "tags"],
    ]
    error = assert_error(api.upload("/calls/import", {}), 422, "validation_error")
    assert error["detail"]["errors"] == [
        {"loc": ["body", "file"], "msg": "Field required", "type": "missing"}
    ]
    error = assert_error(api.get("/calls", {"limit": 0}), 422, "validation_error")
    assert [e["loc"] for e in error["detail"]["errors"]] == [["query", "limit"]]


# ---------------------------------------------------------------- Idempotency-Key


def _post(api, path, body, key):
    return api.post(path, body, **{"Idempotency-Key": key})


def test_it_replays_a_post_sent_again_with_its_key_without_doing_it_twice(api, org):
    first = _post(api, "/banks", {"name": "English"}, "key-1")
    again = _post(api, "/banks", {"name": "English"}, "key-1")
    assert first.status_code == again.status_code == 201 and first.json() == again.json()
    assert again["Location"] == first["Location"] and again["Idempotent-Replayed"] == "true"
    assert Bank.objects.count() == 1
    # The same body with defaults spelled out is the same request.
    same = _post(api, "/banks", {"name": "English", "controls_per_flag": 1}, "key-1")
    assert same.status_code == 201 and same.json()["id"] == first.json()["id"]
    other = assert_error(_post(api, "/banks", {"name": "French"}, "key-1"), 409, "idempotency_key_reused")
    assert other["detail"] == {"key": "key-1"} and Bank.objects.count() == 1
    assert _post(api, "/banks", {"name": "French"}, "key-2").status_code == 201
    # Without a key, nothing is kept.
    assert_error(api.post("/banks", {"name": "French"}), 409, "bank_name_taken")


def test_it_keeps_keys_for_a_day_per_organization_and_stores_no_failure(api, other_api, org):
    assert _post(api, "/banks", {"name": "English"}, "shared").status_code == 201
    assert (
        _post(other_api, "/banks", {"name": "English"}, "shared").status_code == 201
    )  # another organization's
    # A request that failed stored nothing: the key can carry it again once it can succeed.
    assert_error(_post(api, "/banks", {"name": "English"}, "after-error"), 409, "bank_name_taken")
    Bank.objects.filter(organization=org).delete()
    assert _post(api, "/banks", {"name": "English"}, "after-error").status_code == 201
    # After 24 hours the key is free again.
    IdempotentRequest.objects.filter(key="shared").update(created_at=datetime.now(UTC) - timedelta(hours=25))
    assert_error(_post(api, "/banks", {"name": "English"}, "shared"), 409, "bank_name_taken")
    # A key the schema refuses (over 255 characters) is a validation error, as the schema and docs say.
    error = assert_error(_post(api, "/banks", {"name": "X"}, "x" * 256), 422, "validation_error")
    assert error["detail"]["errors"][0]["loc"] == ["header", "Idempotency-Key"]


def test_it_starts_one_run_for_a_key_sent_twice(api, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    body = {"call_ids": [call_a.pk], "confirm": True}
    first = _post(api, f"/banks/{bank.pk}/runs", body, "start-once")
    again = _post(api, f"/banks/{bank.pk}/runs", body, "start-once")
    assert first.status_code == again.status_code == 201 and first.json()["id"] == again.json()["id"]
    assert Run.objects.count() == 1 and again["Location"] == f"/api/v1/runs/{first.json()['id']}"


def test_it_replays_an_import_sent_again_with_its_key(api, org):
    data = (
        '{"format": "oncore-calls/1", "tenants": [{"slug": "t"}], "calls": [{"external_id": "c-1", "tenant": "t", '
        '"started_at": "2025-01-01T09:00:00Z", "lines": [{"speaker": "caller", "text": "hi"}]}]}'
    )

    def send(text):
        upload = SimpleUploadedFile("calls.json", text.encode())
        return api.client.post(
            "/api/v1/calls/import", {"file": upload}, headers={**api.headers, "Idempotency-Key": "import-1"}
        )

    first, again = send(data), send(data)
    assert (
        first.json() == again.json() == {"tenants": 1, "assistants": 0, "calls": 1, "lines": 1, "skipped": 0}
    )
    assert_error(send(data.replace("c-1", "c-2")), 409, "idempotency_key_reused")
    assert Call.objects.count() == 1


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="threads sharing SQLite's in-memory test database"
)
def test_it_does_the_work_once_for_two_requests_with_one_key_at_the_same_moment(
    transactional_db, org, org_key, monkeypatch
):
    """The second request waits for the first on the key's row, then replays its answer."""
    from django.test import Client

    created = []
    real = actions.do_create_bank

    def slow_create(*args, **kwargs):
        bank = real(*args, **kwargs)
        created.append(bank.pk)
        threading.Event().wait(0.5)  # the other request arrives meanwhile
        return bank

    monkeypatch.setattr(actions, "do_create_bank", slow_create)
    answers = []

    def send():
        answers.append(_post(ApiClient(Client(), org_key), "/banks", {"name": "Once"}, "same-moment"))
        connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [a.status_code for a in answers] == [201, 201] and len(created) == 1
    assert answers[0].json()["id"] == answers[1].json()["id"] == created[0]
    assert Bank.objects.count() == 1


# ---------------------------------------------------------------- lookups


def test_it_finds_calls_by_external_id_and_tenant_slug_or_id(api, org, tenant, live_transcriber):
    call = make_call(tenant, live_transcriber, caller_texts=["hello"], recorded=False)
    Call.objects.filter(pk=call.pk).update(external_id="crm-981")
    other_tenant = org.tenants.create(name="Dental", slug="dental")
    make_call(other_tenant, live_transcriber, caller_texts=["hi"], recorded=False)
    assert [c["id"] for c in api.get("/calls", {"external_id": "crm-981"}).json()["items"]] == [call.pk]
    assert api.get("/calls", {"external_id": "crm-000"}).json()["count"] == 0
    for value in ("bistro", tenant.pk):
        assert [c["id"] for c in api.get("/calls", {"tenant": value}).json()["items"]] == [call.pk]
    assert_error(api.get("/calls", {"tenant": "nowhere"}), 422, "validation_error")  # named: no such tenant
    assert api.get("/assistants", {"tenant": "dental"}).json()["count"] == 1
    paged = api.get("/calls", {"limit": 1}).json()
    assert paged["count"] == 2 and paged["has_more"] is True
    assert api.get("/calls", {"limit": 1, "offset": 1}).json()["has_more"] is False


def test_it_filters_the_catalogue_by_provider_in_any_case(api, make_transcriber):
    make_transcriber("alpha")
    assert api.get("/transcribers", {"provider": "GENERIC"}).json()["count"] == 1


def test_it_lists_the_runs_of_the_organizations_banks_and_not_those_of_deleted_banks(
    api, run_setup, no_judge
):
    bank, cand, call_a, call_b = run_setup
    run = run_actions.do_cancel_run(run_actions.do_start_run(bank, [call_a.pk], confirmed=True))
    assert [r["id"] for r in api.get("/runs").json()["items"]] == [run.pk]
    assert api.get("/runs", {"status": "cancelled"}).json()["count"] == 1
    assert api.get("/runs", {"status": "done"}).json()["count"] == 0
    assert_error(api.get("/runs", {"status": "lost"}), 422, "validation_error")
    actions.do_delete_bank(bank)
    assert api.get("/runs").json()["count"] == 0  # out of every list...
    assert api.get(f"/runs/{run.pk}").json()["bank_id"] is None  # ...and still read by its id


def test_it_gives_the_results_of_a_fixed_period(api, bank, flag):
    today = flag.created_at.astimezone(UTC).date()
    day = timedelta(days=1)
    body = api.get(f"/banks/{bank.pk}/results", {"date_from": today, "date_to": today}).json()
    assert body["window_days"] is None and body["date_from"] == body["date_to"] == today.isoformat()
    assert body["candidates"][0]["scored"] == 2 and body["leader"]["transcriber_id"]
    for period in (
        {"date_to": today - day},
        {"date_from": today + day},
        {"date_from": today - 9 * day, "date_to": today - day},
    ):
        assert api.get(f"/banks/{bank.pk}/results", period).json()["candidates"][0]["scored"] == 0, period
    assert (
        api.get(f"/banks/{bank.pk}/results", {"date_from": today - day}).json()["candidates"][0]["scored"]
        == 2
    )
    assert_error(
        api.get(f"/banks/{bank.pk}/results", {"date_from": today, "date_to": today - day}),
        422,
        "validation_error",
    )


# ---------------------------------------------------------------- one format


def test_it_writes_money_times_and_positions_alike_in_json_and_csv(api, bank, flag):
    results = api.get(f"/banks/{bank.pk}/results").json()
    rows = list(
        csv.DictReader(
            io.StringIO(
                b"".join(api.get(f"/banks/{bank.pk}/results.csv").streaming_content).decode("utf-8-sig")
            )
        )
    )
    for card, row in zip(results["candidates"], rows, strict=False):
        assert row["order"] == str(
            card["position"] + 1
        )  # JSON positions from 0, the CSV's order as the screens
        assert row["audio_cost_usd"] == card["audio_cost"] and len(card["audio_cost"].split(".")[1]) == 6
    turns = api.get(f"/banks/{bank.pk}/turns", {"kind": "flags"}).json()["items"][0]
    csv_turns = list(
        csv.DictReader(
            io.StringIO(
                b"".join(api.get(f"/banks/{bank.pk}/turns.csv").streaming_content).decode("utf-8-sig")
            )
        )
    )
    assert csv_turns[0]["flagged_at"] == turns["flagged_at"] and turns["flagged_at"].endswith("Z")
    assert csv_turns[0]["call_started_at"] == turns["call_started_at"]
    assert len(turns["flagged_at"]) == len("2026-11-28T12:00:00Z")


def test_it_gives_no_audio_url_to_a_line_timed_past_its_recording(api, tenant, live_transcriber):
    call = make_call(tenant, live_transcriber, caller_texts=["one", "two"])
    call.lines.filter(position=2).update(start_s=600.0, end_s=601.0)
    lines = api.get(f"/calls/{call.pk}").json()["line_items"]
    assert lines[0]["audio_url"] and lines[2]["audio_url"] is None
    assert lines[2]["not_flaggable"]["code"] == "recording_unavailable"


def test_it_estimates_a_line_past_its_recording_as_the_run_then_does(api, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    estimate = api.post(f"/banks/{bank.pk}/runs/estimate", {"call_ids": [call_a.pk]}).json()
    line = call_a.lines.filter(speaker="caller").order_by("-position").first()
    line.start_s, line.end_s = 900.0, 901.0
    line.save()
    fewer = api.post(f"/banks/{bank.pk}/runs/estimate", {"call_ids": [call_a.pk]}).json()
    assert fewer["lines"] == estimate["lines"] - 1
    run = api.post(f"/banks/{bank.pk}/runs", {"call_ids": [call_a.pk], "confirm": True}).json()
    # The estimate's lines are those to transcribe; the run's, every line it replays (the transcribed ones too).
    assert (
        run["counts"]["lines"] == fewer["lines"] + fewer["already_transcribed"] and run["estimate"] == fewer
    )
    assert fewer["left_out_lines"] == 1 and fewer["left_out"][0]["reason"] == "past_recording_end"


# ---------------------------------------------------------------- messages


def test_it_says_the_judge_is_not_configured_without_naming_the_setting(api, run_setup, no_judge):
    from transcriber_tests.work import tasks as run_tasks

    bank, cand, call_a, call_b = run_setup
    run_id = api.post(f"/banks/{bank.pk}/runs", {"call_ids": [call_a.pk], "confirm": True}).json()["id"]
    run_tasks.drain_run(run_id, max_seconds=60)
    judge = api.get(f"/runs/{run_id}").json()["judge"]
    assert (
        judge["status"] == "not_configured" and judge["error"] == "the judge is not configured on this server"
    )
