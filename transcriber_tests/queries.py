"""Read-side queries shared by the dashboard, the API and the CSV exports. Every page stays O(1) in queries:
aggregates are computed in the database, then ranked by the pure functions in scoring."""

from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal

from django.core.cache import cache
from django.db import connection
from django.db.models import Count, F, IntegerField, Max, Min, Q, Sum
from django.db.models.functions import Cast
from django.utils import timezone

from oncore.transcribers.models import Transcriber

from . import jobs, scoring
from .models import Bank, ControlLine, Flag, Score, Transcription
from .picks import picks_by_item

DEFAULT_WINDOW_DAYS = 30
MAX_WINDOW_DAYS = 90

LIVE_REASON = (
    "Reference only, not a fair rival: flags are mostly lines the live transcriber got wrong and control lines "
    "are its own text, so its score mostly reflects the mix of flags and controls."
)


def clamp_window(days) -> int:
    try:
        days = int(days)
    except (TypeError, ValueError):
        return DEFAULT_WINDOW_DAYS
    return min(max(days, 1), MAX_WINDOW_DAYS)


def window_start(window_days: int):
    return timezone.now() - timedelta(days=window_days)


def bank_scores(bank: Bank, window_days: int):
    return Score.objects.filter(flag__bank=bank, flag__created_at__gte=window_start(window_days))


def _summaries(scores) -> dict[tuple[str, int], scoring.CandidateSummary]:
    """Per (source, transcriber): scored, matches, failed and mean WER, in one aggregate query."""
    rows = scores.values("source", "transcriber_id").annotate(
        n_scored=Count("id", filter=Q(failed=False)),
        n_matches=Count("id", filter=Q(failed=False, match=True)),
        n_failed=Count("id", filter=Q(failed=True)),
        wer_sum=Sum("wer", filter=Q(failed=False)),
    )
    out = {}
    for r in rows:
        scored = r["n_scored"]
        out[(r["source"], r["transcriber_id"])] = scoring.CandidateSummary(
            candidate=r["transcriber_id"],
            scored=scored,
            matches=r["n_matches"],
            failed=r["n_failed"],
            accuracy=r["n_matches"] / scored if scored else None,
            mean_wer=r["wer_sum"] / scored if scored else None,
        )
    return out


def _empty(tid) -> scoring.CandidateSummary:
    return scoring.CandidateSummary(candidate=tid, scored=0, matches=0, failed=0, accuracy=None, mean_wer=None)


_PAIRS = """
SELECT l.match AS lm, r.match AS rm
FROM transcriber_tests_score l
JOIN transcriber_tests_score r ON {join}
  AND r.transcriber_id = %s AND r.source = 'candidate' AND NOT r.failed
JOIN transcriber_tests_flag f ON f.id = l.flag_id
WHERE {item} AND l.transcriber_id = %s AND l.source = 'candidate' AND NOT l.failed
  AND f.bank_id = %s AND f.created_at >= %s
"""
# Flags pair on flag_id, controls on control_id: plain equality joins an index answers, whatever the statistics.
LEAD_SQL = (
    "SELECT COUNT(*), COALESCE(SUM(CASE WHEN lm AND NOT rm THEN 1 ELSE 0 END), 0), "
    "COALESCE(SUM(CASE WHEN rm AND NOT lm THEN 1 ELSE 0 END), 0) FROM ("
    + _PAIRS.format(join="r.flag_id = l.flag_id AND r.control_id IS NULL", item="l.control_id IS NULL")
    + " UNION ALL "
    + _PAIRS.format(join="r.control_id = l.control_id", item="l.control_id IS NOT NULL")
    + ") pairs"
)


def lead_test(bank: Bank, since, leader_id: int, runner_up_id: int) -> scoring.LeadTest:
    """Exact McNemar on the items both scored: pairs the two candidates' scores item by item in one query."""
    with connection.cursor() as cursor:
        params = [runner_up_id, leader_id, bank.pk, since]
        cursor.execute(LEAD_SQL, params + params)
        both, b, c = (int(x) for x in cursor.fetchone())
    p = scoring.mcnemar_exact(b, c)
    return scoring.LeadTest(both_scored=both, leader_only_right=b, runner_up_only_right=c, p_value=p,
                            clear=p < 0.05 and b > c)


