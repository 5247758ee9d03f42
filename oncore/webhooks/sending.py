"""The sending of webhook deliveries: where a delivery may go, its signature, one attempt (claim, sign, POST,
record, back off) and the minutely round's reclaim of stale claims. Deliveries are an oncore.queue.WorkQueue
(DELIVERIES): pending rows are claimed when due, one attempt at a time; a failed attempt is due again after the
backoff (ONCORE_WEBHOOK_BACKOFF_S, doubled each attempt) until retry_until, then it is failed. The queue's entry
points, and the hand-over of deliveries to them, are in tasks.py; the connection of an attempt is transport.py."""

import hashlib
import hmac
import ipaddress
import logging
import socket
import time

import httpx
from django.utils import timezone

from oncore import queue
from oncore.config import config
from oncore.errors import ActionError

from . import transport
from .models import WebhookDelivery

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "OnCore-Signature"
USER_AGENT = "OnCore-Webhooks/1"
DUE_PER_ROUND = 500  # deliveries the minutely round hands to the queue at most


class UrlNotAllowed(ActionError):
    code = "webhook_url_not_allowed"
    status = 400


MAX_RESPONSE_BYTES = 64 * 1024  # of an answer's body read at most: only its status matters
# Seconds a name lookup may take before its attempt starts: the system resolver's own bound (glibc's defaults: 5 s
# a try, 2 tries, up to 3 name servers). The lookup is the one part of an attempt the deadline does not cover.
LOOKUP_S = 30.0
LEASE_MARGIN_S = 60.0  # the claim, the database writes, a busy machine


def _lease_s() -> float:
    """A claim older than this is stale: its sender died. The lease outlasts the longest attempt that is still
    running: the lookup (LOOKUP_S at most), then the exchange, cut at WEBHOOK_TIMEOUT_S from the connection to the
    last byte (one deadline, transport.py), then the answer's write, with LEASE_MARGIN_S to spare. So a delivery
    is never handed out again while its attempt runs (and an attempt that lost its claim writes nothing:
    DELIVERIES.finish)."""
    return LOOKUP_S + config().webhook_timeout_s + LEASE_MARGIN_S


DELIVERIES = queue.WorkQueue(
    WebhookDelivery,
    waiting=WebhookDelivery.PENDING,
    working=WebhookDelivery.SENDING,
    due="next_attempt_at",
    lease_s=_lease_s,
    stamp=None,
)


# ---------------------------------------------------------------- where a delivery may go

# Addresses that Python's `is_global` (3.11) lets through but that are no global unicast address: multicast, and
# the IPv6 forms that carry an IPv4 address a gateway would translate to (refused outright where nothing public
# uses them; the others are unwrapped below and their IPv4 address checked).
NOT_GLOBAL_UNICAST = tuple(
    ipaddress.ip_network(n)
    for n in (
        "224.0.0.0/4",  # IPv4 multicast
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "ff00::/8",  # IPv6 multicast
        "::/96",  # IPv4-compatible (deprecated), with :: and ::1
        "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
        "64:ff9b:1::/48",  # NAT64, local use
        "2001::/32",  # Teredo
        "fec0::/10",  # site-local (deprecated)
        "3fff::/20",  # documentation
    )
)
NAT64 = ipaddress.ip_network(
    "64:ff9b::/96"
)  # the well-known NAT64 prefix: the IPv4 address in its last 32 bits


def _allowed_networks():
    return [ipaddress.ip_network(n, strict=False) for n in config().webhook_allow_networks]


