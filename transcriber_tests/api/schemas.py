"""Request and response schemas shared by the API routers, and the small helpers every list uses.

Times are ISO 8601 in UTC (`2026-11-28T12:00:00Z`); money is a decimal string in USD with six places
(`0.004200`, oncore.formats); accuracy, WER and thresholds are fractions (0.6 means 60%); positions count from 0.
The live transcript is called `production` in the API. A request body with a field the schema does not list is
refused (422), so a misspelt field never goes unnoticed."""

from datetime import date, datetime

from ninja import Field, Schema

from oncore.api import (  # the pieces every router uses, re-exported for this app's routers
    MAX_LIMIT,
    BodyIn,
    Id,
    Money,
    Page,
    PageIn,
    Text,
    get_or_404,
    page,
    page_of,
)
from oncore.formats import money

__all__ = ["MAX_LIMIT", "BodyIn", "Id", "Money", "Page", "PageIn", "Text", "get_or_404", "page", "page_of"]


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
    price_per_minute: Money = Field(description="List price per audio minute, USD, six places.")
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
        "price_per_minute": money(t.price_per_minute),
        "price_source": t.price_source,
        "price_date": t.price_date,
        "deprecation_date": t.deprecation_date,
        "enabled": t.enabled,
    }


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
    expected_text: str = Field(
        description="The control line's production transcript, stored when it was sampled."
    )


class FlagOut(Schema):
    id: int
    line_id: int
    call_id: int
    tenant: TenantRef
    bank_id: int | None = Field(description="Null while the flag waits in no bank, unscored.")
    expected_text: str
    production_text: str = Field(description="The line's production transcript (the live one), as stored.")
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
        "production_text": line.text,
        "tags": flag.tag_list,
        "note": flag.note,
        "created_at": flag.created_at,
        "updated_at": flag.updated_at,
        "controls": [
            {"id": c.pk, "line_id": c.line_id, "expected_text": c.expected_text} for c in flag.controls.all()
        ],
    }
