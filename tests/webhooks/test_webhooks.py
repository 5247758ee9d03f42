"""Webhooks over the API, against a real receiver on 127.0.0.1 that verifies every signature: endpoints (the
secret shown once), the four events, sending from the queue after the change commits, retries with backoff for
a day, the delivery log and "send again", and the addresses an endpoint may not reach."""

from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from oncore.webhooks import sending as webhooks
from oncore.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.fixtures import assert_error
from tests.transcriber_tests.support import scripted_judge
from tests.webhooks.receiver import verify
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run
from transcriber_tests.work import events, tasks
from transcriber_tests.work import tasks as run_tasks

pytestmark = pytest.mark.django_db


def _register(api, receiver, events_wanted):
    response = api.post("/webhooks", {"url": receiver.url, "events": events_wanted, "description": "tests"})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["secret"].startswith("whsec_") and response["Location"] == f"/api/v1/webhooks/{body['id']}"
    receiver.secret = body["secret"]
    return body


def test_it_registers_an_endpoint_and_shows_its_secret_once(api, receiver):
    created = _register(api, receiver, ["run.finished", "flag.scored"])
    assert created["events"] == ["run.finished", "flag.scored"] and created["enabled"] is True
    shown = api.get(f"/webhooks/{created['id']}").json()
    assert "secret" not in shown and shown["url"] == receiver.url
    listed = api.get("/webhooks").json()
    assert listed["count"] == 1 and "secret" not in listed["items"][0] and listed["has_more"] is False
    edited = api.patch(f"/webhooks/{created['id']}", {"events": ["bank.leader_changed"], "enabled": False})
    assert edited.json()["events"] == ["bank.leader_changed"] and edited.json()["enabled"] is False
    assert_error(api.post("/webhooks", {"url": receiver.url, "events": []}), 422, "validation_error")
    assert_error(
        api.post("/webhooks", {"url": receiver.url, "events": ["run.started"]}), 422, "validation_error"
    )
    assert api.delete(f"/webhooks/{created['id']}").status_code == 204
    assert_error(api.get(f"/webhooks/{created['id']}"), 404, "not_found")


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.7/hook",
        "https://192.168.1.20/hook",
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://[::1]/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://0.0.0.0/hook",
        "https://user:password@127.0.0.1/hook",
        "ftp://127.0.0.1/hook",
        "not a url",
    ],
)
def test_it_refuses_endpoints_on_private_loopback_and_link_local_addresses(api, url):
    error = assert_error(
        api.post("/webhooks", {"url": url, "events": ["run.finished"]}), 400, "webhook_url_not_allowed"
    )
    assert "ONCORE_" not in error["message"]  # the message says the rule, not the server's settings
    assert not WebhookEndpoint.objects.exists()


def test_it_lets_a_setting_allow_a_private_network_and_checks_again_before_sending(
    api, receiver, settings, run_setup, no_judge
):
    assert_error(
        api.post("/webhooks", {"url": "https://10.1.2.3/hook", "events": ["run.finished"]}),
        400,
        "webhook_url_not_allowed",
    )
    _register(api, receiver, ["run.finished"])  # http to 127.0.0.1: allowed by the setting
    bank, cand, call_a, call_b = run_setup
    run = run_actions.do_start_run(bank, [call_a.pk], confirmed=True)
    run_actions.do_cancel_run(run)
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_ALLOW_NETWORKS": []}
    assert webhooks.send_due_now() == 1
    delivery = WebhookDelivery.objects.get()
    assert (
        delivery.status == "pending" and "public addresses only" in delivery.error and receiver.events == []
    )


def test_it_sends_run_finished_signed_from_the_queue_once_the_cancel_commits(
    api, receiver, run_setup, no_judge, django_capture_on_commit_callbacks, queue_now
):
    _register(api, receiver, ["run.finished"])
    bank, cand, call_a, call_b = run_setup
    run_id = api.post(f"/banks/{bank.pk}/runs", {"call_ids": [call_a.pk], "confirm": True}).json()["id"]
    with django_capture_on_commit_callbacks() as callbacks:
        cancelled = api.post(f"/runs/{run_id}/cancel")
        assert (
            cancelled.status_code == 200 and receiver.events == []
        )  # the request never waits for a receiver
    assert WebhookDelivery.objects.get().status == "pending"
    for callback in callbacks:
        callback()  # the commit: the queue sends it
    assert "oncore.webhooks.tasks.send" in queue_now
    (event,) = receiver.events
    assert (
        event["type"] == "run.finished"
        and event["id"].startswith("evt_")
        and event["created_at"].endswith("Z")
    )
    assert event["data"]["run"] == api.get(f"/runs/{run_id}").json()  # the run as the API shows it
    assert event["data"]["run"]["status"] == "cancelled" and receiver.refused == []
    headers = receiver.headers[-1]
    assert headers["oncore-event-type"] == "run.finished" and headers["oncore-event-id"] == event["id"]
    assert headers["content-type"] == "application/json"
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("delivered", 1, 200)


