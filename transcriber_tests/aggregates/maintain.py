"""The per-day aggregates of every bank's scores (ScoreTotal, PairTotal, FlagTotal in models.py) and each item's
"candidates disagree" mark (Score.disagree on its live score), so a bank's results, its paired test, its control
mix and the turn table's counts read a few rows per candidate and day, whatever the bank's size.

How they are kept: in the transaction of every change to a bank's scores. A change to one item (a flag or one of
its controls: a score written, see `item_change`) locks the item's call and flag and shares its bank's row, reads
the item's scores before and after, and adds the difference of what the item contributes (`contributions`): one
upsert per table, whatever the bank's size, with the bank's row locked from there to the commit. A write of
several items gathers their differences and adds them once at its end (`batch`), so changes to a bank's other
calls go on side by side and wait for each other only for those last statements. A flag entering a bank adds
everything it contributes (`flag_entered`), one leaving it or deleted subtracts it (`flag_leaving`); a change of the
bank's candidates recomputes its disagree marks (`candidates_changed`). The actions call these; nothing else writes
the tables. A score counts on the day its flag joined the bank (Flag.joined_at, in the organization's timezone).

A change of candidates, and `rebuild` (`manage.py rebuild_results`), recompute from the scores: rebuild.py. The
reads of the totals are queries.totals."""

import threading
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date
from decimal import Decimal
from typing import NamedTuple
from zoneinfo import ZoneInfo

from django.db import connection
from django.db.models import F, Q

from oncore.calls.models import Call, Line

from ..lib import entities as lib_entities
from ..lib import tradeoff as lib_tradeoff
from ..models import (
    Bank,
    ControlLine,
    EntityTotal,
    Flag,
    FlagTotal,
    GroupPairTotal,
    GroupTotal,
    LatencyTotal,
    PairTotal,
    Score,
    ScoreTotal,
    TagTotal,
)
from ..models.totals import MICROS
from . import detail

# The tables, each with the columns that key a row besides (bank, day) and the columns summed.
TABLES = {
    "score": (
        ScoreTotal,
        ("source", "transcriber_id"),
        ("scored", "matches", "failed", "wer_units", "cost_micros", "control_scored", "control_matches"),
    ),
    "pair": (PairTotal, ("low_id", "high_id"), ("both", "low_only", "high_only")),
    "flag": (FlagTotal, ("controls",), ("flags", "disagree_flags", "disagree_controls")),
    "tag": (TagTotal, ("tag", "source", "transcriber_id"), ("scored", "matches", "failed", "wer_units")),
    # Split by the tenant and assistant of the items' calls (models.totals), and the candidates' latencies.
    "group": (
        GroupTotal,
        ("tenant_id", "assistant_id", "source", "transcriber_id"),
        ("scored", "matches", "failed", "wer_units", "cost_micros", "control_scored", "control_matches"),
    ),
    "group_pair": (
        GroupPairTotal,
        ("tenant_id", "assistant_id", "low_id", "high_id"),
        ("both", "low_only", "high_only"),
    ),
    "latency": (
        LatencyTotal,
        ("tenant_id", "assistant_id", "transcriber_id", "bucket"),
        ("lines", "latency_us", "audio_us"),
    ),
    "entity": (
        EntityTotal,
        ("tenant_id", "assistant_id", "transcriber_id", "category"),
        ("lines", "right", "n"),
    ),
}

TABLES.update(
    detail.TABLES
)  # confusion pairs and calls: what one call adds depends on all its items (detail.py)

EVERY_TENANT = (0, 0)  # the (tenant_id, assistant_id) of the latency rows that count every tenant's calls


ITEM_FIELDS = (
    "control_id",
    "source",
    "transcriber_id",
    "failed",
    "match",
    "wer_units",
    "cost",
    "latency_s",
    "audio_s",
    "entities",
    "disagree",
)


