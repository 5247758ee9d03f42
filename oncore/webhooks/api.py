"""Webhook endpoints and their delivery logs over the API (/api/v1/webhooks). Mounted by oncore/urls.py once the
product apps have registered their events (their apps' ready())."""

import re
from datetime import datetime
from typing import Any, Literal

from django.urls import reverse
from ninja import Field, Query, Router, Schema
from ninja.responses import Status
from pydantic import create_model, field_validator

from oncore import idempotency
from oncore.api import (
    BodyIn,
    CursorIn,
    CursorPage,
    Detail,
    ErrorCode,
    Page,
    PageIn,
    Text,
    created,
    cursor_page,
    doc,
    get_or_404,
    page,
    register_error_codes,
)
from oncore.names import check_name

from . import actions
from .models import WebhookDelivery, WebhookEndpoint


class EndpointLimitDetail(Detail):
    count: int = Field(description="The organization's endpoints.")
    limit: int = Field(description="The most it may have.")


class EventsDetail(Detail):
    events: list[str] | None = Field(
        None, description="The events an endpoint can take, when those sent were not."
    )


register_error_codes(
    ErrorCode(
        "webhook_url_not_allowed",
        400,
        "Events cannot be sent to this URL",
        "Use an https:// URL whose host resolves to public (global unicast) addresses only: private, loopback, "
        "link-local, shared, reserved and multicast addresses are refused, and so are the IPv6 forms that lead "
        "to one (IPv4-compatible, IPv4-translated, NAT64, 6to4, Teredo), as are URLs with a user name or "
        "password. The message says which rule the URL broke.",
        "webhooks",
    ),
    ErrorCode(
        "webhook_limit_reached",
        409,
        "The organization has as many webhook endpoints as it may",
        "Delete an endpoint you no longer use, or subscribe an existing one to more events (one endpoint can "
        "take every event), then create it again. `detail.limit` is the most an organization may have "
        "(the operator sets it: `ONCORE_WEBHOOK_MAX_ENDPOINTS`).",
        "webhooks",
        detail=EndpointLimitDetail,
    ),
)

router = Router(tags=["Webhooks"])
TAG = (
    "Endpoints that receive the events as they happen (signed POSTs, retried with backoff), and each endpoint's "
    "delivery log. The events' payloads and signature headers are under `webhooks`."
)

EventType = Literal[tuple(actions.EVENTS)]
DeliveryStatus = Literal["pending", "sending", "delivered", "failed"]
EVENTS_HELP = "The events to send: " + "; ".join(f"`{name}`: {text}" for name, text in actions.EVENTS.items())


class WebhookIn(BodyIn):
    url: Text = Field(max_length=500, description="Where to POST the events: https, a public address.")
    events: list[EventType] = Field(min_length=1, max_length=len(actions.EVENTS), description=EVENTS_HELP)
    description: Text = Field("", max_length=200, description="What the endpoint is for.")

    _description = field_validator("description")(check_name)


class WebhookEdit(BodyIn):
    url: Text | None = Field(None, max_length=500)
    events: list[EventType] | None = Field(None, min_length=1, max_length=len(actions.EVENTS))
    description: Text | None = Field(None, max_length=200)
    enabled: bool | None = Field(None, description="false: nothing is sent until it is enabled again.")

    _description = field_validator("description")(check_name)


class WebhookOut(Schema):
    id: int
    url: str
    events: list[EventType]
    description: str
    enabled: bool
    created_at: datetime


class WebhookCreated(WebhookOut):
    secret: str | None = Field(
        description="The signing secret, shown this once: keep it to check the OnCore-Signature header. null "
        "in a replay of the request (the same Idempotency-Key): the secret is in the first answer only."
    )
    secret_withheld: bool = Field(
        description="true when this answer replays an earlier one (Idempotency-Key) and so leaves the secret "
        "out: it was shown once, in the first answer, and is kept nowhere it could be shown again. Lost? Delete "
        "the endpoint and create another."
    )


class WebhookPage(Page):
    items: list[WebhookOut]


class DeliveryOut(Schema):
    id: int
    event_id: str
    event_type: EventType
    status: DeliveryStatus
    attempts: int
    response_status: int | None = Field(description="The endpoint's HTTP status on the last attempt.")
    error: str = Field(description="Why the last attempt failed; empty once delivered.")
    created_at: datetime
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None = Field(description="When it is tried next, while pending.")
    delivered_at: datetime | None


class DeliveryDetail(DeliveryOut):
    event: dict[str, Any] = Field(description="The body sent: {id, type, created_at, data}.")


class DeliveryPage(CursorPage):
    items: list[DeliveryOut]


class DeliveryFilters(CursorIn):
    status: DeliveryStatus | None = Field(None, description="Only deliveries in this status.")


def _event_schema(name: str):
    """The body of one event: {id, type, created_at, data} with its own `data`."""
    return create_model(
        "".join(part.capitalize() for part in re.split(r"[._]", name)) + "Event",
        __base__=Schema,
        __doc__=f"The `{name}` event: {actions.EVENTS[name]}.",
        id=(str, Field(description="evt_...: the same id when an event is sent again; do its work once.")),
        type=(Literal[name], ...),
        created_at=(datetime, ...),
        data=(actions.EVENT_DATA[name], ...),
    )


