"""What a switch would cost this organization: its caller audio minutes over the last 30 days (from all its calls,
not only the flagged ones; a tenant's or an assistant's under the results' filter) and what they cost now on
their calls' live transcribers, then each transcriber's monthly projection at that volume (minutes x its catalogue
price; a local engine is free and says how long it would run here at its real-time factor). The arithmetic is
lib/tradeoff.py's.

The volume: the window's calls counted per live transcriber (one query, whose total and newest call id key the
cache), then one grouped query over their caller lines, cached per organization and filter until a call of the
window is added or removed or the day changes."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Count, F, Max, Sum

from oncore.calls.models import Call, Line
from oncore.transcribers import providers
from oncore.transcribers.models import Transcriber

from ..lib import tradeoff as lib_tradeoff
from .cached import cached
from .lines import transcriber_named
from .window import today, window_start

VOLUME_DAYS = 30
VOLUME_CACHE_SECONDS = 600


def is_local(transcriber) -> bool:
    """A local engine runs on this server: no charge, and its latency is its processing time."""
    return _local(transcriber.provider)


def _local(provider: str) -> bool:
    """The provider's registration says it runs on this server (oncore.transcribers.providers)."""
    found = providers.get(provider)
    return bool(found and found.local)


@dataclass(frozen=True)
class LiveShare:
    """The calls of the volume that ran on one live transcriber, and what their minutes cost there."""

    name: str
    transcriber_id: int | None  # None: a live transcriber named on the calls only, not in the catalogue
    calls: int
    minutes: Decimal
    cost: Decimal | None  # None when it has no catalogue price
    local: bool = False


@dataclass(frozen=True)
class Volume:
    """The organization's (or the group's) caller audio over the last VOLUME_DAYS days: the caller lines with
    timing of the calls started in them."""

    first_day: date
    last_day: date
    calls: int
    minutes: Decimal
    live: tuple  # LiveShare, most minutes first
    group: object | None = None  # queries.groups.Group when the results are filtered

    @property
    def unpriced_minutes(self) -> Decimal:
        return sum((s.minutes for s in self.live if s.cost is None), Decimal(0))

    @property
    def known_now(self) -> Decimal:
        """What the minutes on a live transcriber with a catalogue price cost now (all of them, when every live
        transcriber is in the catalogue)."""
        return sum((s.cost for s in self.live if s.cost is not None), Decimal(0))

    @property
    def priced_minutes(self) -> Decimal:
        """The minutes whose cost now is known: those on a live transcriber in the catalogue."""
        return max(self.minutes - self.unpriced_minutes, Decimal(0))

    @property
    def priced_share(self) -> str:
        """The share of the minutes whose cost now is known, as people read it ("93%")."""
        return lib_tradeoff.share_words(self.priced_minutes, self.minutes)

    @property
    def now(self) -> Decimal | None:
        """What the volume costs now on its calls' live transcribers; None when some of it ran on one with no
        catalogue price."""
        if self.unpriced_minutes:
            return None
        return sum((s.cost for s in self.live), Decimal(0))


def call_volume(organization, group=None) -> Volume:
    """The caller audio of the organization's calls started in the last VOLUME_DAYS days (today and the days
    before it, in its timezone), or of the group's calls: the calls counted per live transcriber (one query,
    which also keys the cache), then, unless cached, their caller lines' seconds (a second)."""
    zone = organization.zone
    since = window_start(VOLUME_DAYS, zone)
    calls = Call.objects.filter(tenant__organization=organization, started_at__gte=since)
    if group is not None:
        calls = calls.filter(group.calls())
    per_live = list(
        calls.values(
            "live_transcriber_id",
            "live_transcriber_name",
            "live_transcriber__display_name",
            "live_transcriber__provider",
            "live_transcriber__price_per_minute",
        )
        .annotate(n=Count("id"), newest=Max("id"))
        .order_by()
    )
    stamp = f"{sum(r['n'] for r in per_live)}:{max((r['newest'] for r in per_live), default=0)}"
    return cached(
        "call-volume",
        (organization.pk, group.key if group else "", since.date(), stamp),
        VOLUME_CACHE_SECONDS,
        lambda: _volume(organization, calls, per_live, since, group),
    )