@dataclass(frozen=True, slots=True)
class ItemScore:
    control_id: int | None
    source: str
    transcriber_id: int
    failed: bool
    match: bool
    wer_units: int | None
    cost: Decimal | None
    latency_s: float | None
    audio_s: float | None
    entities: str  # Score.entities (lib.entities.encode)
    disagree: bool  # the item's mark, on its live score


def day_of(moment, zone=UTC) -> date:
    """The day a moment falls on in a timezone: a flag's scores count on the day it joined its bank, in its
    organization's timezone."""
    return moment.astimezone(zone).date()


def _micros(cost) -> int:
    return 0 if cost is None else int(Decimal(cost) * MICROS)


def disagrees(scores, candidate_ids) -> bool:
    """Among the item's scored texts of the bank's candidates, some matched and some did not."""
    return (
        len(
            {
                s.match
                for s in scores
                if s.source == Score.CANDIDATE and not s.failed and s.transcriber_id in candidate_ids
            }
        )
        == 2
    )


def latency_key(s) -> tuple | None:
    """(bucket, latency_us, audio_us) of a candidate's score whose transcription came back with its latency and
    audio length (lib/tradeoff.py: the latency buckets), or None."""
    latency_us, audio_us = lib_tradeoff.micros(s.latency_s), lib_tradeoff.micros(s.audio_s)
    if s.source != Score.CANDIDATE or latency_us is None or audio_us is None:
        return None
    return lib_tradeoff.bucket_of(latency_us), latency_us, audio_us


def entity_counts(s) -> dict:
    """{category: (right, n)} of a candidate's scored item's entities, "" (EntityTotal.EVERY) counting them all;
    {} for a live or failed score, or an item whose expected text has no entities."""
    if s.source != Score.CANDIDATE or s.failed or not s.entities:
        return {}
    counts = {EntityTotal.EVERY: [0, 0]}
    for mark in lib_entities.decode(s.entities):
        for category in (EntityTotal.EVERY, mark.category):
            row = counts.setdefault(category, [0, 0])
            row[0] += mark.kept
            row[1] += 1
    return counts


def contributions(
    scores, *, controls: int, is_control: bool, flag: bool = False, tags=(), group: tuple | None = None
) -> dict:
    """What an item adds to its bank's totals of its day, from its scores (the item's mark read from its live
    score): {(table, key...): counts}. With `flag`, the flag's own count too (its row of `controls` controls).
    A flag's own line also counts under each of the flag's `tags`, and, with `group` (the tenant and assistant
    ids of its call), under that tenant and assistant."""
    out = defaultdict(lambda: [0, 0, 0])
    groups = [EVERY_TENANT] + ([group] if group else [])
    for s in scores:
        ok = not s.failed
        counts = (ok, ok and s.match, s.failed, s.wer_units if ok else 0)
        summed = (*counts, _micros(s.cost), ok and is_control, ok and s.match and is_control)
        for key in [("score",)] + ([("group", *group)] if group else []):
            row = out.setdefault((*key, s.source, s.transcriber_id), [0] * len(summed))
            for i, n in enumerate(summed):
                row[i] += int(n)
        timed = latency_key(s)
        if timed is not None:
            bucket, latency_us, audio_us = timed
            for g in groups:
                row = out[("latency", *g, s.transcriber_id, bucket)]
                row[0] += 1
                row[1] += latency_us
                row[2] += audio_us
        for category, (right, n) in entity_counts(s).items():
            for g in groups:
                row = out[("entity", *g, s.transcriber_id, category)]
                row[0] += 1
                row[1] += right
                row[2] += n
        for tag in () if is_control else tags:
            row = out.setdefault(("tag", tag, s.source, s.transcriber_id), [0, 0, 0, 0])
            for i, n in enumerate(counts):
                row[i] += int(n)
    scored = sorted(
        (s for s in scores if s.source == Score.CANDIDATE and not s.failed), key=lambda s: s.transcriber_id
    )
    for i, a in enumerate(scored):
        for b in scored[i + 1 :]:
            for key in [("pair",)] + ([("group_pair", *group)] if group else []):
                row = out[(*key, a.transcriber_id, b.transcriber_id)]
                row[0] += 1
                row[1] += a.match and not b.match
                row[2] += b.match and not a.match
    marked = any(s.source == Score.LIVE and s.disagree for s in scores)
    if marked or flag:
        row = out[("flag", controls)]
        row[0] += flag
        row[1] += marked and not is_control
        row[2] += marked and is_control
    return out


