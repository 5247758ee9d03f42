"""How times and money are written wherever the product writes them for another program: the API's JSON, the CSV
downloads and webhook deliveries, so one parser reads them all.

- Times: ISO 8601 in UTC to the second, with a Z: `2026-11-28T12:00:00Z`.
- Money: US dollars as a decimal string with six places: `0.004200`.
- Days asked for (date filters, periods): from FIRST_DAY to LAST_DAY, so the midnight after a day exists in every
  timezone (`check_day`; the day after 9999-12-31 does not)."""

from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal

MONEY_PLACES = Decimal("0.000001")
FIRST_DAY = date(1970, 1, 1)
LAST_DAY = date(2999, 12, 31)
DAY_RANGE = f"from {FIRST_DAY.isoformat()} to {LAST_DAY.isoformat()}"


def check_day(value: date | None) -> date | None:
    """The day, if it is one a filter can take; ValueError naming the range otherwise."""
    if value is not None and not FIRST_DAY <= value <= LAST_DAY:
        raise ValueError(f"must be a day {DAY_RANGE}")
    return value


def iso_time(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def money(value) -> str | None:
    if value is None:
        return None
    return f"{Decimal(str(value)).quantize(MONEY_PLACES, rounding=ROUND_HALF_UP):f}"
