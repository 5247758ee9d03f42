"""Reading the per-day totals (the aggregates package keeps them in the transaction of every score write): a
bank's summaries per transcriber, the pair counts of the lead test, the control mix, item counts and per-tag
summaries, each a few rows per candidate and day whatever the bank's size."""

from collections import defaultdict
from datetime import date
from decimal import Decimal

from django.db.models import F, IntegerField, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from ..lib import scoring
from ..models import FlagTotal, PairTotal, Score, ScoreTotal, TagTotal
from ..models.totals import MICROS


def _day(moment) -> date:
    """The day a window's bound starts: its bounds are midnights in the organization's timezone (queries.window),
    the days the totals count in."""
    return moment.date()


def _days(qs, since, until):
    """Rows of the days from `since` (a midnight in the organization's timezone) up to `until` (exclusive; None:
    no end)."""
    qs = qs.filter(day__gte=_day(since))
    return qs.filter(day__lt=_day(until)) if until else qs


def summaries(bank_id: int, since, until=None, totals=None) -> tuple[dict, dict]:
    """({(source, transcriber id): scoring.CandidateSummary} of the bank's items of those days, {candidate's
    transcriber id: its audio cost so far on the bank's items, any day}), in one query. `totals`: other rows of
    the same columns to read instead of the bank's ScoreTotal (a tenant's or assistant's GroupTotal rows)."""
    days = Q(day__gte=_day(since)) & (Q(day__lt=_day(until)) if until else Q())
    rows = (
        (ScoreTotal.objects.filter(bank_id=bank_id) if totals is None else totals)
        .values("source", "transcriber_id")
        .annotate(
            s=Sum("scored", filter=days),
            m=Sum("matches", filter=days),
            f=Sum("failed", filter=days),
            u=Sum("wer_units", filter=days),
            c=Sum("cost_micros"),
            cs=Sum("control_scored", filter=days),
            cm=Sum("control_matches", filter=days),
        )
    )
    found, costs = {}, {}
    for r in rows:
        tid = r["transcriber_id"]
        if r["s"] or r["f"]:
            found[(r["source"], tid)] = scoring.summary_row(
                tid, *(int(r[k] or 0) for k in ("s", "m", "f", "u", "cs", "cm"))
            )
        if r["source"] == Score.CANDIDATE:
            costs[tid] = Decimal(int(r["c"] or 0)) / MICROS
    return found, costs


def pair_counts(bank_id: int, since, until, a: int, b: int) -> tuple[int, int, int]:
    """(items both scored, items only `a` matched, items only `b` matched) over those days."""
    low, high = sorted((a, b))
    found = _days(
        PairTotal.objects.filter(bank_id=bank_id, low_id=low, high_id=high), since, until
    ).aggregate(both=Sum("both"), lo=Sum("low_only"), hi=Sum("high_only"))
    both, lo, hi = (int(found[k] or 0) for k in ("both", "lo", "hi"))
    return (both, lo, hi) if a == low else (both, hi, lo)


def control_mix(bank_id: int, since, until=None) -> tuple[tuple[int, int], ...]:
    """((controls per flag, flags), ...) of the bank's flags of those days, most flags first."""
    rows = (
        _days(FlagTotal.objects.filter(bank_id=bank_id), since, until)
        .values("controls")
        .annotate(n=Sum("flags"))
        .values_list("controls", "n")
    )
    return tuple(sorted(((c, int(n)) for c, n in rows if n), key=lambda row: (-row[1], row[0])))


def item_count(bank_id: int, since, until=None, *, kind: str = "", disagree: bool = False) -> int:
    """Items (flags, controls or both) of the bank's flags of those days; with `disagree`, only those its
    candidates disagree on."""
    found = _days(FlagTotal.objects.filter(bank_id=bank_id), since, until).aggregate(
        n_flags=Sum("flags"),
        n_controls=Sum(F("flags") * F("controls"), output_field=IntegerField()),
        n_disagree_flags=Sum("disagree_flags"),
        n_disagree_controls=Sum("disagree_controls"),
    )
    prefix = "n_disagree_" if disagree else "n_"
    parts = {"flags": ["flags"], "controls": ["controls"]}.get(kind, ["flags", "controls"])
    return sum(int(found[prefix + part] or 0) for part in parts)


def tag_summaries(bank_id: int, since, until=None, source: str = Score.CANDIDATE) -> dict:
    """{tag: {transcriber id: scoring.CandidateSummary}} on the flagged lines (not control lines) of the bank's
    flags of those days, per tag they carry. With source="live", each tag's live rows: scored + failed is the
    number of the tag's flags."""
    rows = (
        _days(TagTotal.objects.filter(bank_id=bank_id, source=source), since, until)
        .values("tag", "transcriber_id")
        .annotate(s=Sum("scored"), m=Sum("matches"), f=Sum("failed"), u=Sum("wer_units"))
    )
    out = defaultdict(dict)
    for r in rows:
        if r["s"] or r["f"]:
            out[r["tag"]][r["transcriber_id"]] = scoring.summary_row(
                r["transcriber_id"], int(r["s"]), int(r["m"]), int(r["f"]), int(r["u"])
            )
    return dict(out)


def flags_in(bank_ref, since=None) -> Coalesce:
    """The number of flags of the bank `bank_ref` (an OuterRef), any day or the days from `since` (a midnight,
    UTC): an annotation for bank lists."""
    days = FlagTotal.objects.filter(bank_id=bank_ref)
    total = (
        (_days(days, since, None) if since is not None else days)
        .order_by()
        .values("bank_id")
        .annotate(n=Sum("flags"))
        .values("n")
    )
    return Coalesce(Subquery(total), 0)
