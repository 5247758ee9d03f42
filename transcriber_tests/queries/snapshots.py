"""A bank's figures are computed when its data change, not when a page is read.

Every write that changes a bank's results moves its version (`Bank.results_changed_at`, actions/scores.py results_changed)
and asks for its snapshots to be rebuilt (`request`). A queue task (`rebuild`) then computes, for each window and
filter read in the last day, the figures a page, CSV or API answer shows, and keeps them as a `Snapshot` row keyed
by bank, kind and key with the version they were computed from:

- results (`results_key`): the cards and leader, latency and cost, the trade-off chart and table, the tenant and
  assistant tables, trends, tags, the leader's per-language WER and the expected texts to check, as data
  (queries.ResultsScreen) and as the page's rendered fragments;
- trust (`trust_key`): Wilson, the call-level bootstrap, McNemar, the flags planner and the confusion pairs, as data
  (queries.trust.Trust) and the trust section's fragment.

A read (`read`) serves the newest snapshot of its key with its version and the time it was computed; when the bank
has moved on since (or the day has: the window ends today) it says the figures are as of that time, asks for a
rebuild if none is on its way, and the page polls until the new ones land. A results key never read before is
computed once inline; a trust key shows "computing" until the queue has it (the bootstrap never runs in a request).

Rebuilds coalesce: at most one pending or running per bank (`snapshots_dispatched_at`), and at most one started
per ONCORE_SNAPSHOT_INTERVAL_S while scores keep coming (a change within it waits for the next trigger: the end
of a transcription task's chain, a read, or the minutely sweep). A deleted bank's snapshots go with it (cascade);
a read finds a bank through its organization first, so an organization never reads another's.

The whole mechanism stays here, the queue's part (request, dispatch_due, rebuild, sweep, drain) beside the reads:
a read asks for its own rebuild (`read` calls `request`), so the dispatch cannot stand above the reads in work/,
and the rebuild, the sweep and the drain are its other ends. The queue runs the rebuild through its entry point in
work/tasks.py (rebuild_snapshots), handed over by the work handle REBUILD_SNAPSHOTS (handles.py)."""

import logging
import pickle
import time
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe

from benchmark import selectors as benchmark
from oncore.config import config
from oncore.errors import NotFound

from .. import handles
from ..lib import trust as lib_trust
from ..models import Bank, Snapshot
from . import confusion, groups, reference_check, results, trust
from .window import clamp_window, today

log = logging.getLogger(__name__)

RESULTS, TRUST = Snapshot.RESULTS, Snapshot.TRUST
READ_RECENTLY = timedelta(days=1)  # keys read within this are rebuilt when the bank's results change
TOUCH_EVERY = timedelta(hours=1)  # a read records itself at most this often on a snapshot that is current
MAX_KEYS = 24  # keys one rebuild computes, the most recently read first (the others wait for their next read)
# A rebuild handed to the queue and not finished after this long was lost (its worker died, the broker lost it):
# the next trigger hands another over. A rebuild takes seconds; a busy queue may hold it back a little.
DISPATCH_LEASE = timedelta(seconds=60)


# ---------------------------------------------------------------- keys


def results_key(
    window_days: int, date_from: date | None = None, date_to: date | None = None, group=None
) -> str:
    """The key of a results snapshot: "w=30", "w=30&from=2026-11-01&to=2026-11-30&tenant=3"."""
    parts = [f"w={clamp_window(window_days)}"]
    if date_from:
        parts.append(f"from={date_from.isoformat()}")
    if date_to:
        parts.append(f"to={date_to.isoformat()}")
    if group is not None:
        parts.append(f"{group.kind}={group.id}")
    return "&".join(parts)


def trust_key(window_days: int) -> str:
    return f"w={clamp_window(window_days)}"


@dataclass(frozen=True)
class Params:
    window_days: int
    date_from: date | None = None
    date_to: date | None = None
    tenant: int | None = None
    assistant: int | None = None


def parse_key(key: str) -> Params:
    found = dict(part.split("=", 1) for part in key.split("&"))
    day = date.fromisoformat
    return Params(
        int(found["w"]),
        day(found["from"]) if "from" in found else None,
        day(found["to"]) if "to" in found else None,
        int(found[groups.TENANT]) if groups.TENANT in found else None,
        int(found[groups.ASSISTANT]) if groups.ASSISTANT in found else None,
    )