def _volume(organization, calls, per_live, since, group) -> Volume:
    lines = Line.objects.filter(
        call__in=calls, speaker=Line.CALLER, start_s__isnull=False, end_s__isnull=False
    )
    seconds = defaultdict(
        float
    )  # by catalogue id, or by name for calls that name their live transcriber only
    for r in (
        lines.values("call__live_transcriber_id", "call__live_transcriber_name")
        .annotate(s=Sum(F("end_s") - F("start_s")))
        .order_by()
    ):
        tid = r["call__live_transcriber_id"]
        seconds[tid if tid is not None else _name_key(r["call__live_transcriber_name"])] += r["s"] or 0.0
    by_live, unknown = {}, {}
    for r in per_live:
        tid, found = r["live_transcriber_id"], None
        key = tid
        if tid is None:  # named on the calls only: found in the catalogue by its name, as replay finds it
            key = _name_key(r["live_transcriber_name"])
            found = transcriber_named(r["live_transcriber_name"])
            if found is None:
                share = unknown.setdefault(key, {"name": key or "unknown", "n": 0, "seconds": 0.0})
                share["n"] += r["n"]
                share["seconds"] += seconds.get(key, 0.0)
                continue
            tid = found.pk
        share = by_live.setdefault(
            tid,
            {
                "name": found.display_name if found else r["live_transcriber__display_name"],
                "provider": found.provider if found else r["live_transcriber__provider"],
                "price": found.price_per_minute if found else r["live_transcriber__price_per_minute"],
                "n": 0,
                "seconds": 0.0,
            },
        )
        share["n"] += r["n"]
        share["seconds"] += seconds.get(key, 0.0)
    shares = []
    for tid, r in by_live.items():
        minutes = lib_tradeoff.minutes_of(r["seconds"])
        local = _local(r["provider"])
        cost = Decimal(0) if local else lib_tradeoff.cost_of(minutes, r["price"])
        shares.append(LiveShare(r["name"], tid, r["n"], minutes, cost, local))
    for r in unknown.values():
        shares.append(LiveShare(r["name"], None, r["n"], lib_tradeoff.minutes_of(r["seconds"]), None))
    shares.sort(key=lambda s: (-s.minutes, s.name))
    return Volume(
        first_day=since.date(),
        last_day=today(organization.zone),
        calls=sum(s.calls for s in shares),
        minutes=lib_tradeoff.minutes_of(sum(seconds.values())),
        live=tuple(shares),
        group=group,
    )


def _name_key(name) -> str:
    return (name or "").strip()


def projection_of(transcriber, volume: Volume, real_time_factor=None) -> lib_tradeoff.Projection:
    """What `transcriber` would cost a month at the volume, beside what it costs now."""
    return lib_tradeoff.projection(
        transcriber.pk,
        transcriber.price_per_minute,
        volume.minutes,
        volume.known_now,
        volume.unpriced_minutes,
        local=is_local(transcriber),
        rtf=real_time_factor,
    )


def catalogue_prices(volume: Volume, leave_out) -> list:
    """(transcriber, projection) of the catalogue's enabled priced entries that are not in `leave_out` (the bank's
    candidates), cheapest first: what they would cost at the volume, as prices only (they were never called on
    these lines)."""
    entries = (
        Transcriber.catalogue()
        .filter(enabled=True, price_per_minute__gt=0)
        .exclude(pk__in=leave_out)
        .order_by("price_per_minute", "display_name")
    )
    return [(t, projection_of(t, volume)) for t in entries if not is_local(t)]
