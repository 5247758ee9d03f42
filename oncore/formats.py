"""How times and money are written wherever the product writes them for another program: the API's JSON, the CSV
downloads and webhook deliveries, so one parser reads them all.

- Times: ISO 8601 in UTC to the second, with a Z: `2026-11-28T12:00:00Z`.
- Money: US dollars as a decimal string with six places: `0.004200`."""

from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal

MONEY_PLACES = Decimal("0.000001")


def iso_time(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def money(value) -> str | None:
    if value is None:
        return None
    return f"{Decimal(str(value)).quantize(MONEY_PLACES, rounding=ROUND_HALF_UP):f}"
