"""One pagination for every list that grows: calls, flags, runs and a webhook's deliveries take `after` and
answer `next_after`, walked to the end without a repeat or a gap, also while new items arrive; a cursor the site
did not write, and a tenant the organization does not have, are refused with 422 naming them."""

from datetime import timedelta

import pytest
from django.utils import timezone

from oncore.webhooks.models import WebhookDelivery
from tests.fixtures import assert_error, make_webhook
from transcriber_tests import actions
from transcriber_tests.models import Flag

pytestmark = pytest.mark.django_db


def _walk(api, path, params=None) -> list[int]:
    """Every id of a list, a page of two at a time, following next_after."""
    ids, after, pages = [], None, 0
    while True:
        body = api.get(path, {**(params or {}), "limit": 2, **({"after": after} if after else {})}).json()
        ids += [item["id"] for item in body["items"]]
        pages += 1
        assert body["has_more"] is (body["next_after"] is not None)
        after = body["next_after"]
        if after is None:
            return ids
        assert pages < 50


def test_it_walks_the_flags_by_cursor_newest_first_even_as_flags_arrive(api, recorded_call, bank):
    lines = list(recorded_call.lines.filter(speaker="caller").order_by("position"))
    made = [actions.do_flag_line(line, f"what was said {i}") for i, line in enumerate(lines[:3])]
    Flag.objects.filter(pk=made[0].pk).update(created_at=timezone.now() - timedelta(days=2))
    expected = [made[2].pk, made[1].pk, made[0].pk]
    assert _walk(api, "/flags") == expected
    first = api.get("/flags", {"limit": 1}).json()
    assert first["count"] == 3 and [f["id"] for f in first["items"]] == [made[2].pk]
    # A flag made after the first page was read does not shift the next one (an offset would repeat an item).
    actions.do_flag_line(lines[3], "a newer flag")
    rest = api.get("/flags", {"limit": 5, "after": first["next_after"]}).json()
    assert [f["id"] for f in rest["items"]] == [made[1].pk, made[0].pk] and rest["next_after"] is None


def test_it_walks_runs_and_deliveries_by_the_same_cursor(api, org, run_setup, no_judge):
    from transcriber_tests.actions import runs as run_actions

    bank, _candidate, call, _other = run_setup
    runs = []
    for _ in range(3):
        run = run_actions.do_start_run(bank, [call.pk], confirmed=True)
        run_actions.do_cancel_run(run)
        runs.append(run.pk)
    assert _walk(api, "/runs") == runs[::-1]
    assert _walk(api, f"/banks/{bank.pk}/runs") == runs[::-1]
    webhook, first = make_webhook(org)
    for n in range(2):
        WebhookDelivery.objects.create(
            endpoint=webhook,
            event_id=f"evt_{n}",
            event_type="run.finished",
            body="{}",
            next_attempt_at=timezone.now(),
            retry_until=timezone.now(),
        )
    deliveries = _walk(api, f"/webhooks/{webhook.pk}/deliveries")
    assert len(deliveries) == 3 and deliveries == sorted(deliveries, reverse=True) and first.pk in deliveries


def test_it_refuses_a_cursor_it_did_not_write(api):
    for path in ("/flags", "/runs", "/calls"):
        error = assert_error(api.get(path, {"after": "page-2"}), 422, "validation_error")
        assert error["detail"]["errors"][0]["loc"] == ["query", "after"]
        assert "cursor" in error["message"]


def test_it_names_a_tenant_the_organization_does_not_have(api, tenant, other_tenant):
    for path in ("/calls", "/assistants"):
        assert api.get(path, {"tenant": tenant.slug}).status_code == 200
        for unknown in ("no-such-tenant", other_tenant.slug, str(other_tenant.pk)):
            error = assert_error(api.get(path, {"tenant": unknown}), 422, "validation_error")
            assert f"No tenant {unknown!r} in this organization" in error["message"]
            assert "GET /organization" in error["message"]
