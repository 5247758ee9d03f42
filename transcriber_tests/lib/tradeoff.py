"""Pure core of choosing a transcriber the way voice-agent teams do: latency and cost beside accuracy. No Django.

Latency buckets. A line's latency (seconds from sending it to its final text) is held in whole microseconds and
counted in one of a fixed set of log-spaced buckets, so the per-day totals can keep a bank's latencies in a few
rows per candidate and day and a window's percentiles are read from the merged counts, whatever the bank's size.
Bucket 0 holds latencies under FLOOR_US (1 ms); bucket k (1..TOP) holds [BOUNDS[k-1], BOUNDS[k]), where
BOUNDS[k] = FLOOR_US * 2 ** (k / BUCKETS_PER_DOUBLING) rounded to a microsecond: 16 buckets per doubling, each
about 4.4% wide; bucket TOP + 1 holds everything from BOUNDS[TOP] (about 1,000 s) up. A bucket stands for its
geometric middle, sqrt(low * high), which lies within RESOLUTION (2.2%) of every latency in it: a percentile
read from the buckets is within RESOLUTION of the exact one (the nearest-rank percentile of the lines' own
latencies), since both fall in the same bucket. Latencies under 1 ms read as 1 ms, over 1,000 s as 1,000 s.

Percentiles are nearest-rank: the p-th percentile of n latencies is the k-th smallest, k = ceil(p * n / 100),
computed in integers. The p99 is given only from P99_MIN_LINES lines (below that it is the largest latency, or
next to it, and reads as a tail it is not).

Real-time factor: processing seconds per audio second, the sum of the lines' latencies over the sum of their
audio seconds, in integers of microseconds (for a local engine the latency is its processing time).

The trade-off: a candidate is on the Pareto front of accuracy against p95 latency when no other candidate is at
least as accurate and at least as fast with one of the two strictly better.

Cost: a month's projection is the organization's caller audio minutes over the last 30 days times a price per
minute, in Decimal: minutes to three places (as estimates show them), dollars to six (as money is stored)."""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

BUCKETS_PER_DOUBLING = 16
FLOOR_US = 1_000  # 1 ms
TOP = 319  # BOUNDS[TOP] is about 1,000 s
BOUNDS = tuple(round(FLOOR_US * 2 ** (k / BUCKETS_PER_DOUBLING)) for k in range(TOP + 1))
MICROS = 1_000_000
P99_MIN_LINES = 100


def _middle(bucket: int) -> int:
    if bucket <= 0:
        return BOUNDS[0]
    if bucket > TOP:
        return BOUNDS[TOP]
    return round(math.sqrt(BOUNDS[bucket - 1] * BOUNDS[bucket]))


MIDDLES = tuple(_middle(b) for b in range(TOP + 2))
# The widest relative distance from a bucket's middle to a latency in it, relative to that latency (about 0.022).
RESOLUTION = max(
    max(MIDDLES[k] / lo - 1, 1 - MIDDLES[k] / hi)
    for k, (lo, hi) in enumerate(zip(BOUNDS, BOUNDS[1:], strict=False), 1)
)
RESOLUTION_WORDS = f"within {math.ceil(RESOLUTION * 1000) / 10:.1f}%"


def micros(seconds) -> int | None:
    """Seconds as whole microseconds (None for none, or a value that is not a finite number >= 0)."""
    if seconds is None:
        return None
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return round(value * MICROS)


def bucket_of(latency_us: int) -> int:
    """The bucket of a latency in microseconds: 0 under 1 ms, TOP + 1 from about 1,000 s."""
    low, high = 0, len(BOUNDS)  # the number of bounds <= latency_us, by bisection
    while low < high:
        mid = (low + high) // 2
        if BOUNDS[mid] <= latency_us:
            low = mid + 1
        else:
            high = mid
    return low


