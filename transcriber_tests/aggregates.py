"""The per-day aggregates of every bank's scores (ScoreTotal, PairTotal, FlagTotal in models.py) and each item's
"candidates disagree" mark (Score.disagree on its live score), so a bank's results, its paired test, its control
mix and the turn table's counts read a few rows per candidate and day, whatever the bank's size.

How they are kept: in the transaction of every change to a bank's scores. A change to one item (a flag or one of
its controls: a score written, see `item_change`) locks the item's flag, reads the item's scores before and after,
and adds the difference of what the item contributes (`contributions`): one upsert per table, whatever the bank's
size. A flag entering a bank adds everything it contributes (`flag_entered`), one leaving it or deleted subtracts
it (`flag_leaving`); a change of the bank's candidates recomputes its disagree marks (`candidates_changed`). The
actions call these; nothing else writes the tables. A score counts on its flag's day (created_at, in UTC).

`rebuild` recomputes everything from the scores, reporting what differed (`manage.py rebuild_results`). The
reads of the totals are queries.totals."""

from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date
from decimal import Decimal

from django.db import connection, transaction
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    Subquery,
    Sum,
)
from django.db.models.functions import Coalesce, TruncDate

from oncore.calls.models import Call, Line

from .models import Bank, Candidate, ControlLine, Flag, FlagTotal, PairTotal, Score, ScoreTotal, TagTotal

MICROS = 1_000_000  # costs are summed in millionths of a dollar (Score.cost has six decimal places): exact

# The tables, each with the columns that key a row besides (bank, day) and the columns summed.
TABLES = {
    "score": (
        ScoreTotal,
        ("source", "transcriber_id"),
        ("scored", "matches", "failed", "wer_units", "cost_micros"),
    ),
    "pair": (PairTotal, ("low_id", "high_id"), ("both", "low_only", "high_only")),
    "flag": (FlagTotal, ("controls",), ("flags", "disagree_flags", "disagree_controls")),
    "tag": (TagTotal, ("tag", "source", "transcriber_id"), ("scored", "matches", "failed", "wer_units")),
}
ITEM_FIELDS = ("control_id", "source", "transcriber_id", "failed", "match", "wer_units", "cost", "disagree")


@dataclass(frozen=True, slots=True)
class ItemScore:
    control_id: int | None
    source: str
    transcriber_id: int
    failed: bool
    match: bool
    wer_units: int | None
    cost: Decimal | None
    disagree: bool  # the item's mark, on its live score


def day_of(moment) -> date:
    """The day a flag's scores count on: its creation time's date in UTC."""
    return moment.astimezone(UTC).date()


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


def contributions(scores, *, controls: int, is_control: bool, flag: bool = False, tags=()) -> dict:
    """What an item adds to its bank's totals of its day, from its scores (the item's mark read from its live
    score): {(table, key...): counts}. With `flag`, the flag's own count too (its row of `controls` controls).
    A flag's own line also counts under each of the flag's `tags`."""
    out = defaultdict(lambda: [0, 0, 0])
    for s in scores:
        row = out.setdefault(("score", s.source, s.transcriber_id), [0, 0, 0, 0, 0])
        ok = not s.failed
        counts = (ok, ok and s.match, s.failed, s.wer_units if ok else 0)
        for i, n in enumerate((*counts, _micros(s.cost))):
            row[i] += int(n)
        for tag in () if is_control else tags:
            row = out.setdefault(("tag", tag, s.source, s.transcriber_id), [0, 0, 0, 0])
            for i, n in enumerate(counts):
                row[i] += int(n)
    scored = sorted(
        (s for s in scores if s.source == Score.CANDIDATE and not s.failed), key=lambda s: s.transcriber_id
    )
    for i, a in enumerate(scored):
        for b in scored[i + 1 :]:
            row = out[("pair", a.transcriber_id, b.transcriber_id)]
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

    def save(self) -> None:
        by_table = defaultdict(list)
        for (bank_id, day, table, *key), counts in self.rows.items():
            if counts is not None and any(counts):
                by_table[table].append((bank_id, connection.ops.adapt_datefield_value(day), *key, *counts))
        for table, rows in by_table.items():
            _upsert(*TABLES[table], rows)
        self.rows.clear()


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


def _lock_flag(flag_id: int):
    """Lock the flag's row, then its bank's (every change to an item waits for the one before, and a rebuild
    for the bank waits for both), and give (bank id, day, tags). Flags are always locked before banks."""
    found = (
        Flag.objects.select_for_update()
        .filter(pk=flag_id)
        .values_list("bank_id", "created_at", "tags")
        .first()
    )
    if found is None or found[0] is None:
        return None, None, ()
    list(Bank.objects.select_for_update().filter(pk=found[0]).values_list("pk"))
    return found[0], day_of(found[1]), Flag.decode_tags(found[2])


