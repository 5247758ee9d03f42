"""The sending of webhook deliveries: where a delivery may go, its signature, one attempt (claim, sign, POST,
record, back off) and the minutely round's reclaim of stale claims. Deliveries are an oncore.queue.WorkQueue
(DELIVERIES): pending rows are claimed when due, one attempt at a time; a failed attempt is due again after the
backoff (ONCORE_WEBHOOK_BACKOFF_S, doubled each attempt) until retry_until, then it is failed. The queue's entry
points, and the hand-over of deliveries to them, are in tasks.py."""

import hashlib
import hmac
import ipaddress
import logging
import socket
import time
from urllib.parse import urlsplit

import httpx
from django.utils import timezone

from oncore import queue
from oncore.config import config
from oncore.errors import ActionError

from .models import WebhookDelivery

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "OnCore-Signature"
USER_AGENT = "OnCore-Webhooks/1"
DUE_PER_ROUND = 500  # deliveries the minutely round hands to the queue at most


class UrlNotAllowed(ActionError):
    code = "webhook_url_not_allowed"
    status = 400


def _lease_s() -> float:
    """A claim older than this is stale: its sender died (an attempt waits WEBHOOK_TIMEOUT_S at most)."""
    return config().webhook_timeout_s * 3 + 60


DELIVERIES = queue.WorkQueue(
    WebhookDelivery,
    waiting=WebhookDelivery.PENDING,
    working=WebhookDelivery.SENDING,
    due="next_attempt_at",
    lease_s=_lease_s,
    stamp=None,
)


# ---------------------------------------------------------------- where a delivery may go


def _allowed_networks():
    return [ipaddress.ip_network(n, strict=False) for n in config().webhook_allow_networks]


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


# ---------------------------------------------------------------- signing


def signature(secret: str, timestamp: int, body: str) -> str:
    """The v1 signature: hex HMAC-SHA256 of "<timestamp>.<body>" with the endpoint's secret."""
    return hmac.new(secret.encode(), f"{timestamp}.{body}".encode(), hashlib.sha256).hexdigest()


def signature_header(secret: str, body: str, timestamp: int | None = None) -> str:
    timestamp = int(time.time()) if timestamp is None else timestamp
    return f"t={timestamp},v1={signature(secret, timestamp, body)}"


# ---------------------------------------------------------------- attempts


def attempt(delivery_id: int) -> str:
    """One attempt: claim the delivery if it is due (a second delivery of the task finds it claimed), POST it
    signed, and record the answer: a 2xx delivers it; anything else is tried again after the backoff
    (WEBHOOK_BACKOFF_S, doubled each attempt) until retry_until, then it is failed. Redirects are not followed."""
    now = timezone.now()
    if not DELIVERIES.claim(delivery_id, now, last_attempt_at=now):
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
            timeout=config().webhook_timeout_s,
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
    """Write the attempt's answer while the claim holds: delivered, due again after the backoff, or failed once
    the next attempt would fall after retry_until."""
    now = timezone.now()
    if not error:
        DELIVERIES.finish(
            delivery, status=WebhookDelivery.DELIVERED, response_status=status, error="", delivered_at=now
        )
        return "delivered"
    again = DELIVERIES.retry_fields(delivery, config().webhook_backoff_s, now=now)
    final = again["next_attempt_at"] > delivery.retry_until
    if final:
        again["status"] = WebhookDelivery.FAILED
    DELIVERIES.finish(delivery, response_status=status, error=error[:500], **again)
    return "failed" if final else "retry"


def due() -> list[int]:
    """The minutely round's deliveries: those whose sender died go back to pending, then the due ones, the
    longest waiting first (DUE_PER_ROUND at most)."""
    DELIVERIES.reclaim_stale()
    return list(DELIVERIES.ready(order_by="next_attempt_at")[:DUE_PER_ROUND])


def send_due_now() -> int:
    """One round in this process: every due delivery gets one attempt (tests and demos; the workers do it in
    production). Returns the attempts made."""
    return sum(attempt(pk) != "skipped" for pk in list(DELIVERIES.ready()))
