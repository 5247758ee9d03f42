"""What every router uses: the request body that refuses unknown fields, the page of a list, the lookup that
answers not_found, the 201 with its Location, and the field types (Id, Money, Text)."""

from typing import Annotated

from ninja import Field, Schema
from ninja.responses import Status
from pydantic import AfterValidator, ConfigDict

from oncore.errors import MAX_ID, find

MAX_LIMIT = 200


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain the NUL character")
    return value


# Text the database can store on every backend (PostgreSQL refuses NUL characters).
Text = Annotated[str, AfterValidator(_no_nul)]
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
Money = Annotated[
    str, Field(pattern=r"^-?[0-9]+\.[0-9]{6}$", description="USD, a decimal string with six places.")
]


class BodyIn(Schema):
    """A JSON request body: a field it does not list is refused with 422 (`extra_forbidden`)."""

    model_config = ConfigDict(extra="forbid")


class PageIn(Schema):
    limit: int = Field(50, ge=1, le=MAX_LIMIT, description=f"Items per page, at most {MAX_LIMIT}.")
    offset: int = Field(0, ge=0, le=10**9, description="Items to skip.")


class Page(Schema):
    count: int = Field(description="Items matching the filters, on every page.")
    limit: int
    offset: int
    has_more: bool = Field(description="Whether items follow this page (ask again with offset + limit).")


def page(queryset, q: PageIn, convert) -> dict:
    """One page of an ordered queryset: two queries, whatever the page size."""
    return page_of(queryset.count(), q, [convert(obj) for obj in queryset[q.offset : q.offset + q.limit]])


def page_of(count: int, q: PageIn, items: list) -> dict:
    return {
        "count": count,
        "limit": q.limit,
        "offset": q.offset,
        "has_more": q.offset + len(items) < count,
        "items": items,
    }


def get_or_404(queryset, pk: int, what: str, field: str = "pk"):
    """The object with this id (in `field`) among `queryset` (already limited to the organization), else
    not_found: oncore.errors.find, the dashboard's lookup too."""
    return find(queryset, pk, what, field)


def created(request, location: str, value) -> Status:
    """201 with a Location header naming the new object's URL."""
    request.api_response["Location"] = location
    return Status(201, value)