def _scores(flag_id: int, control_id=None, *, whole_flag: bool = False) -> list[ItemScore]:
    qs = Score.objects.filter(flag_id=flag_id)
    if not whole_flag:
        qs = qs.filter(control_id=control_id) if control_id else qs.filter(control__isnull=True)
    return [ItemScore(*row) for row in qs.values_list(*ITEM_FIELDS)]


def _candidate_ids(bank_id: int) -> set[int]:
    return set(Candidate.objects.filter(bank_id=bank_id).values_list("transcriber_id", flat=True))


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
    bank_id, day, tags = _lock_flag(flag_id)
    before = _scores(flag_id, control_id) if bank_id else None
    yield
    if bank_id is None:
        return
    after = _mark(flag_id, control_id, _scores(flag_id, control_id), _candidate_ids(bank_id))
    shape = {"controls": 0, "is_control": control_id is not None, "tags": tags}
    old, new = contributions(before, **shape), contributions(after, **shape)
    if any(k[0] == "flag" for k in (*old, *new)):  # the mark changed: it counts on the flag's row
        shape["controls"] = _controls(flag_id)
        old, new = contributions(before, **shape), contributions(after, **shape)
    delta = Delta()
    delta.add(bank_id, day, old, -1)
    delta.add(bank_id, day, new)
    delta.save()


def _whole_flag(flag_id: int, scores, tags) -> dict:
    """Everything a flag adds to its bank's totals: its count and each of its items."""
    controls = _controls(flag_id)
    by_item = defaultdict(list)
    for s in scores:
        by_item[s.control_id].append(s)
    total = contributions([], controls=controls, is_control=False, flag=True)
    for control_id, item in by_item.items():
        shape = {"controls": controls, "is_control": control_id is not None, "tags": tags}
        for key, counts in contributions(item, **shape).items():
            row = total.setdefault(key, [0] * len(counts))
            for i, n in enumerate(counts):
                row[i] += n
    return total


def flag_leaving(flag_id: int) -> None:
    """Before a flag leaves its bank, is deleted or has its tags changed (within the transaction): take out all
    it added (flag_entered puts it back)."""
    bank_id, day, tags = _lock_flag(flag_id)
    if bank_id is not None:
        delta = Delta()
        delta.add(bank_id, day, _whole_flag(flag_id, _scores(flag_id, whole_flag=True), tags), -1)
        delta.save()


def flag_entered(flag_id: int) -> None:
    """Once a flag is in its bank with its controls (within the transaction): add its count and the scores it
    brings (a moved flag keeps its own line's), each item's mark set for this bank's candidates."""
    bank_id, day, tags = _lock_flag(flag_id)
    if bank_id is None:
        return
    candidate_ids = _candidate_ids(bank_id)
    scores = _scores(flag_id, whole_flag=True)
    by_item = defaultdict(list)
    for s in scores:
        by_item[s.control_id].append(s)
    marked = [
        s for control_id, item in by_item.items() for s in _mark(flag_id, control_id, item, candidate_ids)
    ]
    delta = Delta()
    delta.add(bank_id, day, _whole_flag(flag_id, marked, tags))
    delta.save()


def candidates_changed(bank_id: int) -> None:
    """After the bank's candidates changed (within the transaction): every item's mark and the bank's flag rows
    again (one pass over its items in the database; the score and pair totals do not depend on candidates)."""
    _marks(bank_id, fix=True)
    FlagTotal.objects.filter(bank_id=bank_id).delete()
    FlagTotal.objects.bulk_create(FlagTotal(**row) for row in _flag_rows([bank_id]))


# ---------------------------------------------------------------- recomputing from the scores


def _marks(bank_id: int, *, fix: bool) -> int:
    """Items of the bank whose mark differs from what their scores say (set right with `fix`)."""
    wrong = 0
    for controls in (False, True):
        items = Score.objects.filter(source=Score.LIVE, flag__bank_id=bank_id, control__isnull=not controls)
        scored = Score.objects.filter(
            source=Score.CANDIDATE,
            failed=False,
            transcriber_id__in=Candidate.objects.filter(bank_id=bank_id).values("transcriber_id"),
            flag_id=OuterRef("flag_id"),
        )
        scored = (
            scored.filter(control_id=OuterRef("control_id"))
            if controls
            else scored.filter(control__isnull=True)
        )
        should = ExpressionWrapper(
            Exists(scored.filter(match=True)) & Exists(scored.filter(match=False)),
            output_field=BooleanField(),
        )
        differing = items.annotate(should=should).exclude(disagree=F("should"))
        found = differing.count()
        if fix and found:  # only the rows that differ are written
            items.filter(pk__in=differing.values("pk")).update(disagree=should)
        wrong += found
    return wrong