class Delta:
    """Differences to add to the tables, gathered then written with one upsert per table."""

    def __init__(self):
        self.rows = defaultdict(lambda: None)

    def add(self, bank_id: int, day: date, contributed: dict, sign: int = 1) -> None:
        for key, counts in contributed.items():
            current = self.rows[(bank_id, day, *key)]
            if current is None:
                current = self.rows[(bank_id, day, *key)] = [0] * len(counts)
            for i, n in enumerate(counts):
                current[i] += sign * n

    def save(self, also_lock=()) -> None:
        """Add the differences to the tables. The banks' rows are locked first, with those of `also_lock`, in id
        order (for a no-key update, which item changes' key share allows): from here to its commit a change is the
        only one adding to its banks' totals, whose rows every score writes (one per candidate and day), so changes
        on different calls never lock those rows in a circle; the reads and computing before it ran side by side."""
        by_table = defaultdict(list)
        for (bank_id, day, table, *key), counts in self.rows.items():
            if counts is not None and any(counts):
                by_table[table].append((bank_id, connection.ops.adapt_datefield_value(day), *key, *counts))
        banks = {row[0] for rows in by_table.values() for row in rows} | set(also_lock)
        list(
            Bank.objects.select_for_update(no_key=True).filter(pk__in=banks).order_by("pk").values_list("pk")
        )
        for table, rows in by_table.items():
            _upsert(*TABLES[table], rows)
        self.rows.clear()


_batch = threading.local()  # the Delta of the batch this thread's transaction is in, if any


@contextmanager
def batch():
    """Around a write of several items in one transaction (a flag made, a line's scores): the changes to the
    totals gather in one Delta, yielded to the caller, which saves it at the end (so the banks' rows are locked
    once, for the end of the transaction only); nested, the outer batch gathers them all. Outside a batch, each
    change saves its own. A savepoint rolled back inside a batch must not be caught inside it: the differences
    gathered in it would stay."""
    if getattr(_batch, "delta", None) is not None:
        yield _batch.delta
        return
    _batch.delta = Delta()
    try:
        yield _batch.delta
    finally:
        _batch.delta = None


def _gather(delta: Delta) -> None:
    """A change's differences: into the batch it is in, or saved now."""
    pending = getattr(_batch, "delta", None)
    if pending is None:
        delta.save()
        return
    for (bank_id, day, *key), counts in delta.rows.items():
        if counts is not None:
            pending.add(bank_id, day, {tuple(key): counts})


def _upsert(model, key_columns, summed, rows) -> None:
    """INSERT ... ON CONFLICT DO UPDATE adding each summed column (PostgreSQL and SQLite alike)."""
    q = connection.ops.quote_name
    table = q(model._meta.db_table)
    keys = ["bank_id", "day", *key_columns]
    columns = [*keys, *summed]
    one = "(" + ", ".join(["%s"] * len(columns)) + ")"
    sql = (
        f"INSERT INTO {table} ({', '.join(map(q, columns))}) VALUES {', '.join([one] * len(rows))} "
        f"ON CONFLICT ({', '.join(map(q, keys))}) DO UPDATE SET "
        + ", ".join(f"{q(c)} = {table}.{q(c)} + EXCLUDED.{q(c)}" for c in summed)
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for row in rows for value in row])


