"""Every write of webhooks (the dashboard's pages and the API call these) and the events the product registers and
emits. Deliveries are handed to the queue (tasks.send_later) once the transaction that made them commits; their
sending is sending.py."""

import json
import uuid
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from oncore.accounts.models import Organization
from oncore.config import config
from oncore.errors import ActionError
from oncore.formats import iso_time

from . import sending, tasks
from .models import EventState, WebhookDelivery, WebhookEndpoint

# Event type -> what it means, and the schema of its `data`; the product registers its own (register_events) when
# its app is ready.
EVENTS: dict[str, str] = {}
EVENT_DATA: dict[str, type] = {}


def register_events(*events: tuple) -> None:
    """Each event as (type, what it means, the Schema of its `data`)."""
    for name, description, data in events:
        if EVENTS.get(name, description) != description:
            raise ValueError(f"Webhook event {name!r} is already registered differently.")
        EVENTS[name] = description
        EVENT_DATA[name] = data


# ---------------------------------------------------------------- endpoints


def _check_events(events) -> list[str]:
    unknown = [e for e in events if e not in EVENTS]
    if unknown or not events:
        raise ActionError(
            f"Choose one or more of the events {', '.join(EVENTS)}"
            + (f"; {', '.join(map(repr, unknown))} is not one." if unknown else "."),
            {"events": list(EVENTS)},
        )
    return list(dict.fromkeys(events))


class EndpointLimitReached(ActionError):
    code = "webhook_limit_reached"
    status = 409


def do_create_endpoint(organization, *, url, events, description="", user=None) -> WebhookEndpoint:
    """A new endpoint; its secret (new_secret) is shown once, by the page or answer that created it. An
    organization has WEBHOOK_MAX_ENDPOINTS at most (each event is sent to each of them, so endpoints multiply
    the deliveries the workers make); the organization's row is locked while they are counted, so two requests
    at once cannot both take the last place."""
    url = sending.check_url(url.strip())
    events = _check_events(events)
    limit = config().webhook_max_endpoints
    with transaction.atomic():
        Organization.objects.select_for_update().filter(pk=organization.pk).first()
        count = WebhookEndpoint.objects.filter(organization=organization).count()
        if count >= limit:
            raise EndpointLimitReached(
                f"This organization has {count} webhook endpoints, the most it may have ({limit}). Delete one "
                "it no longer uses, or subscribe an existing endpoint to more events (one endpoint can take "
                "every event), then try again.",
                {"count": count, "limit": limit},
            )
        return WebhookEndpoint.objects.create(
            organization=organization,
            url=url,
            events=events,
            description=description.strip(),
            created_by=user if user is not None and user.is_authenticated else None,
        )


def do_update_endpoint(endpoint: WebhookEndpoint, **changes) -> WebhookEndpoint:
    """Change any of url, events, description, enabled; those not given stay."""
    if changes.get("url") is not None:
        endpoint.url = sending.check_url(changes["url"].strip())
    if changes.get("events") is not None:
        endpoint.events = _check_events(changes["events"])
    if changes.get("description") is not None:
        endpoint.description = changes["description"].strip()
    if changes.get("enabled") is not None:
        endpoint.enabled = changes["enabled"]
    endpoint.save(update_fields=["url", "events", "description", "enabled"])
    return endpoint


def do_delete_endpoint(endpoint: WebhookEndpoint) -> None:
    """Delete an endpoint with its delivery log; nothing more is sent to it."""
    endpoint.delete()


def do_send_again(delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a delivery again (delivered or not): due now, retried as a new one would be."""
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=WebhookDelivery.PENDING,
        next_attempt_at=now,
        retry_until=now + timedelta(hours=config().webhook_retry_hours),
        claimed_at=None,
        error="",
    )
    tasks.send_later([delivery.pk])
    delivery.refresh_from_db()
    return delivery


# ---------------------------------------------------------------- events


def subscribed(organization_id: int, event_type: str) -> list[WebhookEndpoint]:
    """The organization's enabled endpoints that want this event (read in Python: JSON lookups differ between
    databases, and an organization has a few endpoints)."""
    return [
        e
        for e in WebhookEndpoint.objects.filter(organization_id=organization_id, enabled=True)
        if event_type in e.events
    ]


def wants(organization_id: int, event_type: str) -> bool:
    return bool(subscribed(organization_id, event_type))


def organizations_wanting(event_type: str) -> list[int]:
    """The organizations with an enabled endpoint that wants this event."""
    return sorted(
        {e.organization_id for e in WebhookEndpoint.objects.filter(enabled=True) if event_type in e.events}
    )


def record_change(organization_id: int, subject: str, value: str) -> str | None:
    """Record the subject's value now. Returns the value recorded before ("" when none was) if it changed,
    else None; two callers recording one change at once see it changed once (a conditional update)."""
    now = timezone.now()
    state = EventState.objects.filter(organization_id=organization_id, subject=subject).first()
    if state is None:
        try:
            with transaction.atomic():
                EventState.objects.create(
                    organization_id=organization_id, subject=subject, value=value, checked_at=now
                )
        except IntegrityError:
            return None
        return "" if value else None
    if state.value == value:
        EventState.objects.filter(pk=state.pk).update(checked_at=now)
        return None
    moved = EventState.objects.filter(pk=state.pk, value=state.value).update(value=value, checked_at=now)
    return state.value if moved else None


def emit(organization_id: int, event_type: str, data: dict, *, event_id: str = "", encoder=None) -> int:
    """Record the event for each endpoint that wants it, in the current transaction, and send it once that
    commits: the change that caused it never waits for a receiver. `event_id` makes emitting one event twice
    harmless (one delivery per endpoint and event); `encoder` is a JSONEncoder for the values in `data`.
    Returns the number of endpoints."""
    if event_type not in EVENTS:
        raise ValueError(f"Unknown webhook event {event_type!r}.")
    endpoints = subscribed(organization_id, event_type)
    if not endpoints:
        return 0
    now = timezone.now()
    event_id = event_id or f"evt_{uuid.uuid4().hex}"
    body = json.dumps(
        {"id": event_id, "type": event_type, "created_at": iso_time(now), "data": data}, cls=encoder
    )
    until = now + timedelta(hours=config().webhook_retry_hours)
    WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(
                endpoint=e,
                event_id=event_id,
                event_type=event_type,
                body=body,
                next_attempt_at=now,
                retry_until=until,
            )
            for e in endpoints
        ],
        ignore_conflicts=True,
    )
    due = WebhookDelivery.objects.filter(
        event_id=event_id, endpoint__in=endpoints, status=WebhookDelivery.PENDING, attempts=0
    ).values_list("pk", flat=True)
    tasks.send_later(list(due))
    return len(endpoints)