def _flag_rows(bank_ids) -> list[dict]:
    """FlagTotal rows of these banks computed from their flags, controls and marks."""

    def count(qs):
        return Coalesce(Subquery(qs.order_by().values("flag_id").annotate(n=Count("id")).values("n")), 0)

    live = Score.objects.filter(source=Score.LIVE, flag_id=OuterRef("pk"), disagree=True)
    rows = (
        Flag.objects.filter(bank_id__in=bank_ids)
        .annotate(
            n_controls=count(ControlLine.objects.filter(flag_id=OuterRef("pk"))),
            flag_marked=count(live.filter(control__isnull=True)),
            controls_marked=count(live.filter(control__isnull=False)),
            on=TruncDate("created_at", tzinfo=UTC),
        )
        .order_by()
        .values("bank_id", "on", "n_controls")
        .annotate(n=Count("id"), df=Sum("flag_marked"), dc=Sum("controls_marked"))
    )
    return [
        {
            "bank_id": r["bank_id"],
            "day": r["on"],
            "controls": r["n_controls"],
            "flags": r["n"],
            "disagree_flags": r["df"] or 0,
            "disagree_controls": r["dc"] or 0,
        }
        for r in rows
    ]


def _score_rows(bank_ids) -> list[dict]:
    """ScoreTotal rows of these banks computed from their scores."""
    ok = Q(failed=False)
    rows = (
        Score.objects.filter(flag__bank_id__in=bank_ids)
        .annotate(bank=F("flag__bank_id"), on=TruncDate("flag__created_at", tzinfo=UTC))
        .order_by()
        .values("bank", "on", "source", "transcriber_id")
        .annotate(
            n_scored=Count("id", filter=ok),
            n_matches=Count("id", filter=ok & Q(match=True)),
            n_failed=Count("id", filter=Q(failed=True)),
            units=Sum("wer_units", filter=ok),
            total_cost=Sum("cost"),
        )
    )
    return [
        {
            "bank_id": r["bank"],
            "day": r["on"],
            "source": r["source"],
            "transcriber_id": r["transcriber_id"],
            "scored": r["n_scored"],
            "matches": r["n_matches"],
            "failed": r["n_failed"],
            "wer_units": int(r["units"] or 0),
            "cost_micros": _micros(r["total_cost"]),
        }
        for r in rows
    ]


def _tag_rows(bank_ids) -> list[dict]:
    """TagTotal rows of these banks computed from their flagged lines' scores, grouped in the database by each
    flag's set of tags, then counted under each tag."""
    ok = Q(failed=False)
    rows = (
        Score.objects.filter(flag__bank_id__in=bank_ids, control__isnull=True)
        .exclude(flag__tags="")
        .annotate(
            bank=F("flag__bank_id"), on=TruncDate("flag__created_at", tzinfo=UTC), tag_set=F("flag__tags")
        )
        .order_by()
        .values("bank", "on", "tag_set", "source", "transcriber_id")
        .annotate(
            n_scored=Count("id", filter=ok),
            n_matches=Count("id", filter=ok & Q(match=True)),
            n_failed=Count("id", filter=Q(failed=True)),
            units=Sum("wer_units", filter=ok),
        )
    )
    totals = defaultdict(lambda: [0, 0, 0, 0])
    for r in rows:
        for tag in Flag.decode_tags(r["tag_set"]):
            total = totals[(r["bank"], r["on"], tag, r["source"], r["transcriber_id"])]
            for i, n in enumerate((r["n_scored"], r["n_matches"], r["n_failed"], int(r["units"] or 0))):
                total[i] += n
    columns = (
        "bank_id",
        "day",
        "tag",
        "source",
        "transcriber_id",
        "scored",
        "matches",
        "failed",
        "wer_units",
    )
    return [dict(zip(columns, (*key, *counts), strict=True)) for key, counts in totals.items()]


PAIRS_SQL = """
SELECT f.bank_id, {day}, l.transcriber_id, r.transcriber_id, COUNT(*),
  SUM(CASE WHEN l."match" AND NOT r."match" THEN 1 ELSE 0 END),
  SUM(CASE WHEN r."match" AND NOT l."match" THEN 1 ELSE 0 END)
FROM transcriber_tests_score l
JOIN transcriber_tests_score r ON r.flag_id = l.flag_id AND r.source = 'candidate' AND NOT r.failed
  AND r.transcriber_id > l.transcriber_id
  AND (r.control_id = l.control_id OR (r.control_id IS NULL AND l.control_id IS NULL))
JOIN transcriber_tests_flag f ON f.id = l.flag_id
WHERE l.source = 'candidate' AND NOT l.failed AND f.bank_id IN ({banks})
GROUP BY 1, 2, 3, 4
"""


