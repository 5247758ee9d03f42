"""The per-day totals of confusion pairs and of calls (models.detail) and each flag's and control line's
check_expected mark (it writes Flag.check_expected and ControlLine.check_expected), kept with the other totals
(maintain.py calls these in the transaction of every change to a bank's scores, and adds what they return to its
one upsert per table) and recomputed from the scores by rebuild.py.

A call here is a call's flags that joined the bank on one day, with their control lines (the cluster the
call-level bootstrap resamples). What one call adds to the totals depends on all its items together (the calls
count under the call's numbers of items scored and matched), so around a change to any of its items the call's
candidate scores are read before and after (`call_rows`) and the difference of what it adds (`call_parts`) is
what changes; the confusion pairs are summed over the same rows, so the call's unchanged items cancel out."""

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import connection
from django.db.models import Count, F
from django.db.models.functions import TruncDate

from oncore.calls.models import Line

from ..lib import alignment, scoring
from ..models import CallPairTotal, CallTotal, Candidate, ConfusionTotal, ControlLine, Flag, Score

# The tables, as maintain.TABLES holds them: (model, the columns that key a row besides (bank, day), summed).
TABLES = {
    "confusion": (ConfusionTotal, ("transcriber_id", "kind", "expected_word", "heard_word"), ("n",)),
    "call": (CallTotal, ("transcriber_id", "scored", "matches"), ("calls",)),
    "call_pair": (CallPairTotal, ("low_id", "high_id", "both", "low_only", "high_only"), ("calls",)),
}

ROW_FIELDS = (
    "flag_id",
    "control_id",
    "source",
    "transcriber_id",
    "failed",
    "match",
    "confusions",
    "text_key",
    "wer_units",
)


@dataclass(frozen=True, slots=True)
class Row:
    flag_id: int
    control_id: int | None
    source: str
    transcriber_id: int
    failed: bool
    match: bool
    confusions: str
    text_key: int | None
    wer_units: int | None


@dataclass(frozen=True)
class Call:
    """The call a changing item belongs to (in a bank, on a day) and its scores' rows before the change."""

    bank_id: int
    day: object
    call_id: int
    zone: ZoneInfo
    rows: list


def _day_bounds(day, zone):
    start = datetime.combine(day, time.min, tzinfo=zone)
    return start, datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone)


def call_rows(bank_id: int, day, call_id: int, zone) -> list[Row]:
    """The scores (live and candidates) of every item of the call's flags that joined the bank on the day."""
    start, end = _day_bounds(day, zone)
    qs = Score.objects.filter(
        flag__bank_id=bank_id,
        flag__line__call_id=call_id,
        flag__joined_at__gte=start,
        flag__joined_at__lt=end,
    )
    return [Row(*v) for v in qs.values_list(*ROW_FIELDS)]


def call_of(bank_id: int, day, call_id: int, zone) -> Call:
    """A flag's call in its bank on its day, with its rows as they are now (before a change)."""
    return Call(bank_id, day, call_id, zone, call_rows(bank_id, day, call_id, zone))


def call_parts(rows) -> dict:
    """What one call adds to the tables, from its scores' rows: {(table, key...): counts}. One call under its
    numbers for each candidate that scored an item of it, and for each pair of candidates that both scored one;
    each candidate's confusion pairs on its scored items."""
    out: dict = defaultdict(lambda: [0])
    per_item = defaultdict(list)
    tally = defaultdict(lambda: [0, 0])
    for r in rows:
        if r.source != Score.CANDIDATE or r.failed:
            continue
        per_item[(r.flag_id, r.control_id)].append(r)
        tally[r.transcriber_id][0] += 1
        tally[r.transcriber_id][1] += r.match
        for kind, expected_word, heard_word in alignment.decode_confusions(r.confusions):
            out[("confusion", r.transcriber_id, alignment.KIND_CODES[kind], expected_word, heard_word)][
                0
            ] += 1
    for tid, (scored, matches) in tally.items():
        out[("call", tid, scored, matches)][0] += 1
    pairs = defaultdict(lambda: [0, 0, 0])
    for item in per_item.values():
        item = sorted(item, key=lambda r: r.transcriber_id)
        for i, a in enumerate(item):
            for b in item[i + 1 :]:
                row = pairs[(a.transcriber_id, b.transcriber_id)]
                row[0] += 1
                row[1] += a.match and not b.match
                row[2] += b.match and not a.match
    for (low, high), (both, low_only, high_only) in pairs.items():
        out[("call_pair", low, high, both, low_only, high_only)][0] += 1
    return dict(out)


def difference(before_rows, after_rows) -> dict:
    """What a change to a call's scores does to the tables: what it adds after, less what it added before."""
    out = {key: list(counts) for key, counts in call_parts(after_rows).items()}
    for key, counts in call_parts(before_rows).items():
        row = out.setdefault(key, [0] * len(counts))
        for i, n in enumerate(counts):
            row[i] -= n
    return out


# ---------------------------------------------------------------- the check of the expected texts