# ---------------------------------------------------------------- what a snapshot holds


@dataclass(frozen=True)
class ResultsFigures:
    """A results snapshot's data: the screen (queries.ResultsScreen, its queue left empty: a read adds the
    waiting work) and the expected texts to check (the newest reference_check.SHOWN and how many there are)."""

    screen: results.ResultsScreen
    checks: list
    checks_total: int


@dataclass(frozen=True)
class TrustFigures:
    trust: trust.Trust
    confusions: list  # confusion.confusion_pairs, the top pairs of each candidate


@dataclass(frozen=True)
class Read:
    """What a read gives: the figures (ResultsFigures or TrustFigures; None while a key is being computed for the
    first time, and not asked for with `data=False`), the rendered fragments, the version and when they were
    computed, and whether newer figures are on their way (`stale`)."""

    data: object | None
    html: dict = field(default_factory=dict)
    version: datetime | None = None
    computed_at: datetime | None = None
    stale: bool = False
    timezone: str = "UTC"

    @property
    def computing(self) -> bool:
        return self.version is None


# ---------------------------------------------------------------- computing one snapshot


def _compute_results(bank: Bank, key: str) -> tuple[ResultsFigures, dict]:
    p = parse_key(key)
    group = groups.group_of(bank.organization, p.tenant, p.assistant)
    screen = results.results_screen(
        bank, p.window_days, group, date_from=p.date_from, date_to=p.date_to, queue=False
    )
    checks, total = reference_check.expected_checks(bank, screen.results.window_days)
    context = {
        "bank": bank,
        "r": screen.results,
        "entity": screen.entity,
        "own_entities": screen.own_entities or {},
        "language_wer": screen.language_wer,
        "trends": screen.trends,
        "tags": screen.tags,
        "tradeoff": screen.tradeoff,
        "by_tenant": screen.by_tenant,
        "by_assistant": screen.by_assistant,
        "checks": checks,
        "checks_total": total,
    }
    html = {
        "filter": render_to_string("transcriber_tests/_results_filter.html", context),
        "figures": render_to_string("transcriber_tests/_results_figures.html", context),
        "checks": render_to_string("transcriber_tests/_expected_checks.html", context),
    }
    return ResultsFigures(screen, checks, total), html


def _compute_trust(bank: Bank, key: str) -> tuple[TrustFigures, dict]:
    window = parse_key(key).window_days
    figures = TrustFigures(trust.bank_trust(bank, window), confusion.confusion_pairs(bank, window))
    context = {
        "bank": bank,
        "window": window,
        "trust": figures.trust,
        "confusions": figures.confusions,
        "top": confusion.TOP,
        "flag_limit": lib_trust.FLAG_LIMIT,
    }
    return figures, {"trust": render_to_string("transcriber_tests/_trust.html", context)}


COMPUTE = {RESULTS: _compute_results, TRUST: _compute_trust}


def build(bank: Bank, kind: str, key: str) -> Snapshot | None:
    """Compute one snapshot from the bank as it is now and keep it, unless a newer one was kept meanwhile (two
    builders racing keep the newest version). None when its filter no longer exists (a deleted tenant)."""
    bank = Bank.objects.select_related("organization").filter(pk=bank.pk).first()
    if bank is None:
        return None  # deleted meanwhile
    version = bank.results_changed_at  # read before the figures: they are at least this new
    started = time.perf_counter()
    try:
        data, html = COMPUTE[kind](bank, key)
    except NotFound:
        Snapshot.objects.filter(bank=bank, kind=kind, key=key).delete()
        return None
    now = timezone.now()
    values = {
        "version": version,
        "day": today(bank.organization.zone),
        "computed_at": now,
        "build_ms": round((time.perf_counter() - started) * 1000),
        "data": pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL),
        "html": html,
    }
    newer = Q(version__gt=version) | Q(version=version, day__gt=values["day"])
    kept = Snapshot.objects.filter(bank=bank, kind=kind, key=key)
    if kept.exclude(newer).update(**values):
        return kept.first()
    if not kept.exists():
        try:
            with transaction.atomic():
                return Snapshot.objects.create(bank=bank, kind=kind, key=key, read_at=now, **values)
        except IntegrityError:
            pass  # another builder kept it first
    return kept.first()


# ---------------------------------------------------------------- reading


