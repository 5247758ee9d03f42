"""The candidates' latencies over a window: the time from sending a line to its final text (for a streaming
transcriber, from the end of the caller's speech), p50 and p95 with n and the real-time factor, read from the
per-day latency buckets (LatencyTotal, kept by the aggregates package): one query of at most a few hundred rows
per candidate, whatever the bank's size. The arithmetic is tradeoffs.py's."""

from collections import defaultdict

from django.db.models import Sum

from .. import tradeoffs
from ..models import LatencyTotal
from .totals import _days


def _merged(qs):
    return qs.values("transcriber_id", "bucket").annotate(
        n=Sum("lines"), lat=Sum("latency_us"), aud=Sum("audio_us")
    )


def latencies(bank_id: int, since, until=None, group=None) -> dict:
    """{transcriber id: tradeoffs.Latency} of the bank's items of those days (of every tenant's calls, or only the
    group's: queries.groups.Group); a transcriber with no measured latency is absent."""
    qs = LatencyTotal.objects.filter(bank_id=bank_id)
    qs = group.rows(qs) if group is not None else qs.filter(tenant_id=0, assistant_id=0)
    rows = defaultdict(list)
    for r in _merged(_days(qs, since, until)):
        rows[r["transcriber_id"]].append((r["bucket"], int(r["n"]), int(r["lat"]), int(r["aud"])))
    return {tid: tradeoffs.latency(found) for tid, found in rows.items()}


def board_latencies(bank_ids, since, pairs) -> dict:
    """{(bank id, transcriber id): tradeoffs.Latency} of these (bank, transcriber) pairs (the leaderboard's
    leaders) over the days from `since`, every tenant's calls: one query."""
    wanted = set(pairs)
    if not wanted:
        return {}
    qs = LatencyTotal.objects.filter(
        bank_id__in=bank_ids,
        transcriber_id__in={t for _, t in wanted},
        tenant_id=0,
        assistant_id=0,
        day__gte=since.date(),
    )
    rows = defaultdict(list)
    for r in qs.values("bank_id", "transcriber_id", "bucket").annotate(
        n=Sum("lines"), lat=Sum("latency_us"), aud=Sum("audio_us")
    ):
        key = (r["bank_id"], r["transcriber_id"])
        if key in wanted:
            rows[key].append((r["bucket"], int(r["n"]), int(r["lat"]), int(r["aud"])))
    return {key: tradeoffs.latency(found) for key, found in rows.items()}
