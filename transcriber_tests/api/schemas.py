"""Request and response schemas shared by the API routers, and the small helpers every list uses.

Times are ISO 8601 with a time zone; money is a decimal string in USD; accuracy, WER and thresholds are
fractions (0.6 means 60%)."""

from datetime import date, datetime
from typing import Annotated

from ninja import Field, Schema
from pydantic import AfterValidator

from oncore.http import MAX_ID
from transcriber_tests import errors

MAX_LIMIT = 200


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain the NUL character")
    return value


# Text the database can store on every backend (PostgreSQL refuses NUL characters).
Text = Annotated[str, AfterValidator(_no_nul)]
Id = Annotated[int, Field(ge=1, le=MAX_ID)]


class PageIn(Schema):
    limit: int = Field(50, ge=1, le=MAX_LIMIT, description=f"Items per page, at most {MAX_LIMIT}.")
    offset: int = Field(0, ge=0, le=10**9, description="Items to skip.")


def page(queryset, q: PageIn, convert) -> dict:
    """One page of an ordered queryset: two queries, whatever the page size."""
    count = queryset.count()
    items = [convert(obj) for obj in queryset[q.offset : q.offset + q.limit]]
    return {"count": count, "limit": q.limit, "offset": q.offset, "items": items}


def get_or_404(queryset, pk: int, what: str):
    """The object with this id among `queryset` (already limited to the organization), else not_found."""
    obj = queryset.filter(pk=pk).first() if 0 < pk <= MAX_ID else None
    if obj is None:
        raise errors.NotFound(f"No {what} with id {pk} in this organization.")
    return obj


# ---------------------------------------------------------------- small references


class TenantRef(Schema):
    id: int
    slug: str
    name: str


class AssistantRef(Schema):
    id: int
    name: str


class TranscriberRef(Schema):
    id: int
    slug: str
    display_name: str
    deprecation_date: date | None = Field(description="The model's announced shutdown date, if any.")


class TranscriberOut(Schema):
    id: int
    slug: str
    provider: str
    model: str
    display_name: str
    price_per_minute: str = Field(description="List price per audio minute, USD, as a decimal string.")
    price_source: str = Field(
        description="Where the price comes from (a vendor page or quote); empty if unknown."
    )
    price_date: date | None = Field(description="When the price was read at its source, so its age shows.")
    deprecation_date: date | None = Field(
        description="The vendor's announced shutdown date for the model; null while none is announced."
    )
    enabled: bool


def tenant_ref(t) -> dict:
    return {"id": t.pk, "slug": t.slug, "name": t.name}


def transcriber_ref(t) -> dict | None:
    if t is None:
        return None
    return {
        "id": t.pk,
        "slug": t.slug,
        "display_name": t.display_name,
        "deprecation_date": t.deprecation_date,
    }


def transcriber_out(t) -> dict:
    return {
        "id": t.pk,
        "slug": t.slug,
        "provider": t.provider,
        "model": t.model,
        "display_name": t.display_name,
        "price_per_minute": str(t.price_per_minute),
        "price_source": t.price_source,
        "price_date": t.price_date,
        "deprecation_date": t.deprecation_date,
        "enabled": t.enabled,
    }


class Page(Schema):
    count: int = Field(description="Items matching the filters, on every page.")
    limit: int
    offset: int


class DateRange(Schema):
    date_from: date | None = Field(None, description="From this day (inclusive, UTC).")
    date_to: date | None = Field(None, description="Up to this day (inclusive, UTC).")


class Reason(Schema):
    code: str = Field(description="The error code flagging this line would give; see the error guide.")
    message: str


class FlagBrief(Schema):
    id: int
    bank_id: int | None
    expected_text: str
    tags: list[str]


class ControlOut(Schema):
    id: int
    line_id: int
    expected_text: str = Field(description="The control line's live transcript, stored when it was sampled.")


class FlagOut(Schema):
    id: int
    line_id: int
    call_id: int
    tenant: TenantRef
    bank_id: int | None = Field(description="Null while the flag waits in no bank, unscored.")
    expected_text: str
    live_text: str = Field(description="The line's live transcript as stored.")
    tags: list[str]
    note: str
    created_at: datetime
    updated_at: datetime
    controls: list[ControlOut]


def flag_out(flag) -> dict:
    line = flag.line
    return {
        "id": flag.pk,
        "line_id": line.pk,
        "call_id": line.call_id,
        "tenant": tenant_ref(line.call.tenant),
        "bank_id": flag.bank_id,
        "expected_text": flag.expected_text,
        "live_text": line.text,
        "tags": flag.tag_list,
        "note": flag.note,
        "created_at": flag.created_at,
        "updated_at": flag.updated_at,
        "controls": [
            {"id": c.pk, "line_id": c.line_id, "expected_text": c.expected_text} for c in flag.controls.all()
        ],
    }