def test_it_retries_with_a_growing_backoff_for_a_day_then_fails(api, receiver, settings, run_setup, no_judge):
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_BACKOFF_S": 60.0, "WEBHOOK_RETRY_HOURS": 24.0}
    _register(api, receiver, ["run.finished"])
    bank, cand, call_a, call_b = run_setup
    run_actions.do_cancel_run(run_actions.do_start_run(bank, [call_a.pk], confirmed=True))
    receiver.statuses = [500, 503]
    delivery = WebhookDelivery.objects.get()
    waits = []
    for _ in range(2):
        before = timezone.now()
        assert webhooks.send_due_now() == 1
        delivery.refresh_from_db()
        waits.append(round((delivery.next_attempt_at - before).total_seconds() / 60))
        assert delivery.status == "pending" and "answered 50" in delivery.error
        assert webhooks.send_due_now() == 0  # not due before its backoff
        WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    assert waits == [1, 2] and delivery.attempts == 2 and delivery.response_status == 503
    assert webhooks.send_due_now() == 1
    delivery.refresh_from_db()
    assert delivery.status == "delivered" and len(receiver.events) == 1

    # A receiver that stays down: once the next try would fall after the day, the delivery is failed.
    run_actions.do_cancel_run(run_actions.do_start_run(bank, [call_b.pk], confirmed=True))
    late = WebhookDelivery.objects.get(status="pending")
    WebhookDelivery.objects.filter(pk=late.pk).update(retry_until=timezone.now() + timedelta(seconds=30))
    receiver.statuses = [500]
    webhooks.send_due_now()
    late.refresh_from_db()
    assert late.status == "failed" and late.attempts == 1


def test_it_keeps_a_delivery_log_and_sends_again(api, receiver, run_setup, no_judge):
    hook = _register(api, receiver, ["run.finished"])
    bank, cand, call_a, call_b = run_setup
    run_actions.do_cancel_run(run_actions.do_start_run(bank, [call_a.pk], confirmed=True))
    receiver.statuses = [410]
    webhooks.send_due_now()
    log = api.get(f"/webhooks/{hook['id']}/deliveries").json()
    (item,) = log["items"]
    assert item["status"] == "pending" and item["attempts"] == 1 and item["response_status"] == 410
    assert item["event_type"] == "run.finished" and item["next_attempt_at"].endswith("Z")
    detail = api.get(f"/webhooks/{hook['id']}/deliveries/{item['id']}").json()
    assert detail["event"]["data"]["run"]["status"] == "cancelled"
    assert api.get(f"/webhooks/{hook['id']}/deliveries", {"status": "delivered"}).json()["count"] == 0
    again = api.post(f"/webhooks/{hook['id']}/deliveries/{item['id']}/send-again")
    assert again.status_code == 202 and again.json()["status"] == "pending"
    webhooks.send_due_now()
    assert api.get(f"/webhooks/{hook['id']}/deliveries/{item['id']}").json()["status"] == "delivered"
    # Sent again once delivered: the receiver gets it a second time, with the same event id.
    api.post(f"/webhooks/{hook['id']}/deliveries/{item['id']}/send-again")
    webhooks.send_due_now()
    assert [e["id"] for e in receiver.events] == [item["event_id"]] * 2
    assert_error(api.post(f"/webhooks/{hook['id']}/deliveries/999999/send-again"), 404, "not_found")


def test_it_announces_a_flag_once_every_candidate_scored_it(
    api, receiver, bank, recorded_call, django_capture_on_commit_callbacks, queue_now
):
    _register(api, receiver, ["flag.scored"])
    line = recorded_call.lines.get(position=0)
    flag = api.post(
        "/flags",
        {"line_id": line.pk, "expected_text": "Siobhan, table for four at eight thirty", "bank_id": bank.pk},
    ).json()
    with django_capture_on_commit_callbacks(execute=True):
        tasks.drain()
    webhooks.send_due_now()
    (event,) = receiver.events
    assert event["type"] == "flag.scored" and event["data"]["flag"]["id"] == flag["id"]
    good, bad = event["data"]["candidates"]
    assert good["match"] is True and bad["match"] is False and good["scored"] and bad["scored"]
    assert event["data"]["production"]["text"] == line.text
    # Announced again for the same scores: one event (its id comes from the scores).
    events.announce_scores([line.pk])
    assert WebhookDelivery.objects.count() == 1
    # A new expected text re-scores the flag: a new event.
    with django_capture_on_commit_callbacks(execute=True):
        api.patch(f"/flags/{flag['id']}", {"expected_text": "Shivon table for four at 830"})
    webhooks.send_due_now()
    assert len(receiver.events) == 2 and receiver.events[1]["data"]["candidates"][1]["match"] is True


