"""The windows of days a bank's figures count, in whole days of its organization's timezone (UTC unless the
organization sets another), as the per-day totals count them: a flag's scores count on the day it joined its bank.
"The last N days" is today and the N-1 days before it; a fixed period runs from its first day to its last,
inclusive."""

from datetime import UTC, date, datetime, time, timedelta

from django.utils import timezone

DEFAULT_WINDOW_DAYS = 30
MAX_WINDOW_DAYS = 90
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _midnight(day, days: int = 0, zone=UTC):
    """The midnight that starts `day` (plus `days`) in the timezone, or None without a day."""
    return None if day is None else datetime.combine(day + timedelta(days=days), time.min, zone)


def clamp_window(days) -> int:
    try:
        days = int(days)
    except (TypeError, ValueError):
        return DEFAULT_WINDOW_DAYS
    return min(max(days, 1), MAX_WINDOW_DAYS)


def today(zone=UTC) -> date:
    return timezone.now().astimezone(zone).date()


def window_start(window_days: int, zone=UTC):
    """The start of a window of the last `window_days` days: the midnight (in the timezone) that starts the day
    `window_days - 1` days before today, so "the last 30 days" are today and the 29 days before it."""
    return _midnight(today(zone), -(window_days - 1), zone)


def window_days_covered(window_days: int, zone=UTC) -> tuple[date, date]:
    """The first and last day a window of the last `window_days` days counts, as the pages and the CSV say."""
    return window_start(window_days, zone).date(), today(zone)


def period_bounds(window_days: int, date_from: date | None = None, date_to: date | None = None, zone=UTC):
    """(since, until) of the flags a bank's results count: the last `window_days` days (until None: up to now),
    or, when either date is given, the days from `date_from` to `date_to`, inclusive, in the timezone (a missing
    one leaves that side open)."""
    if date_from is None and date_to is None:
        return window_start(window_days, zone), None
    return _midnight(date_from, zone=zone) or EPOCH, _midnight(date_to, 1, zone)