def contradicted(scored) -> bool:
    """Every candidate that scored the line (at least one) contradicts its expected text badly: a WER of 1 or
    more each (as many errors as expected words, or more: an expected text that is a repetition loop is one)."""
    return bool(scored) and all(r.wer_units is not None and r.wer_units >= scoring.WER_SCALE for r in scored)


def doubts(rows, candidate_ids) -> bool:
    """Whether a line's expected text (a flag's typed text, or a control's live transcript) is worth checking,
    from the line's scores (live and candidates): two of the bank's candidates agree with each other after
    normalization but not with it, or the live transcript and every candidate that scored the line (at least
    one) agree against it, or every candidate that scored it contradicts it badly (contradicted)."""
    scored = [
        r for r in rows if r.source == Score.CANDIDATE and not r.failed and r.transcriber_id in candidate_ids
    ]
    wrong = Counter(r.text_key for r in scored if not r.match)
    if any(n >= 2 for n in wrong.values()) or contradicted(scored):
        return True
    live = next((r for r in rows if r.source == Score.LIVE and not r.failed), None)
    return bool(
        live is not None
        and not live.match
        and scored
        and all(not r.match and r.text_key == live.text_key for r in scored)
    )


def candidate_ids(bank_id: int) -> set[int]:
    return set(Candidate.objects.filter(bank_id=bank_id).values_list("transcriber_id", flat=True))


def mark(flag_id: int, rows, bank_candidates, control_id=None) -> None:
    """Store the check_expected mark of the flag's own line (or of one of its controls, `control_id`) as that
    line's scores (`rows`, any of its call) say."""
    should = doubts([r for r in rows if r.flag_id == flag_id and r.control_id == control_id], bank_candidates)
    if control_id is None:
        Flag.objects.filter(pk=flag_id).exclude(check_expected=should).update(check_expected=should)
    else:
        ControlLine.objects.filter(pk=control_id).exclude(check_expected=should).update(check_expected=should)


def mark_all(flag_id: int, rows, bank_candidates) -> None:
    """The marks of a flag entering its bank, own line and controls, every one of them clear until now (a new
    flag or control, or cleared by `leaving`): those its scores call for are set."""
    items = {r.control_id for r in rows if r.flag_id == flag_id}
    doubted = [
        c
        for c in items
        if doubts([r for r in rows if r.flag_id == flag_id and r.control_id == c], bank_candidates)
    ]
    if None in doubted:
        Flag.objects.filter(pk=flag_id).update(check_expected=True)
    if any(c is not None for c in doubted):
        ControlLine.objects.filter(pk__in=[c for c in doubted if c is not None]).update(check_expected=True)


# ---------------------------------------------------------------- around changes (maintain.py)


def after_item(call: Call, flag_id: int, control_id, bank_candidates) -> dict:
    """After a change to one item of the call: its mark where the item is the flag's own line, and the
    difference to add to the tables."""
    rows = call_rows(call.bank_id, call.day, call.call_id, call.zone)
    mark(flag_id, rows, bank_candidates, control_id)
    return difference(call.rows, rows)


def leaving(call: Call, flag_id: int) -> dict:
    """Before a flag leaves its bank (or is deleted, or retagged): the difference its call's totals take without
    it; its mark is cleared (flag_entered sets it again)."""
    Flag.objects.filter(pk=flag_id, check_expected=True).update(check_expected=False)
    ControlLine.objects.filter(flag_id=flag_id, check_expected=True).update(check_expected=False)
    return difference(call.rows, [r for r in call.rows if r.flag_id != flag_id])


def entered(call: Call, flag_id: int, bank_candidates) -> dict:
    """Once a flag is in its bank with its scores: its mark, and the difference its call's totals take with it."""
    mark_all(flag_id, call.rows, bank_candidates)
    return difference([r for r in call.rows if r.flag_id != flag_id], call.rows)


# ---------------------------------------------------------------- recomputed from the scores (rebuild.py)


def recheck(bank_id: int, *, fix: bool) -> int:
    """Flags and controls of the bank whose check_expected mark differs from what their scores say (set right
    with `fix`): one pass over the scored texts of its items, in order of item."""
    ids = candidate_ids(bank_id)
    flags = Flag.objects.filter(bank_id=bank_id, check_expected=True).values_list("pk", flat=True)
    marked = {(pk, None) for pk in flags}
    marked |= set(
        ControlLine.objects.filter(flag__bank_id=bank_id, check_expected=True).values_list("flag_id", "pk")
    )
    should = set()
    rows = (
        Score.objects.filter(flag__bank_id=bank_id, failed=False)
        .order_by("flag_id", "control_id")
        .values_list(*ROW_FIELDS)
        .iterator(chunk_size=5000)
    )
    current, item = None, []
    for v in rows:
        row = Row(*v)
        key = (row.flag_id, row.control_id)
        if key != current:
            if item and doubts(item, ids):
                should.add(current)
            current, item = key, []
        item.append(row)
    if item and doubts(item, ids):
        should.add(current)
    if fix:
        for keys, value in ((marked - should, False), (should - marked, True)):
            Flag.objects.filter(pk__in=[f for f, c in keys if c is None]).update(check_expected=value)
            ControlLine.objects.filter(pk__in=[c for _, c in keys if c is not None]).update(
                check_expected=value
            )
    return len(marked ^ should)