def test_it_announces_a_new_leader_once(api, receiver, bank, flag, make_transcriber):
    _register(api, receiver, ["bank.leader_changed"])
    assert events.check_leaders() == 1  # the first check after subscribing announces the leader
    assert events.check_leaders() == 0  # nothing changed
    webhooks.send_due_now()
    (first,) = receiver.events
    assert first["data"]["leader"]["slug"] == "test-good" and first["data"]["previous_leader"] is None
    assert first["data"]["bank"]["id"] == bank.pk and first["data"]["window_days"] == 30
    good = bank.candidates.get(position=0).transcriber
    actions.do_remove_candidate(bank, good)
    bank.refresh_from_db()
    assert events.check_leaders() == 1
    webhooks.send_due_now()
    second = receiver.events[1]["data"]
    assert second["leader"]["slug"] == "test-bad" and second["previous_leader"]["slug"] == "test-good"


def test_a_leader_whose_event_could_not_be_recorded_is_announced_at_the_next_check(
    api, receiver, bank, flag, monkeypatch
):
    """The leader is remembered only with its event: a failure between the two (a locked database, a killed
    worker) leaves the change to be found again, not silently swallowed."""
    _register(api, receiver, ["bank.leader_changed"])

    def database_locked(*args, **kwargs):
        raise OperationalError("database is locked")

    with monkeypatch.context() as patched:
        patched.setattr(events, "_emit", database_locked)
        with pytest.raises(OperationalError):
            events.check_leaders()
    assert events.check_leaders() == 1
    webhooks.send_due_now()
    (event,) = receiver.events
    assert event["data"]["leader"]["slug"] == "test-good"


def test_it_sends_judge_failed_and_finished_when_a_runs_judge_fails(
    api, receiver, run_setup, llm_server, settings
):
    from tests.llm_server import error

    settings.ANTHROPIC_MAX_RETRIES = 0
    _register(api, receiver, ["run.judge_failed", "run.finished"])
    bank, cand, call_a, call_b = run_setup
    answers = iter([scripted_judge, lambda body: error(500)])
    llm_server.responder = lambda body: next(answers)(body)
    run_id = api.post(f"/banks/{bank.pk}/runs", {"call_ids": [call_a.pk, call_b.pk], "confirm": True}).json()[
        "id"
    ]
    assert run_tasks.drain_run(run_id, max_seconds=60) == Run.DONE
    webhooks.send_due_now()
    assert sorted(e["type"] for e in receiver.events) == ["run.finished", "run.judge_failed"]
    failed = next(e for e in receiver.events if e["type"] == "run.judge_failed")["data"]["run"]
    assert failed["judge"]["status"] == "failed" and "127.0.0.1" not in failed["judge"]["error"]


def test_it_signs_with_the_endpoints_secret_over_the_timestamp_and_body():
    body = '{"id": "evt_1"}'
    header = webhooks.signature_header("whsec_test", body, timestamp=1_700_000_000)
    assert header.startswith("t=1700000000,v1=")
    assert verify("whsec_test", header, body.encode(), now=1_700_000_100)
    assert not verify("whsec_other", header, body.encode(), now=1_700_000_100)
    assert not verify("whsec_test", header, body.encode() + b" ", now=1_700_000_100)
    assert not verify("whsec_test", header, body.encode(), now=1_700_001_000)  # too old: a replay


def test_it_hides_another_organizations_endpoints(api, other_api, receiver):
    hook = _register(api, receiver, ["run.finished"])
    assert other_api.get("/webhooks").json()["count"] == 0
    for response in (
        other_api.get(f"/webhooks/{hook['id']}"),
        other_api.patch(f"/webhooks/{hook['id']}", {"enabled": False}),
        other_api.delete(f"/webhooks/{hook['id']}"),
        other_api.get(f"/webhooks/{hook['id']}/deliveries"),
    ):
        assert_error(response, 404, "not_found")
    assert WebhookEndpoint.objects.get().enabled is True
