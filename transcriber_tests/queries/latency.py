"""The candidates' latencies over a window: the time from sending a line to its final text (for a streaming
transcriber, from the end of the caller's speech: its time to final), p50 and p95 with n and the real-time
factor, read from the per-day latency buckets (LatencyTotal, kept by the aggregates package): one query of at most
a few hundred rows per candidate, whatever the bank's size (the candidate's mode comes in the same query). The
arithmetic is lib/tradeoff.py's."""

from collections import defaultdict
from dataclasses import asdict, dataclass

from django.db.models import Sum

from oncore.transcribers.models import Transcriber

from ..lib import tradeoff as lib_tradeoff
from ..models import LatencyTotal
from .totals import _days

TIME_TO_FINAL = "time to final"
LATENCY = "latency"


@dataclass(frozen=True)
class Latency(lib_tradeoff.Latency):
    """lib_tradeoff.Latency with the mode of the candidate's catalogue entry, which says what the figures measure: a
    batch candidate's latency (from sending the clip to its text) or a streaming one's time to final (from the end
    of the caller's speech to the final text). A streaming candidate has no real-time factor: its session lasts as
    long as the audio, whatever the engine's speed, so time to final over audio seconds would measure nothing."""

    mode: str = Transcriber.BATCH

    @property
    def streaming(self) -> bool:
        return self.mode == Transcriber.STREAMING

    @property
    def measure(self) -> str:
        """What the figures are, as a person reads them: "time to final" or "latency"."""
        return TIME_TO_FINAL if self.streaming else LATENCY

    @property
    def heading(self) -> str:
        """The measure at the start of a sentence or a column: "Time to final" or "Latency"."""
        return self.measure[:1].upper() + self.measure[1:]


def with_mode(found: lib_tradeoff.Latency | None, mode: str) -> Latency | None:
    if found is None:
        return None
    figures = asdict(found)
    if mode == Transcriber.STREAMING:
        figures["real_time_factor"] = None
    return Latency(**figures, mode=mode)


def _merged(qs):
    return qs.values("transcriber_id", "transcriber__mode", "bucket").annotate(
        n=Sum("lines"), lat=Sum("latency_us"), aud=Sum("audio_us")
    )


def latencies(bank_id: int, since, until=None, group=None) -> dict:
    """{transcriber id: Latency} of the bank's items of those days (of every tenant's calls, or only the group's:
    queries.groups.Group); a transcriber with no measured latency is absent."""
    qs = LatencyTotal.objects.filter(bank_id=bank_id)
    qs = group.rows(qs) if group is not None else qs.filter(tenant_id=0, assistant_id=0)
    rows, modes = defaultdict(list), {}
    for r in _merged(_days(qs, since, until)):
        rows[r["transcriber_id"]].append((r["bucket"], int(r["n"]), int(r["lat"]), int(r["aud"])))
        modes[r["transcriber_id"]] = r["transcriber__mode"]
    return {tid: with_mode(lib_tradeoff.latency(found), modes[tid]) for tid, found in rows.items()}


def board_latencies(bank_ids, since, pairs) -> dict:
    """{(bank id, transcriber id): Latency} of these (bank, transcriber) pairs (the leaderboard's
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
    rows, modes = defaultdict(list), {}
    for r in qs.values("bank_id", "transcriber_id", "transcriber__mode", "bucket").annotate(
        n=Sum("lines"), lat=Sum("latency_us"), aud=Sum("audio_us")
    ):
        key = (r["bank_id"], r["transcriber_id"])
        if key in wanted:
            rows[key].append((r["bucket"], int(r["n"]), int(r["lat"]), int(r["aud"])))
            modes[key] = r["transcriber__mode"]
    return {key: with_mode(lib_tradeoff.latency(found), modes[key]) for key, found in rows.items()}