def _current(bank: Bank, found: Snapshot, day: date) -> bool:
    return found.version == bank.results_changed_at and found.day == day


def read(bank: Bank, kind: str, key: str, *, data: bool = True) -> Read:
    """The newest snapshot of a key (see the module's docstring). `bank` as the request found it (lookups.bank),
    with its organization."""
    columns = ["id", "version", "day", "computed_at", "read_at", "html"] + (["data"] if data else [])
    found = Snapshot.objects.filter(bank=bank, kind=kind, key=key).only(*columns).first()
    zone = bank.organization.timezone
    day = today(bank.organization.zone)
    now = timezone.now()
    if found is None:
        if kind == RESULTS:  # a key never read: computed once here, then kept up by the queue
            found = build(bank, kind, key)
            if found is None:
                return Read(None, timezone=zone)
            return _read_of(found, data, stale=False, zone=zone)
        try:
            with transaction.atomic():
                Snapshot.objects.create(bank=bank, kind=kind, key=key, read_at=now)
        except IntegrityError:
            pass
        request([bank.pk], force=True)
        return Read(None, stale=True, timezone=zone)
    if now - found.read_at > TOUCH_EVERY:  # read recently: rebuilt when the bank's results change
        Snapshot.objects.filter(pk=found.pk).update(read_at=now)
    if found.version is not None and _current(bank, found, day):
        return _read_of(found, data, stale=False, zone=zone)
    # Newer figures are due: this key is rebuilt with the others, and one rebuild is on its way.
    force = found.day != day or found.version is None
    if _may_dispatch(bank, now, force=force):
        request([bank.pk], force=force)
    if found.version is None:
        return Read(None, stale=True, timezone=zone)
    return _read_of(found, data, stale=True, zone=zone)


def _may_dispatch(bank: Bank, now: datetime, *, force: bool) -> bool:
    """Whether a read should ask for a rebuild: none is on its way and one would start now (saves the read two
    queries while a stream of scores keeps the figures a few seconds behind)."""
    if bank.snapshots_dispatched_at is not None and bank.snapshots_dispatched_at >= now - DISPATCH_LEASE:
        return False
    interval = timedelta(seconds=config().snapshot_interval_s)
    built = bank.snapshots_built_at
    return force or bank.snapshots_wanted_at is None or built is None or built <= now - interval


def _read_of(found: Snapshot, data: bool, *, stale: bool, zone: str) -> Read:
    figures = pickle.loads(found.data) if data and found.data else None
    html = {name: mark_safe(fragment) for name, fragment in found.html.items()}  # rendered by build, escaped
    return Read(figures, html, found.version, found.computed_at, stale, zone)


def results_of(bank: Bank, window_days: int, *, date_from=None, date_to=None, group=None, data=True) -> Read:
    return read(bank, RESULTS, results_key(window_days, date_from, date_to, group), data=data)


def trust_of(bank: Bank, window_days: int, *, data=True) -> Read:
    return read(bank, TRUST, trust_key(window_days), data=data)


def with_entities(board, window_days: int) -> list:
    """The leaderboard's rows (queries.leaderboard) with each leader's entities right on its bank's own lines, as
    the bank's results snapshot of the window (every call) holds them: one query, nothing computed. A bank whose
    snapshot of the window was never computed (its page not read in that window) keeps None."""
    leaders = {row.bank.pk: row.leader.pk for row in board if row.leader is not None}
    if not leaders:
        return board
    found = {}
    kept = Snapshot.objects.filter(bank_id__in=leaders, kind=RESULTS, key=results_key(window_days)).exclude(
        version__isnull=True
    )
    for bank_id, data in kept.values_list("bank_id", "data"):
        own = pickle.loads(data).screen.own_entities if data else None
        if own and leaders[bank_id] in own:
            found[bank_id] = own[leaders[bank_id]]
    return [replace(row, entities=found.get(row.bank.pk)) for row in board]


# ---------------------------------------------------------------- rebuilding, coalesced


def request(bank_ids, *, force: bool = False) -> None:
    """The banks' figures are out of date (their results changed): want a rebuild of each, and hand it to a worker
    now where one is due. `force`: due even within the interval (the day has changed, or a key was never built)."""
    with transaction.atomic():
        ids = _unlocked(Bank.objects.filter(pk__in=[pk for pk in bank_ids if pk is not None]))
        if not ids:
            return
        Bank.objects.filter(pk__in=ids, snapshots_wanted_at__isnull=True).update(
            snapshots_wanted_at=timezone.now()
        )
        dispatch_due(bank_ids=ids, force=force)


