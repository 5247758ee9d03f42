"""Every write of webhooks (the dashboard's pages and the API call these), the events the product registers and
emits, and the sending of deliveries (the queue's step, `send`)."""

import hashlib
import hmac
import ipaddress
import json
import logging
import socket
import time
import uuid
from datetime import timedelta
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from oncore.errors import ActionError
from oncore.formats import iso_time

from .models import EventState, WebhookDelivery, WebhookEndpoint

log = logging.getLogger(__name__)

SEND_TASK = "oncore.webhooks.tasks.send"
SIGNATURE_HEADER = "OnCore-Signature"
USER_AGENT = "OnCore-Webhooks/1"
DUE_PER_ROUND = 500  # deliveries the minutely round hands to the queue at most

# Event type -> what it means; the product registers its own (register_events) when its app is ready.
EVENTS: dict[str, str] = {}


def register_events(*events: tuple[str, str]) -> None:
    for name, description in events:
        if EVENTS.get(name, description) != description:
            raise ValueError(f"Webhook event {name!r} is already registered differently.")
        EVENTS[name] = description


class UrlNotAllowed(ActionError):
    code = "webhook_url_not_allowed"
    status = 400


def _setting(name):
    return settings.ONCORE[name]


# ---------------------------------------------------------------- where a delivery may go


def _allowed_networks():
    return [ipaddress.ip_network(n, strict=False) for n in _setting("WEBHOOK_ALLOW_NETWORKS")]


def check_url(url: str) -> str:
    """The URL if events may be sent there: https to a public address. A private, loopback, link-local or
    reserved address is refused (the server must not be made to call inside its own network), unless the
    operator allowed its network (ONCORE_WEBHOOK_ALLOW_NETWORKS), where plain http is accepted too. Checked
    when an endpoint is saved and again before every attempt (a name may resolve elsewhere later)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise UrlNotAllowed(
            "The URL cannot be read; send one like https://example.com/oncore-events."
        ) from None
    if parts.scheme not in ("https", "http") or not host:
        raise UrlNotAllowed("The URL must start with https:// and name a host.")
    if parts.username or parts.password:
        raise UrlNotAllowed("The URL must not carry a user name or password; events are signed instead.")
    try:
        infos = socket.getaddrinfo(host, port or 443, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError, ValueError):
        raise UrlNotAllowed(f"The host {host[:100]!r} cannot be found; check the URL.") from None
    allowed = _allowed_networks()
    everywhere_allowed = True
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        if address.version == 6 and address.ipv4_mapped:
            address = address.ipv4_mapped
        if any(address in network for network in allowed):
            continue
        everywhere_allowed = False
        if not address.is_global:
            raise UrlNotAllowed(
                f"{host[:100]} is a private, loopback, link-local or reserved address; events are sent to "
                "public addresses only."
            )
    if parts.scheme != "https" and not everywhere_allowed:
        raise UrlNotAllowed("Use an https:// URL: events carry your data and are sent over TLS only.")
    return url


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


def do_create_endpoint(organization, *, url, events, description="", user=None) -> WebhookEndpoint:
    """A new endpoint; its secret (new_secret) is shown once, by the page or answer that created it."""
    return WebhookEndpoint.objects.create(
        organization=organization,
        url=check_url(url.strip()),
        events=_check_events(events),
        description=description.strip(),
        created_by=user if user is not None and user.is_authenticated else None,
    )


def do_update_endpoint(endpoint: WebhookEndpoint, **changes) -> WebhookEndpoint:
    """Change any of url, events, description, enabled; those not given stay."""
    if changes.get("url") is not None:
        endpoint.url = check_url(changes["url"].strip())
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
        retry_until=now + timedelta(hours=_setting("WEBHOOK_RETRY_HOURS")),
        claimed_at=None,
        error="",
    )
    _send_later([delivery.pk])
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
    until = now + timedelta(hours=_setting("WEBHOOK_RETRY_HOURS"))
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
    _send_later(list(due))
    return len(endpoints)


def _send_later(ids) -> None:
    from django_q.tasks import async_task

    if ids:
        transaction.on_commit(lambda: [async_task(SEND_TASK, pk, group="webhooks") for pk in ids])


# ---------------------------------------------------------------- sending


def signature(secret: str, timestamp: int, body: str) -> str:
    """The v1 signature: hex HMAC-SHA256 of "<timestamp>.<body>" with the endpoint's secret."""
    return hmac.new(secret.encode(), f"{timestamp}.{body}".encode(), hashlib.sha256).hexdigest()