def _on_day(column: str, zone):
    sql, params = connection.ops.datetime_cast_date_sql(column, (), str(zone))
    return sql, list(params)


CALLS_SQL = """
SELECT bank_id, day, transcriber_id, scored, matches, COUNT(*) FROM (
  SELECT f.bank_id AS bank_id, {day} AS day, l.call_id AS call_id, s.transcriber_id AS transcriber_id,
    SUM(CASE WHEN s."match" THEN 1 ELSE 0 END) AS matches, COUNT(*) AS scored
  FROM transcriber_tests_score s
  JOIN transcriber_tests_flag f ON f.id = s.flag_id
  JOIN {lines} l ON l.id = f.line_id
  WHERE s.source = 'candidate' AND NOT s.failed AND f.bank_id IN ({banks})
  GROUP BY 1, 2, 3, 4
) per_call
GROUP BY 1, 2, 3, 4, 5
"""

CALL_PAIRS_SQL = """
SELECT bank_id, day, low_id, high_id, both_scored, low_only, high_only, COUNT(*) FROM (
  SELECT f.bank_id AS bank_id, {day} AS day, ln.call_id AS call_id, a.transcriber_id AS low_id,
    b.transcriber_id AS high_id, COUNT(*) AS both_scored,
    SUM(CASE WHEN a."match" AND NOT b."match" THEN 1 ELSE 0 END) AS low_only,
    SUM(CASE WHEN b."match" AND NOT a."match" THEN 1 ELSE 0 END) AS high_only
  FROM transcriber_tests_score a
  JOIN transcriber_tests_score b ON b.flag_id = a.flag_id AND b.source = 'candidate' AND NOT b.failed
    AND b.transcriber_id > a.transcriber_id
    AND (b.control_id = a.control_id OR (b.control_id IS NULL AND a.control_id IS NULL))
  JOIN transcriber_tests_flag f ON f.id = a.flag_id
  JOIN {lines} ln ON ln.id = f.line_id
  WHERE a.source = 'candidate' AND NOT a.failed AND f.bank_id IN ({banks})
  GROUP BY 1, 2, 3, 4, 5
) per_call
GROUP BY 1, 2, 3, 4, 5, 6, 7
"""


def _fetch(template: str, bank_ids, zone) -> list:
    day, params = _on_day("f.joined_at", zone)
    sql = template.format(
        day=day, lines=connection.ops.quote_name(Line._meta.db_table), banks=", ".join(["%s"] * len(bank_ids))
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *bank_ids])
        return cursor.fetchall()


def _call_rows(bank_ids, zone) -> list[dict]:
    """CallTotal rows of these banks (of organizations in the timezone `zone`), grouped in the database: per
    call and day, then per numbers."""
    to_day = CallTotal._meta.get_field("day").to_python
    return [
        {
            "bank_id": bank_id,
            "day": to_day(day),
            "transcriber_id": tid,
            "scored": int(scored),
            "matches": int(matches),
            "calls": int(calls),
        }
        for bank_id, day, tid, scored, matches, calls in _fetch(CALLS_SQL, bank_ids, zone)
    ]


def _call_pair_rows(bank_ids, zone) -> list[dict]:
    """CallPairTotal rows of these banks, from one self-join of their scores grouped per call, then per numbers."""
    to_day = CallPairTotal._meta.get_field("day").to_python
    columns = ("bank_id", "day", "low_id", "high_id", "both", "low_only", "high_only", "calls")
    out = []
    for row in _fetch(CALL_PAIRS_SQL, bank_ids, zone):
        values = dict(zip(columns, row, strict=True))
        values.update({k: int(values[k]) for k in columns[4:]}, day=to_day(values["day"]))
        out.append(values)
    return out


def _confusion_rows(bank_ids, zone) -> list[dict]:
    """ConfusionTotal rows of these banks, from the pairs their candidates' scores store: only the scores with
    any are read, grouped in the database by day, transcriber and stored pairs, then split into pairs."""
    found = (
        Score.objects.filter(flag__bank_id__in=bank_ids, source=Score.CANDIDATE, failed=False)
        .exclude(confusions="")
        .annotate(bank=F("flag__bank_id"), on=TruncDate("flag__joined_at", tzinfo=zone))
        .order_by()
        .values_list("bank", "on", "transcriber_id", "confusions")
        .annotate(n=Count("id"))
    )
    totals = Counter()
    for bank_id, day, tid, stored, n in found:
        for kind, expected_word, heard_word in alignment.decode_confusions(stored):
            totals[(bank_id, day, tid, alignment.KIND_CODES[kind], expected_word, heard_word)] += n
    columns = ("bank_id", "day", "transcriber_id", "kind", "expected_word", "heard_word")
    return [{**dict(zip(columns, key, strict=True)), "n": n} for key, n in totals.items()]


COMPUTE = {"confusion": _confusion_rows, "call": _call_rows, "call_pair": _call_pair_rows}