def nearest_rank(n: int, percent: int) -> int:
    """The rank (from 1) of the p-th percentile of n values: ceil(p * n / 100), at least 1."""
    return max(1, (percent * n + 99) // 100)


def exact_percentile(values: Sequence, percent: int):
    """The nearest-rank percentile of the values themselves (what the buckets approximate)."""
    ordered = sorted(values)
    return ordered[nearest_rank(len(ordered), percent) - 1] if ordered else None


def percentile_us(counts: Mapping[int, int], percent: int) -> int | None:
    """The p-th percentile, in microseconds, of latencies counted per bucket ({bucket: lines}): the middle of the
    bucket that holds the nearest-rank line."""
    n = sum(counts.values())
    if not n:
        return None
    rank, seen = nearest_rank(n, percent), 0
    for bucket in sorted(counts):
        seen += counts[bucket]
        if seen >= rank:
            return MIDDLES[min(max(bucket, 0), TOP + 1)]
    return None  # not reached: seen ends at n >= rank


@dataclass(frozen=True)
class Latency:
    """A candidate's latencies over a window: `lines` with a measured latency (its n), the p50, p95 and (from
    P99_MIN_LINES lines) p99 in seconds (from the buckets, within RESOLUTION of the exact ones), the exact mean, and
    the real-time factor (processing seconds per audio second over the same lines)."""

    lines: int
    p50_s: float
    p95_s: float
    mean_s: float
    real_time_factor: float | None
    p99_s: float | None = None


def latency(rows: Iterable[tuple[int, int, int, int]]) -> Latency | None:
    """A Latency from bucket rows (bucket, lines, their latency_us summed, their audio_us summed); rows of one
    bucket may repeat (days, tenants) and are merged. None when no line has a latency."""
    counts: dict[int, int] = {}
    lines = latency_us = audio_us = 0
    for bucket, n, lat_us, aud_us in rows:
        if not n:
            continue
        counts[bucket] = counts.get(bucket, 0) + n
        lines += n
        latency_us += lat_us
        audio_us += aud_us
    if not lines:
        return None
    return Latency(
        lines=lines,
        p50_s=percentile_us(counts, 50) / MICROS,
        p95_s=percentile_us(counts, 95) / MICROS,
        mean_s=latency_us / lines / MICROS,
        real_time_factor=latency_us / audio_us if audio_us else None,
        p99_s=percentile_us(counts, 99) / MICROS if lines >= P99_MIN_LINES else None,
    )


def exact_latency(seconds: Sequence[float]) -> Latency | None:
    """A Latency of the values themselves (exact nearest-rank percentiles, p99 from P99_MIN_LINES values; no
    real-time factor): for a figure read from the lines' own rows, such as a streaming time to first partial.
    None for no values."""
    values = [v for v in (micros(s) for s in seconds) if v is not None]
    if not values:
        return None
    return Latency(
        lines=len(values),
        p50_s=exact_percentile(values, 50) / MICROS,
        p95_s=exact_percentile(values, 95) / MICROS,
        mean_s=sum(values) / len(values) / MICROS,
        real_time_factor=None,
        p99_s=exact_percentile(values, 99) / MICROS if len(values) >= P99_MIN_LINES else None,
    )


def seconds_words(seconds: float | None) -> str:
    """A latency as a person reads it: "180 ms", "1.24 s", "12.4 s", "n/a" for none."""
    if seconds is None:
        return "n/a"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 10:
        return f"{seconds:.2f} s"
    return f"{seconds:.1f} s"


def hours_words(hours: float) -> str:
    """Time a month takes as a person reads it: "12.5 hours", under an hour in minutes ("2.7 minutes"), "under
    0.1 minutes" for less."""
    if hours >= 1:
        return f"{hours:,.1f} hours"
    minutes = hours * 60
    return "under 0.1 minutes" if minutes < 0.05 else f"{minutes:.1f} minutes"


def about_hours(hours: float) -> str:
    """hours_words as an estimate: "about 2.7 minutes", but "under 0.1 minutes" as it is."""
    words = hours_words(hours)
    return words if words.startswith("under") else f"about {words}"


# ---------------------------------------------------------------- the trade-off


def pareto_front(points: Sequence[tuple]) -> frozenset:
    """Keys of the points (key, accuracy, p95 seconds) that no other point dominates: at least as accurate and at
    least as fast, and better in one. Points without an accuracy or a latency are never on it."""
    known = [(k, a, s) for k, a, s in points if a is not None and s is not None]
    return frozenset(
        k
        for k, a, s in known
        if not any(a2 >= a and s2 <= s and (a2 > a or s2 < s) for k2, a2, s2 in known if k2 != k)
    )


# ---------------------------------------------------------------- cost

MINUTE_PLACES = Decimal("0.001")
MONEY_PLACES = Decimal("0.000001")


def minutes_of(seconds) -> Decimal:
    """Audio seconds as minutes, to three places (half up)."""
    return (Decimal(str(seconds or 0)) / 60).quantize(MINUTE_PLACES, rounding=ROUND_HALF_UP)


def cost_of(minutes: Decimal, price_per_minute) -> Decimal:
    """minutes x price per minute, in USD to six places (half up)."""
    return (Decimal(minutes) * Decimal(str(price_per_minute or 0))).quantize(
        MONEY_PLACES, rounding=ROUND_HALF_UP
    )


@dataclass(frozen=True)
class Projection:
    """What one transcriber would cost a month at the organization's volume: `minutes` (the last 30 days' caller
    audio) x `price_per_minute`, beside what the calls cost now on their live transcribers (`now`, None when some
    minutes ran on a live transcriber with no catalogue price: `unpriced_minutes`). A local engine costs nothing;
    its `processing_hours` are what it would take on this server at its real-time factor."""

    key: object
    price_per_minute: Decimal
    minutes: Decimal
    cost: Decimal
    now: Decimal | None
    unpriced_minutes: Decimal
    local: bool
    real_time_factor: float | None = None
    known_now: Decimal = Decimal(0)  # what the minutes whose live transcriber has a catalogue price cost now

    @property
    def difference(self) -> Decimal | None:
        """cost - now (negative: cheaper than now); None when now is unknown."""
        return None if self.now is None else self.cost - self.now

    @property
    def priced_minutes(self) -> Decimal:
        """The minutes whose cost now is known (those on a live transcriber with a catalogue price)."""
        return self.minutes - self.unpriced_minutes

    @property
    def known_difference(self) -> Decimal | None:
        """On the minutes whose cost now is known: what they would cost on this transcriber less what they cost
        now (the whole difference when every minute's cost is known); None when no minute's is."""
        if self.priced_minutes <= 0:
            return None
        cost = Decimal(0) if self.local else cost_of(self.priced_minutes, self.price_per_minute)
        return cost - self.known_now

    @property
    def processing_hours(self) -> float | None:
        if self.real_time_factor is None:
            return None
        return float(self.minutes) * self.real_time_factor / 60


def now_cost(minutes_by_price: Iterable[tuple[Decimal, object]]) -> Decimal:
    """What the calls cost now: the sum of each live transcriber's minutes x its price (each to six places)."""
    return sum((cost_of(m, p) for m, p in minutes_by_price), Decimal(0))


def projection(key, price_per_minute, minutes: Decimal, now, unpriced: Decimal, *, local: bool, rtf=None):
    """`now`: what the minutes with a known cost (all but `unpriced`) cost now on their live transcribers."""
    return Projection(
        key=key,
        price_per_minute=Decimal(str(price_per_minute or 0)),
        minutes=minutes,
        cost=Decimal(0) if local else cost_of(minutes, price_per_minute),
        now=now if not unpriced else None,
        unpriced_minutes=unpriced,
        local=local,
        real_time_factor=rtf if local else None,
        known_now=Decimal(now or 0),
    )


def share_words(part, whole) -> str:
    """A part of a whole as a whole percent people read ("93%"), never rounded to 0% or 100% when it is neither
    ("under 1%", "over 99%")."""
    if not whole:
        return "0%"
    share = float(part) / float(whole)
    if 0 < share < 0.01:
        return "under 1%"
    if 0.99 < share < 1:
        return "over 99%"
    return f"{share:.0%}"


def minutes_words(minutes: Decimal) -> str:
    """ "12,000 minutes"; under ten, to a tenth ("0.3 minutes")."""
    shown = minutes.quantize(Decimal("1") if minutes >= 10 else Decimal("0.1"))
    return f"{shown:,} minute{'s' if shown != 1 else ''}"
