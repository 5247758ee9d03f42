"""Request and response schemas shared by the API routers, and the small helpers every list uses.

Times are ISO 8601 in UTC (`2026-11-28T12:00:00Z`); money is a decimal string in USD with six places
(`0.004200`, oncore.formats); accuracy, WER and thresholds are fractions (0.6 means 60%); positions count from 0.
The live transcript is called `production` in the API. A request body with a field the schema does not list is
refused (422), so a misspelt field never goes unnoticed."""

from ninja import Field, Schema

from oncore.api import (  # the pieces every router uses, re-exported for this app's routers
    MAX_LIMIT,
    BodyIn,
    CursorIn,
    CursorPage,
    Day,
    Id,
    Money,
    Page,
    PageIn,
    Text,
    cursor_page,
    get_or_404,
    page,
    page_of,
)
from oncore.formats import DAY_RANGE

__all__ = [
    "MAX_LIMIT",
    "BodyIn",
    "CursorIn",
    "CursorPage",
    "Day",
    "Id",
    "Money",
    "Page",
    "PageIn",
    "Text",
    "cursor_page",
    "get_or_404",
    "page",
    "page_of",
]


# ---------------------------------------------------------------- small references


class DateRange(Schema):
    date_from: Day | None = Field(None, description=f"From this day (inclusive, UTC), {DAY_RANGE}.")
    date_to: Day | None = Field(None, description=f"Up to this day (inclusive, UTC), {DAY_RANGE}.")