def _unlocked(banks) -> list[int]:
    """Lock the rows of the banks (a queryset) that no other transaction holds, and give their ids (within a
    transaction): a bank whose row a write holds is left alone, since that write asks for the rebuild itself once
    it commits (scores.results_changed), so neither a page read nor a finished write waits for another write."""
    return list(
        banks.select_for_update(no_key=True, skip_locked=True).order_by("pk").values_list("pk", flat=True)
    )


def dispatch_later(bank_ids) -> None:
    """dispatch_due() for these banks once the current transaction commits (a rebuild must see the change; the
    write that wants it marks them wanted itself: scores.results_changed)."""
    ids = [pk for pk in bank_ids if pk is not None]
    if ids:
        transaction.on_commit(lambda: dispatch_due(bank_ids=ids))


def dispatch_due(*, bank_ids=None, organization_id=None, force: bool = False) -> list[int]:
    """Hand a rebuild to the queue for each wanted bank (of `bank_ids`, of the organization, or any) that has none
    pending or running and whose last rebuild started ONCORE_SNAPSHOT_INTERVAL_S ago or more. Returns their ids."""
    now = timezone.now()
    wanted = Bank.objects.filter(snapshots_wanted_at__isnull=False).filter(
        Q(snapshots_dispatched_at__isnull=True) | Q(snapshots_dispatched_at__lt=now - DISPATCH_LEASE)  # lost
    )
    if not force:
        interval = timedelta(seconds=config().snapshot_interval_s)
        wanted = wanted.filter(Q(snapshots_built_at__isnull=True) | Q(snapshots_built_at__lte=now - interval))
    if bank_ids is not None:
        wanted = wanted.filter(pk__in=bank_ids)
    if organization_id is not None:
        wanted = wanted.filter(organization_id=organization_id)
    dispatched = []
    with transaction.atomic():
        for pk in _unlocked(wanted):
            if wanted.filter(pk=pk).update(snapshots_dispatched_at=now):
                dispatched.append(pk)
                handles.REBUILD_SNAPSHOTS.later(pk)  # work/tasks.rebuild_snapshots, once this commits
    return dispatched


def rebuild(bank_id: int) -> int:
    """The queue task: compute every recently read snapshot of the bank again. Returns how many were kept. Safe to
    run twice: a second run computes the same figures again."""
    now = timezone.now()
    if not Bank.objects.filter(pk=bank_id).update(snapshots_wanted_at=None, snapshots_built_at=now):
        return 0  # the bank was deleted
    bank = Bank.objects.select_related("organization").get(pk=bank_id)
    keys = (
        Snapshot.objects.filter(bank_id=bank_id, read_at__gte=now - READ_RECENTLY)
        .order_by("-read_at")
        .values_list("kind", "key")[:MAX_KEYS]
    )
    kept = 0
    try:
        for kind, key in list(keys):
            kept += build(bank, kind, key) is not None
    finally:
        Bank.objects.filter(pk=bank_id).update(snapshots_dispatched_at=None)
    return kept


BENCHMARK_LOOKBACK = timedelta(
    hours=1
)  # entity benchmark runs scored this recently are looked for by the sweep


def sweep() -> list[int]:
    """The minutely schedule's part: rebuilds wanted but not yet handed over (a change came within the interval
    and nothing has asked since), and those whose task was lost; and the banks whose cards show an entity
    benchmark headline that a run scored since their figures were computed has changed."""
    scored = benchmark.entity_scored_since(timezone.now() - BENCHMARK_LOOKBACK)
    behind = set()
    for transcriber_id, scored_at in scored.items():
        behind.update(
            Snapshot.objects.filter(
                computed_at__lt=scored_at, bank__candidates__transcriber_id=transcriber_id
            ).values_list("bank_id", flat=True)
        )
    if behind:
        request(behind, force=True)
    return sorted(set(dispatch_due()) | behind)


def drain() -> int:
    """Rebuild every wanted bank's snapshots in this process, interval or not (commands, demos and tests)."""
    done = 0
    for pk in Bank.objects.filter(snapshots_wanted_at__isnull=False).values_list("pk", flat=True):
        done += rebuild(pk)
    return done