@dataclass(frozen=True)
class Card:
    transcriber: object
    position: int
    summary: scoring.CandidateSummary
    interval: tuple[float, float] | None
    cost: Decimal
    is_leader: bool

    @property
    def accuracy_pct(self):
        return None if self.summary.accuracy is None else round(100 * self.summary.accuracy, 1)

    @property
    def interval_pct(self):
        return None if self.interval is None else tuple(round(100 * x, 1) for x in self.interval)


@dataclass(frozen=True)
class BankResults:
    bank: Bank
    window_days: int
    cards: list
    live_rows: list
    leader: Card | None
    leader_clears_threshold: bool
    lead: scoring.LeadTest | None
    runner_up: Card | None
    pending: int
    live_reason: str = LIVE_REASON

    @property
    def threshold_pct(self):
        return round(100 * self.bank.threshold, 1)


def _on_bank_lines(bank: Bank) -> Q:
    """Transcriptions of a bank's lines: its flags' lines and their controls' lines."""
    flag_lines = Flag.objects.filter(bank=bank).values("line_id")
    control_lines = ControlLine.objects.filter(flag__bank=bank).values("line_id")
    return Q(line_id__in=flag_lines) | Q(line_id__in=control_lines)


def candidate_costs(bank: Bank, transcriber_ids) -> dict[int, Decimal]:
    """Audio cost so far of each candidate on the bank's lines (flags and controls, any date)."""
    rows = (
        Transcription.objects.filter(_on_bank_lines(bank), transcriber_id__in=transcriber_ids,
                                     status=Transcription.DONE)
        .values("transcriber_id")
        .annotate(total=Sum("cost"))
    )
    return {r["transcriber_id"]: r["total"] or Decimal(0) for r in rows}


def pending_for_bank(bank: Bank, transcriber_ids) -> int:
    return Transcription.objects.filter(
        _on_bank_lines(bank), organization_id=bank.organization_id, status__in=jobs.ACTIVE,
        transcriber_id__in=transcriber_ids,
    ).count()


RESULTS_CACHE_SECONDS = 60


def bank_results(bank: Bank, window_days: int = DEFAULT_WINDOW_DAYS) -> BankResults:
    """The results of a bank over a window. Cached per bank and window until the next write that changes the
    bank's results (actions.results_changed moves bank.results_changed_at) or for a minute at most, so the
    window's start moves on; the waiting count is always fresh."""
    window_days = clamp_window(window_days)
    key = f"bank-results:{bank.pk}:{window_days}:{bank.results_changed_at.isoformat()}"
    results = cache.get(key)
    if results is None:
        results = _compute_bank_results(bank, window_days)
        cache.set(key, results, RESULTS_CACHE_SECONDS)
    ids = [card.transcriber.pk for card in results.cards]
    return replace(results, bank=bank, pending=pending_for_bank(bank, ids))


def _compute_bank_results(bank: Bank, window_days: int) -> BankResults:
    candidates = list(bank.candidates.select_related("transcriber").order_by("position"))
    ids = [c.transcriber_id for c in candidates]
    since = window_start(window_days)
    summaries = _summaries(Score.objects.filter(flag__bank=bank, flag__created_at__gte=since))
    candidate = {t: summaries.get((Score.CANDIDATE, t), _empty(t)) for t in ids}
    ranked = scoring.rank([candidate[t] for t in ids], bank.threshold)
    costs = candidate_costs(bank, ids)
    cards = []
    for c in candidates:
        s = candidate[c.transcriber_id]
        cards.append(Card(c.transcriber, c.position, s, scoring.wilson_interval(s.matches, s.scored),
                          costs.get(c.transcriber_id, Decimal(0)), ranked.leader == c.transcriber_id))
    by_id = {card.transcriber.pk: card for card in cards}
    leader = by_id.get(ranked.leader)
    runner_up_id = ranked.runner_up
    lead = lead_test(bank, since, ranked.leader, runner_up_id) if leader and runner_up_id is not None else None

    live = {t: s for (source, t), s in summaries.items() if source == Score.LIVE}
    live_rows = [(t, live[t.pk], scoring.wilson_interval(live[t.pk].matches, live[t.pk].scored))
                 for t in Transcriber.objects.filter(pk__in=live)]
    return BankResults(
        bank=bank, window_days=window_days, cards=cards, live_rows=live_rows, leader=leader,
        leader_clears_threshold=ranked.leader_clears_threshold, lead=lead,
        runner_up=by_id.get(runner_up_id), pending=0,
    )