def signature_header(secret: str, body: str, timestamp: int | None = None) -> str:
    timestamp = int(time.time()) if timestamp is None else timestamp
    return f"t={timestamp},v1={signature(secret, timestamp, body)}"


def _lease() -> timedelta:
    return timedelta(seconds=_setting("WEBHOOK_TIMEOUT_S") * 3 + 60)


def send(delivery_id: int) -> str:
    """One attempt: claim the delivery if it is due (a second delivery of the task finds it claimed), POST it
    signed, and record the answer: a 2xx delivers it; anything else is tried again after the backoff
    (WEBHOOK_BACKOFF_S, doubled each attempt) until retry_until, then it is failed. Redirects are not followed."""
    now = timezone.now()
    if not WebhookDelivery.objects.filter(
        pk=delivery_id, status=WebhookDelivery.PENDING, next_attempt_at__lte=now
    ).update(status=WebhookDelivery.SENDING, claimed_at=now, attempts=F("attempts") + 1, last_attempt_at=now):
        return "skipped"
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    endpoint = delivery.endpoint
    status, error = None, ""
    try:
        if not endpoint.enabled:
            raise UrlNotAllowed("The endpoint is disabled; enable it, then send again.")
        check_url(endpoint.url)
        response = httpx.post(
            endpoint.url,
            content=delivery.body.encode(),
            headers={
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                SIGNATURE_HEADER: signature_header(endpoint.secret, delivery.body),
                "OnCore-Event-Id": delivery.event_id,
                "OnCore-Event-Type": delivery.event_type,
            },
            timeout=_setting("WEBHOOK_TIMEOUT_S"),
            follow_redirects=False,
        )
        status = response.status_code
        if not 200 <= status < 300:
            error = f"The endpoint answered {status}; a 2xx answer is needed."
    except UrlNotAllowed as exc:
        error = exc.message
    except httpx.TimeoutException:
        error = "The endpoint did not answer in time."
    except httpx.HTTPError as exc:
        log.info("webhook delivery %s: %s: %s", delivery_id, exc.__class__.__name__, exc)
        error = f"The endpoint could not be reached ({exc.__class__.__name__})."
    return _record(delivery, status, error)


def _record(delivery: WebhookDelivery, status: int | None, error: str) -> str:
    now = timezone.now()
    held = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=WebhookDelivery.SENDING, claimed_at=delivery.claimed_at
    )
    if not error:
        held.update(
            status=WebhookDelivery.DELIVERED,
            response_status=status,
            error="",
            delivered_at=now,
            claimed_at=None,
        )
        return "delivered"
    next_at = now + timedelta(seconds=_setting("WEBHOOK_BACKOFF_S") * 2 ** (delivery.attempts - 1))
    final = next_at > delivery.retry_until
    held.update(
        status=WebhookDelivery.FAILED if final else WebhookDelivery.PENDING,
        response_status=status,
        error=error[:500],
        next_attempt_at=next_at,
        claimed_at=None,
    )
    return "failed" if final else "retry"


def send_due() -> int:
    """The minutely round: deliveries whose sender died go back to pending, and every due delivery is handed to
    the queue. Returns how many were handed on."""
    now = timezone.now()
    WebhookDelivery.objects.filter(status=WebhookDelivery.SENDING, claimed_at__lt=now - _lease()).update(
        status=WebhookDelivery.PENDING, claimed_at=None
    )
    due = list(
        WebhookDelivery.objects.filter(Q(status=WebhookDelivery.PENDING), next_attempt_at__lte=now)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:DUE_PER_ROUND]
    )
    with transaction.atomic():
        _send_later(due)
    return len(due)


def send_due_now() -> int:
    """One round in this process: every due delivery gets one attempt (tests and demos; the workers do it in
    production). Returns the attempts made."""
    due = WebhookDelivery.objects.filter(status=WebhookDelivery.PENDING, next_attempt_at__lte=timezone.now())
    return sum(send(pk) != "skipped" for pk in list(due.order_by("id").values_list("pk", flat=True)))