def describe(api) -> None:
    """Describe the webhooks on the API's schema: the router's tag and each registered event's payload."""
    api.describe_tag("Webhooks", TAG)
    for name, description in actions.EVENTS.items():
        api.add_webhook(name, f"Sent when {description}.", _event_schema(name))


def _endpoint(request, webhook_id) -> WebhookEndpoint:
    return get_or_404(
        WebhookEndpoint.objects.filter(organization=request.org), webhook_id, "webhook endpoint"
    )


def _delivery(endpoint, delivery_id) -> WebhookDelivery:
    return get_or_404(endpoint.deliveries.all(), delivery_id, "delivery of this endpoint")


def _webhook_out(e: WebhookEndpoint) -> dict:
    return {
        "id": e.pk,
        "url": e.url,
        "events": e.events,
        "description": e.description,
        "enabled": e.enabled,
        "created_at": e.created_at,
    }


def _delivery_out(d: WebhookDelivery) -> dict:
    return {
        "id": d.pk,
        "event_id": d.event_id,
        "event_type": d.event_type,
        "status": d.status,
        "attempts": d.attempts,
        "response_status": d.response_status,
        "error": d.error,
        "created_at": d.created_at,
        "last_attempt_at": d.last_attempt_at,
        "next_attempt_at": d.next_attempt_at if d.status == WebhookDelivery.PENDING else None,
        "delivered_at": d.delivered_at,
    }


@router.get("/webhooks", **doc(200, WebhookPage, "The organization's webhook endpoints, newest first."))
def list_webhooks(request, q: Query[PageIn]):
    """The organization's endpoints (at most ONCORE_WEBHOOK_MAX_ENDPOINTS, 10 by default), newest first."""
    return page(WebhookEndpoint.objects.filter(organization=request.org), q, _webhook_out)


@router.post(
    "/webhooks",
    **doc(
        201,
        WebhookCreated,
        "The new endpoint, with its secret.",
        "invalid_request",
        "webhook_url_not_allowed",
        "webhook_limit_reached",
        details={"invalid_request": EventsDetail},
    ),
)
def create_webhook(request, body: WebhookIn):
    """Register an endpoint. The answer carries its signing secret: the only time it is shown (a replay of the
    request with its Idempotency-Key answers the endpoint with `secret` null and `secret_withheld` true)."""
    e = actions.do_create_endpoint(
        request.org, url=body.url, events=body.events, description=body.description
    )
    shown = {**_webhook_out(e), "secret": e.secret, "secret_withheld": False}
    idempotency.replay_as(request, {**shown, "secret": None, "secret_withheld": True})
    return created(request, reverse("api:get_webhook", args=[e.pk]), shown)


@router.get("/webhooks/{int:webhook_id}", **doc(200, WebhookOut, "The endpoint.", "not_found"))
def get_webhook(request, webhook_id: int):
    """One endpoint: its URL, events, description and whether it is enabled (its secret is shown only when it is
    created)."""
    return _webhook_out(_endpoint(request, webhook_id))


@router.patch(
    "/webhooks/{int:webhook_id}",
    **doc(
        200,
        WebhookOut,
        "The edited endpoint.",
        "invalid_request",
        "not_found",
        "webhook_url_not_allowed",
        details={"invalid_request": EventsDetail},
    ),
)
def edit_webhook(request, webhook_id: int, body: WebhookEdit):
    """Change the URL, the events, the description or whether it is enabled; fields left out stay."""
    endpoint = _endpoint(request, webhook_id)
    return _webhook_out(actions.do_update_endpoint(endpoint, **body.model_dump(exclude_unset=True)))


@router.delete("/webhooks/{int:webhook_id}", **doc(204, None, "Deleted.", "not_found"))
def delete_webhook(request, webhook_id: int):
    """Delete the endpoint and its delivery log; nothing more is sent to it."""
    actions.do_delete_endpoint(_endpoint(request, webhook_id))
    return Status(204, None)


@router.get(
    "/webhooks/{int:webhook_id}/deliveries",
    **doc(200, DeliveryPage, "The endpoint's deliveries, newest first.", "not_found"),
)
def list_deliveries(request, webhook_id: int, q: Query[DeliveryFilters]):
    """The delivery log: each event sent to the endpoint, its status, attempts and the last answer."""
    deliveries = _endpoint(request, webhook_id).deliveries.defer("body")
    if q.status:
        deliveries = deliveries.filter(status=q.status)
    return cursor_page(deliveries, q, _delivery_out)


@router.get(
    "/webhooks/{int:webhook_id}/deliveries/{int:delivery_id}",
    **doc(200, DeliveryDetail, "The delivery, with the event as sent.", "not_found"),
)
def get_delivery(request, webhook_id: int, delivery_id: int):
    """One delivery of the endpoint's log, with the event exactly as it was sent."""
    d = _delivery(_endpoint(request, webhook_id), delivery_id)
    return {**_delivery_out(d), "event": d.event}


@router.post(
    "/webhooks/{int:webhook_id}/deliveries/{int:delivery_id}/send-again",
    **doc(202, DeliveryOut, "The delivery, queued to be sent again.", "not_found"),
)
def send_again(request, webhook_id: int, delivery_id: int):
    """Send a delivery again, whatever its status: it is due at once and retried like a new one."""
    d = actions.do_send_again(_delivery(_endpoint(request, webhook_id), delivery_id))
    return Status(202, _delivery_out(d))