def embedded_ipv4(address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address leads to (IPv4-mapped, NAT64, 6to4), or None."""
    if address.version != 6:
        return None
    if address.ipv4_mapped:
        return address.ipv4_mapped
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def is_global_unicast(address) -> bool:
    """Whether events may be sent to this address: a global unicast address, and for the IPv6 forms that lead
    to an IPv4 address, that address too."""
    if address.is_multicast or not address.is_global or any(address in n for n in NOT_GLOBAL_UNICAST):
        return False
    inner = embedded_ipv4(address)
    return inner is None or is_global_unicast(inner)


def resolve(url: str) -> transport.Target:
    """The URL's host resolved once, each of its addresses checked: https to public addresses. Any address
    that is not global unicast (private, loopback, link-local, shared, reserved, multicast, or an IPv6 form
    leading to one of those) refuses the URL, unless the operator allowed its network
    (ONCORE_WEBHOOK_ALLOW_NETWORKS), where plain http is accepted too. An attempt connects to these addresses
    only (transport.py): the name is not looked up again. Checked when an endpoint is saved and before every
    attempt (a name may resolve elsewhere later)."""
    try:
        parsed = httpx.URL(url)
        host = parsed.raw_host.decode("ascii")
    except (httpx.InvalidURL, UnicodeError, TypeError, ValueError):
        raise UrlNotAllowed(
            "The URL cannot be read; send one like https://example.com/oncore-events."
        ) from None
    if parsed.scheme not in ("https", "http") or not host:
        raise UrlNotAllowed("The URL must start with https:// and name a host.")
    if parsed.userinfo:
        raise UrlNotAllowed("The URL must not carry a user name or password; events are signed instead.")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError, ValueError):
        raise UrlNotAllowed(f"The host {host[:100]!r} cannot be found; check the URL.") from None
    allowed = _allowed_networks()
    everywhere_allowed = True
    addresses = []
    for family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])
        addresses.append((family, sockaddr))
        unwrapped = address.ipv4_mapped if address.version == 6 and address.ipv4_mapped else address
        if any(address in network or unwrapped in network for network in allowed):
            continue
        everywhere_allowed = False
        if not is_global_unicast(address):
            raise UrlNotAllowed(
                f"{host[:100]} is a private, loopback, link-local, multicast or reserved address; events are "
                "sent to public addresses only."
            )
    if not addresses:
        raise UrlNotAllowed(f"The host {host[:100]!r} cannot be found; check the URL.")
    if parsed.scheme != "https" and not everywhere_allowed:
        raise UrlNotAllowed("Use an https:// URL: events carry your data and are sent over TLS only.")
    return transport.Target(url=url, host=host, port=port, addresses=tuple(dict.fromkeys(addresses)))


def check_url(url: str) -> str:
    """The URL if events may be sent there (resolve); an endpoint is saved with it."""
    resolve(url)
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
    (WEBHOOK_BACKOFF_S, doubled each attempt) until retry_until, then it is failed. The URL's host is resolved and
    checked once, and the connection goes to the address checked; the whole exchange has WEBHOOK_TIMEOUT_S.
    Redirects are not followed."""
    now = timezone.now()
    if not DELIVERIES.claim(delivery_id, now, last_attempt_at=now):
        return "skipped"
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    endpoint = delivery.endpoint
    status, error = None, ""
    try:
        if not endpoint.enabled:
            raise UrlNotAllowed("The endpoint is disabled; enable it, then send again.")
        status = post(
            resolve(endpoint.url),
            delivery.body.encode(),
            {
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                SIGNATURE_HEADER: signature_header(endpoint.secret, delivery.body),
                "OnCore-Event-Id": delivery.event_id,
                "OnCore-Event-Type": delivery.event_type,
            },
        )
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


def post(target: transport.Target, body: bytes, headers: dict) -> int:
    """POST to the checked target and return the answer's status. The exchange, from the connection to the
    last byte, ends by WEBHOOK_TIMEOUT_S; of the answer's body MAX_RESPONSE_BYTES are read at most, and a body
    still arriving at the deadline does not undo the status already received."""
    timeout_s = config().webhook_timeout_s
    deadline = transport.Deadline(timeout_s)
    with transport.client(target, deadline, timeout_s) as client:
        with client.stream("POST", target.url, content=body, headers=headers) as response:
            read = 0
            try:
                for chunk in response.iter_raw():
                    read += len(chunk)
                    if read >= MAX_RESPONSE_BYTES:
                        break
            except httpx.HTTPError:
                pass  # the status came; the rest of the body does not matter
            return response.status_code


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
