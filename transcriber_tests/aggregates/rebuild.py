"""Recomputing the per-day totals and the disagree marks from the scores: after a change of a bank's candidates
(`candidates_changed`), and wholly by `rebuild` (`manage.py rebuild_results`, and the migrations that add a kind
of total), which reports what differed from the stored totals."""

from collections import defaultdict
from dataclasses import dataclass
from zoneinfo import ZoneInfo

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

from ..models import Bank, Candidate, ControlLine, Flag, FlagTotal, PairTotal, Score
from . import detail
from .maintain import EVERY_TENANT, TABLES, ItemScore, _micros, entity_counts, latency_key


def candidates_changed(bank_id: int) -> None:
    """After the bank's candidates changed (within the transaction): every item's mark and the bank's flag rows
    again (one pass over its items in the database; the score and pair totals do not depend on candidates)."""
    _marks(bank_id, fix=True)
    detail.recheck(bank_id, fix=True)  # the check of the expected texts counts the bank's candidates
    FlagTotal.objects.filter(bank_id=bank_id).delete()
    zone = ZoneInfo(Bank.objects.values_list("organization__timezone", flat=True).get(pk=bank_id))
    FlagTotal.objects.bulk_create(FlagTotal(**row) for row in _flag_rows([bank_id], zone))


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