# ---------------------------------------------------------------- the turn-by-turn table


def _disagreeing(bank: Bank, since) -> Q:
    """Items where the bank's candidates disagree: among their scored texts, some matched and some did not.
    Grouped once per item kind, then used as IN subqueries (fast on large banks, unlike per-row EXISTS)."""
    ids = bank.candidates.values("transcriber_id")
    scored = Score.objects.filter(
        source=Score.CANDIDATE, failed=False, transcriber_id__in=ids, flag__bank=bank, flag__created_at__gte=since
    )
    as_int = Cast("match", IntegerField())

    def split(qs, key):
        return qs.values(key).annotate(lo=Min(as_int), hi=Max(as_int)).filter(lo__lt=F("hi")).values(key)

    return Q(control__isnull=True, flag_id__in=split(scored.filter(control__isnull=True), "flag_id")) | Q(
        control_id__in=split(scored.filter(control__isnull=False), "control_id")
    )


def turn_items(bank: Bank, window_days: int, *, kind: str = "", tag: str = "", disagree: bool = False):
    """Ids of the bank's items (flags and their controls), newest flag first, for pagination; `turn_rows` loads
    one page of them. Every item has exactly one live score, written when it entered a bank, so live scores
    double as the item list."""
    since = window_start(clamp_window(window_days))
    items = Score.objects.filter(source=Score.LIVE, flag__bank=bank, flag__created_at__gte=since)
    if kind == "flags":
        items = items.filter(control__isnull=True)
    elif kind == "controls":
        items = items.filter(control__isnull=False)
    if tag:
        items = items.filter(flag__tags__contains=f",{tag.strip().lower()},")
    if disagree:
        items = items.filter(_disagreeing(bank, since))
    return items.order_by("-flag__created_at", "-flag_id", F("control_id").asc(nulls_first=True)).values_list("id", flat=True)


@dataclass(frozen=True)
class TurnRow:
    item: Score  # the live score of the item
    cells: list  # (transcriber, Score or None) in candidate order
    pick: object = None  # the judge's pick among matching versions, if any

    @property
    def is_control(self) -> bool:
        return self.item.control_id is not None

    @property
    def line(self):
        return self.item.control.line if self.item.control_id else self.item.flag.line

    @property
    def expected(self) -> str:
        return self.item.control.expected_text if self.item.control_id else self.item.flag.expected_text


def turn_rows(bank: Bank, item_ids, candidates) -> list[TurnRow]:
    """Rows for one page of items (ids from turn_items), with each candidate's score and the judge's pick:
    three queries a page."""
    item_ids = list(item_ids)
    loaded = Score.objects.filter(pk__in=item_ids).select_related("flag__line__call__tenant", "control__line")
    by_id = {item.pk: item for item in loaded}
    items = [by_id[pk] for pk in item_ids]
    transcribers = [c.transcriber for c in candidates]
    scores = Score.objects.filter(
        source=Score.CANDIDATE, flag_id__in={i.flag_id for i in items}, transcriber__in=transcribers
    )
    by_key = {(s.flag_id, s.control_id, s.transcriber_id): s for s in scores}
    picks = picks_by_item(items)
    return [
        TurnRow(item, [(t, by_key.get((item.flag_id, item.control_id, t.pk))) for t in transcribers],
                picks.get((item.flag_id, item.control_id)))
        for item in items
    ]