# ---------------------------------------------------------------- keeping them


def lock_call(*, line: int | None = None, flag: int | None = None) -> int | None:
    """Lock the call of a line or of a flag's line (within a transaction), move the version of the flags whose
    items the change is about (the flag; the line's flag and the flags it is a control of: what the call page
    keeps of them is read again) and give the call's id (None: no such line or flag). Every change to the items
    of a bank locks in one order, the call, then its flags (`_lock_flag`), then the bank's row (`_share_bank`, and
    `Delta.save`'s turn), so two changes never wait on each other in a circle."""
    lines = Line.objects.filter(pk=line) if flag is None else Line.objects.filter(flag=flag)
    call = lines.values("call_id")
    sql, params = call.query.sql_with_params()
    with connection.cursor() as cursor:  # one statement: an UPDATE locks the row as FOR NO KEY UPDATE does
        cursor.execute(
            f"UPDATE {Call._meta.db_table} SET flags_version = flags_version + 1 WHERE id = ({sql}) RETURNING id",
            params,
        )
        found = cursor.fetchone()
    if found is None:
        return None
    if flag is not None:
        about = Q(pk=flag)
    else:
        about = Q(line_id=line) | Q(pk__in=ControlLine.objects.filter(line_id=line).values("flag_id"))
    Flag.objects.filter(about).update(items_version=F("items_version") + 1)
    return found[0]


def _share_bank(bank_id: int) -> None:
    """Hold the bank's row in key share: changes to items of the bank's other calls go on side by side, while a
    rebuild and a change of candidates (which lock the row for update) wait for every one in flight, and they
    for it. SQLite has no row locks (one writer at a time)."""
    if connection.features.has_select_for_update:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {Bank._meta.db_table} WHERE id = %s FOR KEY SHARE", [bank_id])


class Place(NamedTuple):
    """Where a flag's changes count: its bank, the day it joined it (in its organization's timezone), its tags,
    the (tenant id, assistant id) of its call, its call's id and the timezone."""

    bank_id: int
    day: date
    tags: list
    group: tuple
    call_id: int
    zone: ZoneInfo

    def call(self) -> detail.Call:
        """The flag's call in its bank on its day, its rows as they are now."""
        return detail.call_of(self.bank_id, self.day, self.call_id, self.zone)


def _lock_flag(flag_id: int) -> Place | None:
    """Lock the flag's call (a call's totals are read from all its items: two changes on one call go in turn),
    then the flag's row, then share its bank's (`_share_bank`), and give where its changes count (None: the
    flag is gone, in no bank, or not settled yet: actions.flags.settle counts it)."""
    call_id = lock_call(flag=flag_id)
    if call_id is None:
        return None
    found = (
        Flag.objects.select_for_update(of=("self",))
        .filter(pk=flag_id)
        .values_list(
            "bank_id",
            "settled",
            "joined_at",
            "tags",
            "organization__timezone",
            "line__call__tenant_id",
            "line__call__assistant_id",
        )
        .first()
    )
    if found is None or found[0] is None or not found[1]:  # an unsettled flag is not counted yet
        return None
    bank_id, _, joined_at, tags, zone, tenant_id, assistant_id = found
    _share_bank(bank_id)
    zone = ZoneInfo(zone)
    return Place(
        bank_id,
        day_of(joined_at, zone),
        Flag.decode_tags(tags),
        (tenant_id, assistant_id or 0),
        call_id,
        zone,
    )


def _scores(flag_id: int, control_id=None, *, whole_flag: bool = False) -> list[ItemScore]:
    qs = Score.objects.filter(flag_id=flag_id)
    if not whole_flag:
        qs = qs.filter(control_id=control_id) if control_id else qs.filter(control__isnull=True)
    return [ItemScore(*row) for row in qs.values_list(*ITEM_FIELDS)]