def _flag_rows(bank_ids, zone) -> list[dict]:
    """FlagTotal rows of these banks (of organizations in the timezone `zone`) computed from their flags, controls
    and marks."""

    def count(qs):
        return Coalesce(Subquery(qs.order_by().values("flag_id").annotate(n=Count("id")).values("n")), 0)

    live = Score.objects.filter(source=Score.LIVE, flag_id=OuterRef("pk"), disagree=True)
    rows = (  # an unsettled flag is counted when it settles
        Flag.objects.filter(bank_id__in=bank_ids, settled=True)
        .annotate(
            n_controls=count(ControlLine.objects.filter(flag_id=OuterRef("pk"))),
            flag_marked=count(live.filter(control__isnull=True)),
            controls_marked=count(live.filter(control__isnull=False)),
            on=TruncDate("joined_at", tzinfo=zone),
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


def _score_rows(bank_ids, zone) -> list[dict]:
    """ScoreTotal rows of these banks (in the timezone `zone`) computed from their scores."""
    ok = Q(failed=False)
    rows = (
        Score.objects.filter(flag__bank_id__in=bank_ids)
        .annotate(bank=F("flag__bank_id"), on=TruncDate("flag__joined_at", tzinfo=zone))
        .order_by()
        .values("bank", "on", "source", "transcriber_id")
        .annotate(
            n_scored=Count("id", filter=ok),
            n_matches=Count("id", filter=ok & Q(match=True)),
            n_failed=Count("id", filter=Q(failed=True)),
            units=Sum("wer_units", filter=ok),
            total_cost=Sum("cost"),
            n_control_scored=Count("id", filter=ok & Q(control__isnull=False)),
            n_control_matches=Count("id", filter=ok & Q(match=True, control__isnull=False)),
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
            "control_scored": r["n_control_scored"],
            "control_matches": r["n_control_matches"],
        }
        for r in rows
    ]


def _tag_rows(bank_ids, zone) -> list[dict]:
    """TagTotal rows of these banks computed from their flagged lines' scores, grouped in the database by each
    flag's set of tags, then counted under each tag."""
    ok = Q(failed=False)
    rows = (
        Score.objects.filter(flag__bank_id__in=bank_ids, control__isnull=True)
        .exclude(flag__tags="")
        .annotate(
            bank=F("flag__bank_id"), on=TruncDate("flag__joined_at", tzinfo=zone), tag_set=F("flag__tags")
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


def _pair_rows(bank_ids, zone) -> list[dict]:
    """PairTotal rows of these banks computed from their scores (one self-join, grouped in the database)."""
    day_sql, day_params = connection.ops.datetime_cast_date_sql("f.joined_at", (), str(zone))
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


def _day_and_group(zone) -> dict:
    """A score's bank, its day (its flag's, in the organization's timezone) and its call's tenant and assistant (0
    for none), as annotations."""
    return {
        "bank": F("flag__bank_id"),
        "on": TruncDate("flag__joined_at", tzinfo=zone),
        "tenant": F("flag__line__call__tenant_id"),
        "assistant": Coalesce(F("flag__line__call__assistant_id"), 0),
    }


def _group_rows(bank_ids, zone) -> list[dict]:
    """GroupTotal rows of these banks: their scores grouped by the tenant and assistant of the items' calls."""
    ok = Q(failed=False)
    rows = (
        Score.objects.filter(flag__bank_id__in=bank_ids)
        .annotate(**_day_and_group(zone))
        .order_by()
        .values("bank", "on", "tenant", "assistant", "source", "transcriber_id")
        .annotate(
            n_scored=Count("id", filter=ok),
            n_matches=Count("id", filter=ok & Q(match=True)),
            n_failed=Count("id", filter=Q(failed=True)),
            units=Sum("wer_units", filter=ok),
            total_cost=Sum("cost"),
            n_control_scored=Count("id", filter=ok & Q(control__isnull=False)),
            n_control_matches=Count("id", filter=ok & Q(match=True, control__isnull=False)),
        )
    )
    return [
        {
            "bank_id": r["bank"],
            "day": r["on"],
            "tenant_id": r["tenant"],
            "assistant_id": r["assistant"],
            "source": r["source"],
            "transcriber_id": r["transcriber_id"],
            "scored": r["n_scored"],
            "matches": r["n_matches"],
            "failed": r["n_failed"],
            "wer_units": int(r["units"] or 0),
            "cost_micros": _micros(r["total_cost"]),
            "control_scored": r["n_control_scored"],
            "control_matches": r["n_control_matches"],
        }
        for r in rows
    ]


GROUP_PAIRS_SQL = """
SELECT f.bank_id, {day}, c.tenant_id, COALESCE(c.assistant_id, 0), l.transcriber_id, r.transcriber_id, COUNT(*),
  SUM(CASE WHEN l."match" AND NOT r."match" THEN 1 ELSE 0 END),
  SUM(CASE WHEN r."match" AND NOT l."match" THEN 1 ELSE 0 END)
FROM transcriber_tests_score l
JOIN transcriber_tests_score r ON r.flag_id = l.flag_id AND r.source = 'candidate' AND NOT r.failed
  AND r.transcriber_id > l.transcriber_id
  AND (r.control_id = l.control_id OR (r.control_id IS NULL AND l.control_id IS NULL))
JOIN transcriber_tests_flag f ON f.id = l.flag_id
JOIN {line} ln ON ln.id = f.line_id
JOIN {call} c ON c.id = ln.call_id
WHERE l.source = 'candidate' AND NOT l.failed AND f.bank_id IN ({banks})
GROUP BY 1, 2, 3, 4, 5, 6
"""


def _group_pair_rows(bank_ids, zone) -> list[dict]:
    """GroupPairTotal rows of these banks: the pair counts grouped by the tenant and assistant of the calls."""
    day_sql, day_params = connection.ops.datetime_cast_date_sql("f.joined_at", (), str(zone))
    sql = GROUP_PAIRS_SQL.format(
        day=day_sql,
        line=Line._meta.db_table,
        call=Call._meta.db_table,
        banks=", ".join(["%s"] * len(bank_ids)),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*day_params, *bank_ids])
        found = cursor.fetchall()
    field = PairTotal._meta.get_field("day")
    columns = ("tenant_id", "assistant_id", "low_id", "high_id", "both", "low_only", "high_only")
    return [
        {"bank_id": bank_id, "day": field.to_python(day), **dict(zip(columns, map(int, rest), strict=True))}
        for bank_id, day, *rest in found
    ]


LATENCY_CHUNK = 5000


def _latency_rows(bank_ids, zone) -> list[dict]:
    """LatencyTotal rows of these banks: their candidates' scores with a latency, each counted in its bucket
    (lib/tradeoff.py bucket_of, in Python, as the score writes count it), for every tenant and for its call's."""
    timed = (
        Score.objects.filter(
            flag__bank_id__in=bank_ids,
            source=Score.CANDIDATE,
            latency_s__isnull=False,
            audio_s__isnull=False,
        )
        .annotate(**_day_and_group(zone))
        .order_by()
        .values_list("bank", "on", "tenant", "assistant", "transcriber_id", "latency_s", "audio_s")
    )
    totals = defaultdict(lambda: [0, 0, 0])
    for bank_id, day, tenant_id, assistant_id, tid, latency_s, audio_s in timed.iterator(
        chunk_size=LATENCY_CHUNK
    ):
        score = ItemScore(None, Score.CANDIDATE, tid, False, False, None, None, latency_s, audio_s, "", False)
        key = latency_key(score)
        if key is None:
            continue
        bucket, latency_us, audio_us = key
        for group in (EVERY_TENANT, (tenant_id, assistant_id)):
            total = totals[(bank_id, day, *group, tid, bucket)]
            total[0] += 1
            total[1] += latency_us
            total[2] += audio_us
    columns = ("bank_id", "day", "tenant_id", "assistant_id", "transcriber_id", "bucket")
    return [
        {**dict(zip(columns, key, strict=True)), "lines": n, "latency_us": lat, "audio_us": aud}
        for key, (n, lat, aud) in totals.items()
    ]


def _entity_rows(bank_ids, zone) -> list[dict]:
    """EntityTotal rows of these banks: their candidates' scored items with entities, each counted per category
    (maintain.entity_counts, in Python, as the score writes count them), for every tenant and for its call's."""
    marked = (
        Score.objects.filter(flag__bank_id__in=bank_ids, source=Score.CANDIDATE, failed=False)
        .exclude(entities="")
        .annotate(**_day_and_group(zone))
        .order_by()
        .values_list("bank", "on", "tenant", "assistant", "transcriber_id", "entities")
    )
    totals = defaultdict(lambda: [0, 0, 0])
    for bank_id, day, tenant_id, assistant_id, tid, stored in marked.iterator(chunk_size=LATENCY_CHUNK):
        score = ItemScore(None, Score.CANDIDATE, tid, False, False, None, None, None, None, stored, False)
        for category, (right, n) in entity_counts(score).items():
            for group in (EVERY_TENANT, (tenant_id, assistant_id)):
                total = totals[(bank_id, day, *group, tid, category)]
                total[0] += 1
                total[1] += right
                total[2] += n
    columns = ("bank_id", "day", "tenant_id", "assistant_id", "transcriber_id", "category")
    return [
        {**dict(zip(columns, key, strict=True)), "lines": lines, "right": right, "n": n}
        for key, (lines, right, n) in totals.items()
    ]


COMPUTE = {
    "score": _score_rows,
    "pair": _pair_rows,
    "flag": _flag_rows,
    "tag": _tag_rows,
    "group": _group_rows,
    "group_pair": _group_pair_rows,
    "latency": _latency_rows,
    "entity": _entity_rows,
    **detail.COMPUTE,  # confusion pairs and calls
}


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
    marks: int  # items whose disagree mark, or flags whose check_expected mark, was wrong
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
    marks = sum(_marks(bank_id, fix=fix) + detail.recheck(bank_id, fix=fix) for bank_id in bank_ids)
    rows, examples = {}, []
    zones = defaultdict(list)  # the banks by their organization's timezone: their days are counted there
    for bank_id, name in Bank.objects.filter(pk__in=bank_ids).values_list("pk", "organization__timezone"):
        zones[name].append(bank_id)
    for table, compute in COMPUTE.items():
        model, key_columns, summed = TABLES[table]
        fresh = [row for name, ids in zones.items() for row in compute(ids, ZoneInfo(name))]
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
