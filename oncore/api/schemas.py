"""What every router uses: the request body that refuses unknown fields, the page of a list (with the cursor of
the lists that grow: `after` in, `next_after` out), the lookup that answers not_found, the 201 with its Location,
and the field types (Id, Day, Money, Text)."""

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Annotated

from django.db.models import Q
from ninja import Field, Schema
from ninja.responses import Status
from pydantic import AfterValidator, ConfigDict, StringConstraints

from oncore.errors import MAX_ID, find
from oncore.formats import check_day

MAX_LIMIT = 200


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain the NUL character")
    return value


# Text the database can store on every backend (PostgreSQL refuses NUL characters).
Text = Annotated[str, AfterValidator(_no_nul)]
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
# A day a filter takes (oncore.formats.FIRST_DAY to LAST_DAY): outside, 422 naming the parameter and the range.
Day = Annotated[date, AfterValidator(check_day)]
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
    limit: int = Field(description="Items per page, as asked.")
    offset: int = Field(description="Items skipped, as asked.")
    has_more: bool = Field(
        description="Whether items follow this page (ask again with `after` = `next_after`, or "
        "on lists without a cursor with offset + limit)."
    )


# ---------------------------------------------------------------- cursor pages

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CURSOR = re.compile(r"(-?[0-9]{1,19})_([0-9]{1,19})")


@dataclass(frozen=True)
class Cursor:
    """Where a page of a list newest first ends: its last item's creation time (to the microsecond) and id,
    written "<microseconds since 1970>_<id>" (the calls list's cursor too)."""

    at: datetime
    pk: int

    @classmethod
    def parse(cls, text: str) -> "Cursor":
        found = _CURSOR.fullmatch(text or "")
        if not found:
            raise ValueError(
                f"{text!r} is not a cursor: pass the `next_after` of the page before (1732960000000000_123)."
            )
        try:
            return cls(EPOCH + timedelta(microseconds=int(found[1])), int(found[2]))
        except OverflowError:
            raise ValueError(f"{text!r} is not a cursor: its time is out of range.") from None

    def __str__(self) -> str:
        return f"{(self.at - EPOCH) // timedelta(microseconds=1)}_{self.pk}"


def _valid_cursor(text: str) -> str:
    Cursor.parse(text)
    return text


AFTER_HELP = (
    "Start after this item: the `next_after` of the page before. Cursor pages stay as quick deep in the list as at "
    "its start and never skip or repeat an item when new ones arrive; send the same filters (and offset 0)."
)
After = Annotated[str, StringConstraints(max_length=40), AfterValidator(_valid_cursor)]
NEXT_AFTER_HELP = "Where the next page starts: pass it as `after`; null on the last page."


class CursorIn(PageIn):
    after: After | None = Field(None, description=AFTER_HELP)


class CursorPage(Page):
    next_after: str | None = Field(description=NEXT_AFTER_HELP)


def cursor_page(queryset, q: CursorIn, convert, field: str = "created_at", *, batch: bool = False) -> dict:
    """One page of a queryset ordered newest first (by `field`, then id, both descending), after `q.after`: two
    queries (the page with one more row, the count), whatever the depth. `convert` makes an item of an object, or
    with `batch` the items of the page's objects at once."""
    count = queryset.count()
    if q.after:
        cursor = Cursor.parse(q.after)
        queryset = queryset.filter(
            Q(**{f"{field}__lt": cursor.at}) | Q(**{field: cursor.at, "pk__lt": cursor.pk})
        )
    rows = list(queryset.order_by(f"-{field}", "-pk")[q.offset : q.offset + q.limit + 1])
    shown = rows[: q.limit]
    more = len(rows) > q.limit
    return {
        "count": count,
        "limit": q.limit,
        "offset": q.offset,
        "has_more": more,
        "next_after": str(Cursor(getattr(shown[-1], field), shown[-1].pk)) if more else None,
        "items": convert(shown) if batch else [convert(obj) for obj in shown],
    }


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