def _controls(flag_id: int) -> int:
    return ControlLine.objects.filter(flag_id=flag_id).count()


def _mark(flag_id: int, control_id, scores, candidate_ids) -> list[ItemScore]:
    """Store the item's disagree mark on its live score as its scores now say; the scores with the mark set."""
    should = disagrees(scores, candidate_ids)
    live = [s for s in scores if s.source == Score.LIVE]
    if live and live[0].disagree != should:
        Score.objects.filter(flag_id=flag_id, control_id=control_id, source=Score.LIVE).update(
            disagree=should
        )
    return [
        s if s.source != Score.LIVE else ItemScore(*[getattr(s, f) for f in ITEM_FIELDS[:-1]], should)
        for s in scores
    ]


@contextmanager
def item_change(flag_id: int, control_id=None):
    """Around a change to one item's scores (within a transaction): the item's totals follow it."""
    place = _lock_flag(flag_id)
    before = _scores(flag_id, control_id) if place else None
    call = place.call() if place else None
    yield
    if place is None:
        return
    candidate_ids = detail.candidate_ids(place.bank_id)
    after = _mark(flag_id, control_id, _scores(flag_id, control_id), candidate_ids)
    shape = {"controls": 0, "is_control": control_id is not None, "tags": place.tags, "group": place.group}
    old, new = contributions(before, **shape), contributions(after, **shape)
    if any(k[0] == "flag" for k in (*old, *new)):  # the mark changed: it counts on the flag's row
        shape["controls"] = _controls(flag_id)
        old, new = contributions(before, **shape), contributions(after, **shape)
    delta = Delta()
    delta.add(place.bank_id, place.day, old, -1)
    delta.add(place.bank_id, place.day, new)
    delta.add(place.bank_id, place.day, detail.after_item(call, flag_id, control_id, candidate_ids))
    _gather(delta)


def _whole_flag(flag_id: int, scores, tags, group) -> dict:
    """Everything a flag adds to its bank's totals: its count and each of its items."""
    controls = _controls(flag_id)
    by_item = defaultdict(list)
    for s in scores:
        by_item[s.control_id].append(s)
    total = contributions([], controls=controls, is_control=False, flag=True)
    for control_id, item in by_item.items():
        shape = {"controls": controls, "is_control": control_id is not None, "tags": tags, "group": group}
        for key, counts in contributions(item, **shape).items():
            row = total.setdefault(key, [0] * len(counts))
            for i, n in enumerate(counts):
                row[i] += n
    return total


def flag_leaving(flag_id: int) -> None:
    """Before a flag leaves its bank, is deleted or has its tags changed (within the transaction): take out all
    it added (flag_entered puts it back)."""
    place = _lock_flag(flag_id)
    if place is not None:
        delta = Delta()
        scores = _scores(flag_id, whole_flag=True)
        delta.add(place.bank_id, place.day, _whole_flag(flag_id, scores, place.tags, place.group), -1)
        delta.add(place.bank_id, place.day, detail.leaving(place.call(), flag_id))
        _gather(delta)


def flag_entered(flag_id: int) -> None:
    """Once a flag is in its bank with its controls (within the transaction): add its count and the scores it
    brings (a moved flag keeps its own line's), each item's mark set for this bank's candidates."""
    place = _lock_flag(flag_id)
    if place is None:
        return
    candidate_ids = detail.candidate_ids(place.bank_id)
    scores = _scores(flag_id, whole_flag=True)
    by_item = defaultdict(list)
    for s in scores:
        by_item[s.control_id].append(s)
    marked = [
        s for control_id, item in by_item.items() for s in _mark(flag_id, control_id, item, candidate_ids)
    ]
    delta = Delta()
    delta.add(place.bank_id, place.day, _whole_flag(flag_id, marked, place.tags, place.group))
    delta.add(place.bank_id, place.day, detail.entered(place.call(), flag_id, candidate_ids))
    _gather(delta)