def _pair_rows(bank_ids) -> list[dict]:
    """PairTotal rows of these banks computed from their scores (one self-join, grouped in the database)."""
    day_sql, day_params = connection.ops.datetime_cast_date_sql("f.created_at", (), "UTC")
    sql = PAIRS_SQL.format(day=day_sql, banks=", ".join(["%s"] * len(bank_ids)))
    with connection.cursor() as cursor:
        cursor.execute(sql, [*day_params, *bank_ids])
        found = cursor.fetchall()
    field = PairTotal._meta.get_field("day")
    return [
        {
            "bank_id": bank_id,
            "day": field.to_python(day),
            "low_id": low,
            "high_id": high,
            "both": int(both),
            "low_only": int(low_only),
            "high_only": int(high_only),
        }
        for bank_id, day, low, high, both, low_only, high_only in found
    ]


COMPUTE = {"score": _score_rows, "pair": _pair_rows, "flag": _flag_rows, "tag": _tag_rows}


def _keyed(table, rows) -> dict:
    model, key_columns, summed = TABLES[table]
    return {
        (r["bank_id"], r["day"], *(r[k] for k in key_columns)): tuple(r[c] for c in summed)
        for r in rows
        if any(r[c] for c in summed)
    }


@dataclass(frozen=True)
class Drift:
    """What a rebuild found different from the stored totals."""

    rows: dict  # table -> rows that were missing, extra or different
    marks: int  # items whose disagree mark was wrong
    calls: int  # calls whose line or flag counter was wrong
    examples: tuple = ()

    @property
    def any(self) -> bool:
        return bool(self.marks or self.calls or any(self.rows.values()))


def rebuild(bank_ids=None, *, fix: bool = True) -> Drift:
    """Recompute the banks' marks and totals (every bank when bank_ids is None) and the calls' counters from the
    scores, flags and lines; with `fix`, store them, in one transaction: the banks' rows are locked, so score writes
    wait for it. Returns what differed."""
    with transaction.atomic():
        return _rebuild(bank_ids, fix=fix)


def _rebuild(bank_ids, *, fix: bool) -> Drift:
    bank_ids = list(Bank.objects.values_list("pk", flat=True)) if bank_ids is None else list(bank_ids)
    list(
        Bank.objects.select_for_update().filter(pk__in=bank_ids).values_list("pk")
    )  # score writes wait (see _lock_flag)
    marks = sum(_marks(bank_id, fix=fix) for bank_id in bank_ids)
    rows, examples = {}, []
    for table, compute in COMPUTE.items():
        model, key_columns, summed = TABLES[table]
        fresh = compute(bank_ids) if bank_ids else []
        stored = _keyed(
            table, model.objects.filter(bank_id__in=bank_ids).values("bank_id", "day", *key_columns, *summed)
        )
        wanted = _keyed(table, fresh)
        differing = [k for k in stored.keys() | wanted.keys() if stored.get(k) != wanted.get(k)]
        rows[table] = len(differing)
        examples += [
            f"{table} {k}: stored {stored.get(k)}, computed {wanted.get(k)}"
            for k in sorted(differing, key=str)[:3]
        ]
        if fix and differing:
            model.objects.filter(bank_id__in=bank_ids).delete()
            model.objects.bulk_create((model(**r) for r in fresh), batch_size=2000)
    calls = _call_counters(fix=fix)
    return Drift(rows, marks, calls, tuple(examples))


def _call_counters(*, fix: bool) -> int:
    """Calls whose n_lines or n_flags differ from their lines and flags (set right with `fix`)."""

    def count(qs):
        return Coalesce(Subquery(qs.order_by().values("call_id").annotate(n=Count("id")).values("n")), 0)

    real_lines = count(Line.objects.filter(call_id=OuterRef("pk")))
    real_flags = count(Flag.objects.filter(line__call_id=OuterRef("pk")).annotate(call_id=F("line__call_id")))
    wrong = Call.objects.annotate(real_lines=real_lines, real_flags=real_flags).filter(
        ~Q(n_lines=F("real_lines")) | ~Q(n_flags=F("real_flags"))
    )
    ids = list(wrong.values_list("pk", flat=True))
    if fix and ids:
        Call.objects.filter(pk__in=ids).update(n_lines=real_lines, n_flags=real_flags)
    return len(ids)
