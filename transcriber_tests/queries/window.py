"""The windows of days a bank's figures count: "the last N days" and fixed periods, in UTC, as the per-day totals
count them (a flag's scores count on its day)."""

from datetime import UTC, date, datetime, time, timedelta

from django.utils import timezone

DEFAULT_WINDOW_DAYS = 30


MAX_WINDOW_DAYS = 90


def _midnight(day, days: int = 0):
    return None if day is None else datetime.combine(day + timedelta(days=days), time.min, UTC)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def clamp_window(days) -> int:
    try:
        days = int(days)
    except (TypeError, ValueError):
        return DEFAULT_WINDOW_DAYS
    return min(max(days, 1), MAX_WINDOW_DAYS)


def window_start(window_days: int):
    """The start of a window of the last `window_days` days: midnight (UTC) of the day that many days ago, so the
    window holds whole days, as the per-day totals do (aggregates)."""
    return _midnight(timezone.now().astimezone(UTC).date(), -window_days)


def window_days_covered(window_days: int) -> tuple[date, date]:
    """The first and last day (UTC) a window of the last `window_days` days counts, as the results CSV states."""
    return window_start(window_days).date(), timezone.now().astimezone(UTC).date()


def period_bounds(window_days: int, date_from: date | None = None, date_to: date | None = None):
    """(since, until) of the flags a bank's results count: the last `window_days` days (until None: up to now),
    or, when either date is given, the days from `date_from` to `date_to`, inclusive, in UTC (a missing one
    leaves that side open)."""
    if date_from is None and date_to is None:
        return window_start(window_days), None
    return _midnight(date_from) or EPOCH, _midnight(date_to, 1)
