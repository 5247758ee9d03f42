"""A bank's results screen: the candidates' cards over a window (accuracy with its interval, the leader, the lead
test, why lines failed, the control mix, the work still waiting), each candidate's accuracy week by week, its
accuracy per error tag and, where the bank's lines span several languages, the leader's per-language WER. The
cards, trends and tags read the per-day totals (a few rows per candidate and day, whatever the bank's size) and
are cached until the bank's results change; the waiting count is always fresh."""

import math
from collections import Counter
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal

from django.db import connection
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce

from benchmark import selectors as benchmark
from benchmark.selectors import detect_languages, language_wer
from oncore.transcribers.models import Transcriber

from ..lib import scoring
from ..lib.charts import Chart, chart
from ..models import STANDARD_TAGS, Bank, Candidate, ControlLine, Flag, Score, ScoreTotal, Transcription
from . import entities, groups, jobs, totals
from .board import candidates_of
from .cached import cached
from .tradeoff import Tradeoff, bank_tradeoff
from .window import (
    DEFAULT_WINDOW_DAYS,
    EPOCH,
    clamp_window,
    period_bounds,
    today,
    window_days_covered,
    window_start,
)

LIVE_REASON = (
    "Reference only, not a fair rival: flags are mostly lines the live transcriber got wrong and control lines "
    "are its own text, so its score mostly reflects the mix of flags and controls."
)
# A candidate that runs the live transcriber's own provider and model is the same case as the live rows.
LIVE_MODEL_REASON = (
    "It runs the same model as the live transcriber of these calls: on control lines, whose expected text is the "
    "live transcript, it largely repeats it, so its accuracy mostly reflects the mix of flags and controls. Judge "
    "it by the flagged lines it fixed."
)


def _empty(tid) -> scoring.CandidateSummary:
    return scoring.summary_row(tid, 0, 0, 0, 0)


def lead_test(
    bank: Bank, since, leader_id: int, runner_up_id: int, until=None, group=None
) -> scoring.LeadTest:
    """Exact McNemar on the items both scored, from the bank's per-day pair totals (aggregates); with `group`
    (queries.groups.Group), on that tenant's or assistant's calls only."""
    if group is not None:
        return scoring.lead_test(
            *groups.group_pair_counts(bank.pk, since, until, leader_id, runner_up_id, group)
        )
    return scoring.lead_test(*totals.pair_counts(bank.pk, since, until, leader_id, runner_up_id))


@dataclass(frozen=True)
class Card:
    transcriber: object
    position: int
    summary: scoring.CandidateSummary
    interval: tuple[float, float] | None
    cost: Decimal
    is_leader: bool
    clears_threshold: bool = False  # its accuracy is at or above the bank's threshold, compared exactly
    failures: tuple = ()  # (reason, lines) of its failed lines in the period, most lines first
    live_model: bool = False  # it runs the provider and model of a live transcriber of these calls

    @property
    def all_failed(self) -> bool:
        """Every line it was given failed: it has no accuracy, and cannot be the runner-up."""
        return not self.summary.scored and self.summary.failed > 0


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
    trust_rule: str = scoring.TRUST_RULE
    control_mix: tuple = ()  # (controls per flag, flags), most flags first, over the window's flags
    date_from: date | None = None  # a fixed period instead of the window (either may be open)
    date_to: date | None = None
    first_day: date | None = None  # the days counted, first and last (None: from the first flag)
    last_day: date | None = None
    timezone: str = "UTC"  # the organization's, whose days these are
    # The tenant or assistant the cards are recomputed on (None: every call).
    group: groups.Group | None = None
    live_model_reason: str = LIVE_MODEL_REASON

    @property
    def lead_from(self) -> str:
        """Which part alone carries the leader's lead over the runner-up (scoring.lead_from), "" if none."""
        if self.leader is None or self.runner_up is None:
            return ""
        return scoring.lead_from(self.leader.summary, self.runner_up.summary)

    @property
    def provisional(self) -> bool:
        """The leader's accuracy rests on too few lines to trust (scoring.too_few_to_trust)."""
        return self.leader is not None and scoring.too_few_to_trust(
            self.leader.summary.matches, self.leader.summary.scored
        )

    @property
    def all_failed(self) -> list:
        """The cards of candidates whose every line failed."""
        return [card for card in self.cards if card.all_failed]

    @property
    def window_flags(self) -> int:
        """The flags of the window (of every call, whatever the filter), scored or not."""
        return sum(n for _, n in self.control_mix)

    @property
    def mixed_controls(self) -> str:
        """ "312 flags with 1 control, 40 with 0" when the window's flags carry different numbers of controls
        (the bank's setting changed, or a call had too few lines); "" when they all carry the same."""
        if len(self.control_mix) < 2:
            return ""
        (controls, flags), *rest = self.control_mix
        first = (
            f"{flags} flag{'s' if flags != 1 else ''} with {controls} control{'s' if controls != 1 else ''}"
        )
        return ", ".join([first] + [f"{n} with {c}" for c, n in rest])


PENDING_SQL = """
SELECT COUNT(*) FROM {transcription} t
WHERE t.organization_id = %s AND t.status IN ({statuses}) AND t.transcriber_id IN ({transcribers})
  AND (EXISTS (SELECT 1 FROM {flag} f WHERE f.bank_id = %s AND f.line_id = t.line_id)
    OR EXISTS (SELECT 1 FROM {control} c JOIN {flag} f ON f.id = c.flag_id
               WHERE f.bank_id = %s AND c.line_id = t.line_id))
"""


def pending_for_bank(bank: Bank, transcriber_ids=None) -> int:
    """The organization's waiting transcriptions of these candidates (None: the bank's candidates, read in the same
    query) on the bank's lines: each waiting row is looked up in the bank (the waiting rows are few, bounded by
    ONCORE_ORG_QUEUE_LIMIT; the bank's lines many). Written as SQL: every results read asks it, and building it
    through the ORM cost five times running it."""
    if transcriber_ids is None:
        transcribers, ids = (
            f"SELECT transcriber_id FROM {Candidate._meta.db_table} WHERE bank_id = %s",
            [bank.pk],
        )
    else:
        ids = list(transcriber_ids)
        if not ids:
            return 0
        transcribers = ", ".join(["%s"] * len(ids))
    sql = PENDING_SQL.format(
        transcription=Transcription._meta.db_table,
        flag=Flag._meta.db_table,
        control=ControlLine._meta.db_table,
        statuses=", ".join(["%s"] * len(Transcription.ACTIVE)),
        transcribers=transcribers,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [bank.organization_id, *Transcription.ACTIVE, *ids, bank.pk, bank.pk])
        return cursor.fetchone()[0]


RESULTS_CACHE_SECONDS = 60


@dataclass(frozen=True)
class ResultsFrame:
    """What the results page shows around its figures (those come from a snapshot): the window and filter, the
    days they count, and the work still waiting for the bank, always fresh."""

    window_days: int
    group: object | None  # queries.groups.Group
    first_day: date
    last_day: date
    timezone: str
    pending: int


def results_frame(bank: Bank, window_days: int, group=None) -> ResultsFrame:
    """One query: the waiting transcriptions of the bank's candidates."""
    window_days = clamp_window(window_days)
    first, last = window_days_covered(window_days, bank.organization.zone)
    return ResultsFrame(window_days, group, first, last, bank.organization.timezone, pending_for_bank(bank))


def bank_results(
    bank: Bank, window_days: int = DEFAULT_WINDOW_DAYS, *, date_from=None, date_to=None, group=None
) -> BankResults:
    """The results of a bank over a window, or over the days from `date_from` to `date_to` (period_bounds),
    on every call's items or on those of one tenant or assistant (`group`, queries.groups.Group).
    Cached per bank, period and group until the next write that changes the bank's results
    (scores.results_changed moves bank.results_changed_at) or for a minute at most, so the window's start
    moves on; the waiting count is always fresh."""
    window_days = clamp_window(window_days)
    changed = bank.results_changed_at.isoformat()
    group_key = group.key if group else ""
    results = cached(
        "bank-results",
        (bank.pk, window_days, date_from, date_to, group_key, changed),
        RESULTS_CACHE_SECONDS,
        lambda: _compute_bank_results(bank, window_days, date_from, date_to, group),
    )
    ids = [card.transcriber.pk for card in results.cards]
    return replace(results, bank=bank, pending=pending_for_bank(bank, ids))


def _compute_bank_results(
    bank: Bank, window_days: int, date_from=None, date_to=None, group=None
) -> BankResults:
    candidates = list(candidates_of(bank))
    ids = [c.transcriber_id for c in candidates]
    zone = bank.organization.zone
    since, until = period_bounds(window_days, date_from, date_to, zone)
    if group is not None:
        summaries, costs = groups.group_summaries(bank.pk, since, until, group)
    else:
        summaries, costs = totals.summaries(bank.pk, since, until)
    candidate = {t: summaries.get((Score.CANDIDATE, t), _empty(t)) for t in ids}
    failing = [t for t in ids if candidate[t].failed]
    reasons = failure_reasons(bank, failing, since, until, group) if failing else {}
    ranked = scoring.rank([candidate[t] for t in ids], bank.threshold)
    live = {t: s for (source, t), s in summaries.items() if source == Score.LIVE}
    live_transcribers = list(Transcriber.objects.filter(pk__in=live))
    live_models = {(t.provider, t.model) for t in live_transcribers}
    cards = []
    for c in candidates:
        s = candidate[c.transcriber_id]
        cards.append(
            Card(
                c.transcriber,
                c.position,
                s,
                scoring.wilson_interval(s.matches, s.scored),
                costs.get(c.transcriber_id, Decimal(0)),
                ranked.leader == c.transcriber_id,
                scoring.clears(s.matches, s.scored, bank.threshold),
                reasons.get(c.transcriber_id, ()),
                (c.transcriber.provider, c.transcriber.model) in live_models,
            )
        )
    by_id = {card.transcriber.pk: card for card in cards}
    leader = by_id.get(ranked.leader)
    runner_up_id = ranked.runner_up
    lead = (
        lead_test(bank, since, ranked.leader, runner_up_id, until, group)
        if leader and runner_up_id is not None
        else None
    )

    live_rows = [
        (t, live[t.pk], scoring.wilson_interval(live[t.pk].matches, live[t.pk].scored))
        for t in live_transcribers
    ]
    return BankResults(
        bank=bank,
        window_days=window_days,
        cards=cards,
        live_rows=live_rows,
        leader=leader,
        leader_clears_threshold=ranked.leader_clears_threshold,
        lead=lead,
        runner_up=by_id.get(runner_up_id),
        pending=0,
        control_mix=totals.control_mix(bank.pk, since, until),
        date_from=date_from,
        date_to=date_to,
        first_day=None if since == EPOCH else since.date(),
        last_day=(until - timedelta(days=1)).date() if until else today(zone),
        timezone=bank.organization.timezone,
        group=group,
    )


NO_WORDS = "its text had no words"


NOTHING_CAME_BACK = "no text came back"


def failure_reasons(bank: Bank, transcriber_ids, since, until=None, group=None) -> dict[int, tuple]:
    """Why the candidates' failed lines in the period (of the group's calls, with `group`) failed: {transcriber
    id: ((reason, lines), ...)}, most lines first. The reason is the engine's error on the line's transcription
    ("DEEPGRAM_API_KEY is not set on this server: ..."), or that its text had no words. One query, grouped in the
    database."""
    failed = Score.objects.filter(
        flag__bank=bank,
        flag__joined_at__gte=since,
        source=Score.CANDIDATE,
        failed=True,
        transcriber_id__in=transcriber_ids,
    )
    if until is not None:
        failed = failed.filter(flag__joined_at__lt=until)
    if group is not None:
        failed = failed.filter(**group.call_filter("flag__line__call__"))
    error = Transcription.objects.filter(
        line_id=OuterRef("item_line"),
        transcriber_id=OuterRef("transcriber_id"),
    ).values("error")[:1]
    rows = (
        failed.annotate(item_line=Coalesce("control__line_id", "flag__line_id"))
        .annotate(error=Subquery(error))
        .values("transcriber_id", "failure", "error")
        .annotate(n=Count("id"))
    )
    found: dict[int, Counter] = {}
    for row in rows:
        if row["failure"] == Score.NO_TEXT:
            reason = NO_WORDS
        else:
            reason = (row["error"] or "").strip() or NOTHING_CAME_BACK
        found.setdefault(row["transcriber_id"], Counter())[reason] += row["n"]
    return {t: tuple(reasons.most_common()) for t, reasons in found.items()}


LANGUAGE_SAMPLE = 200  # newest flagged lines of the window the languages are detected on


LANGUAGE_CACHE_SECONDS = 600


def bank_languages(bank: Bank, window_days: int) -> list[str]:
    """The languages the bank's flagged lines in the window span, detected from their expected texts (the
    newest LANGUAGE_SAMPLE) with the code-switching report's tagger (benchmark.codeswitch.langtag); the bank's
    language label plays no part, it is a display name only. Cached per bank and window until a flag enters or
    leaves the window or the newest one changes (not on every score, as the results are: detecting takes tens of
    milliseconds), or for LANGUAGE_CACHE_SECONDS."""
    window_days = clamp_window(window_days)
    since = window_start(window_days, bank.organization.zone)
    flags = Flag.objects.filter(bank=bank, joined_at__gte=since).order_by("-joined_at", "-id")
    newest_id, newest_at = flags.values_list("pk", "updated_at").first() or (0, None)
    count = totals.item_count(bank.pk, since, kind="flags")
    stamp = newest_at.timestamp() if newest_at else 0
    return cached(
        "bank-language-set",
        (bank.pk, window_days, count, newest_id, stamp),
        LANGUAGE_CACHE_SECONDS,
        lambda: detect_languages(flags.values_list("expected_text", flat=True)[:LANGUAGE_SAMPLE]),
    )


def bank_language_wer(bank: Bank, window_days: int, transcriber_id: int | None = None) -> dict | None:
    """Per-language WER on the bank's flagged lines in the window: {lang: (wer, words)}, pooled over lines.
    None when those lines span fewer than two languages (bank_languages), whatever the bank's label says.

    Whose hypotheses: one transcriber's, the bank's leader (best candidate, as on the results page) unless
    `transcriber_id` names another; a single figure per language beside the cards, comparable with the
    leader's card. Lines it failed on are left out, as on its card; no leader (nothing scored) gives {}.
    Control lines are left out: their expected text is the live transcript, not typed. Words are tagged over
    the languages found (benchmark.codeswitch.report.language_wer). Cached per bank, window and transcriber
    until the bank's results change (or for LANGUAGE_CACHE_SECONDS): tagging a large bank takes seconds."""
    window_days = clamp_window(window_days)
    if transcriber_id is None:
        leader = bank_results(bank, window_days).leader
        transcriber_id = leader.transcriber.pk if leader else None
    found = cached(
        "bank-languages",
        (bank.pk, window_days, transcriber_id, bank.results_changed_at.isoformat()),
        LANGUAGE_CACHE_SECONDS,
        lambda: {"figures": _language_wer(bank, window_days, transcriber_id)},
    )
    return found["figures"]


def _language_wer(bank: Bank, window_days: int, transcriber_id: int | None) -> dict | None:
    languages = bank_languages(bank, window_days)
    if len(languages) < 2:
        return None
    if transcriber_id is None:
        return {}
    scores = Score.objects.filter(
        flag__bank=bank,
        flag__joined_at__gte=window_start(window_days, bank.organization.zone),
        control__isnull=True,
        source=Score.CANDIDATE,
        transcriber_id=transcriber_id,
        failed=False,
    ).values_list("flag__expected_text", "hypothesis")
    return language_wer(languages, scores)


# ---------------------------------------------------------------- accuracy week by week and per error tag


def _cached(kind: str, bank: Bank, window_days: int, compute):
    """Kept as the results cards are."""
    parts = (bank.pk, window_days, bank.results_changed_at.isoformat())
    return cached(f"bank-{kind}", parts, RESULTS_CACHE_SECONDS, compute)


@dataclass(frozen=True)
class Trend:
    transcriber: object
    weeks: list  # scoring.WeekPoint, oldest first
    chart: Chart

    @property
    def scored(self) -> int:
        return sum(w.scored for w in self.weeks)


def bank_trends(bank: Bank, window_days: int, candidates) -> list[Trend]:
    """Each candidate's (transcribers, in the bank's order) accuracy per week over the window, in weeks of
    seven days ending today (in the organization's days, as the totals count them), from the per-day totals: one
    query."""
    window_days = clamp_window(window_days)

    def compute():
        last = today(bank.organization.zone)
        first = last - timedelta(days=window_days - 1)  # the window's first day (queries.window_start)
        days: dict[int, list] = {}
        for tid, day, n, m in ScoreTotal.objects.filter(
            bank=bank, source=Score.CANDIDATE, transcriber__in=candidates, day__gte=first
        ).values_list("transcriber_id", "day", "scored", "matches"):
            days.setdefault(tid, []).append((day, n, m))
        weeks = math.ceil(window_days / 7)
        trends = []
        for t in candidates:
            points = scoring.weekly(days.get(t.pk, []), last, weeks)
            trends.append(Trend(t, points, chart(points, bank.threshold)))
        return trends

    return _cached("trends", bank, window_days, compute)


MAX_TAGS = 12  # the standard tags, then the most used of the others


@dataclass(frozen=True)
class TagRow:
    tag: str
    flags: int  # flags in the window with this tag
    cells: list  # per candidate, in the bank's order: scoring.CandidateSummary
    # The best candidate on the tag (ties: lower mean WER, then listed first); None when none got a line right.
    best: object | None


@dataclass(frozen=True)
class TagTable:
    candidates: list
    rows: list


def bank_tags(bank: Bank, window_days: int, candidates) -> TagTable:
    """Each candidate's (transcribers, in the bank's order) accuracy on the window's flagged lines carrying each
    error tag (control lines have no tags), in two queries of the per-day tag totals: the tags used (with their
    flags), then each candidate's counts per tag."""
    window_days = clamp_window(window_days)

    def compute():
        since = window_start(window_days, bank.organization.zone)
        # Per-tag totals per day (aggregates): the live rows count each tag's flags, the candidate rows score them.
        live = totals.tag_summaries(bank.pk, since, source=Score.LIVE)
        used = {tag: sum(s.scored + s.failed for s in rows.values()) for tag, rows in live.items()}
        others = sorted((t for t in used if t not in STANDARD_TAGS), key=lambda t: (-used[t], t))
        tags = ([t for t in STANDARD_TAGS if t in used] + others)[:MAX_TAGS]
        if not tags or not candidates:
            return TagTable(candidates, [])
        per_tag = totals.tag_summaries(bank.pk, since)
        rows = []
        for tag in tags:
            found = per_tag.get(tag, {})
            cells = [found.get(t.pk) or scoring.summary_row(t.pk, 0, 0, 0, 0) for t in candidates]
            leader = scoring.rank(cells, 0).leader
            best = next((c for c in cells if c.candidate == leader), None)
            shown = next((t for t in candidates if t.pk == leader), None) if best and best.matches else None
            rows.append(TagRow(tag, used[tag], cells, shown))
        return TagTable(candidates, rows)

    return _cached("tags", bank, window_days, compute)


# ---------------------------------------------------------------- the whole screen


@dataclass(frozen=True)
class ResultsScreen:
    """Everything the results screen shows of a bank over a window, read once for the page and the API."""

    results: BankResults
    entity: dict  # transcriber id -> benchmark.selectors.EntityHeadline, where it has a scored run
    language_wer: dict | None  # the leader's per-language WER where the lines span several languages
    trends: list  # Trend per candidate
    tags: TagTable
    queue: dict  # the organization's queue (jobs.queue_status)
    # Latency and cost beside accuracy, and the chart of accuracy against latency (queries.tradeoff).
    tradeoff: Tradeoff | None = None
    by_tenant: groups.GroupTable | None = None  # each candidate's accuracy per tenant, and per assistant
    by_assistant: groups.GroupTable | None = None
    # Each candidate's entities right on the bank's own lines (queries.entities): transcriber id ->
    # lib.entities.EntityAccuracy; None in a snapshot kept before it had them.
    own_entities: dict | None = None


def bank_groups(bank: Bank, window_days: int, candidates, by: str) -> groups.GroupTable:
    """Each candidate's accuracy per tenant (by="tenant") or per assistant of the window's items
    (queries.groups.group_tables), cached as the per-tag table."""
    if by not in groups.BY:
        raise ValueError(f"by must be one of {groups.BY}, not {by!r}")
    window_days = clamp_window(window_days)
    since = window_start(window_days, bank.organization.zone)
    return _cached("groups", bank, window_days, lambda: groups.group_tables(bank, since, None, candidates))[
        by
    ]


def results_screen(
    bank: Bank, window_days: int, group=None, *, date_from=None, date_to=None, queue: bool = True
) -> ResultsScreen:
    """A bank's results (on one tenant's or assistant's calls, with `group`) with the public benchmark beside
    each candidate, their latency and cost and the trade-off chart, the leader's per-language WER, each
    candidate's weekly trend, per-tag, per-tenant and per-assistant accuracy, each candidate's entities right on
    the bank's own lines (queries.entities), and the organization's queue (left
    out with `queue=False`: a snapshot keeps the figures, a read adds the waiting work). Over a fixed period
    (`date_from`, `date_to`: the API's), the cards, their trade-off, the entities and the public benchmark only."""
    results = bank_results(bank, window_days, date_from=date_from, date_to=date_to, group=group)
    transcribers = [card.transcriber for card in results.cards]
    entity = benchmark.entity_headlines([t.pk for t in transcribers])
    tradeoff = bank_tradeoff(bank, results)
    status = jobs.queue_status(bank.organization_id) if queue else {}
    own = entities.bank_entities(
        bank,
        [t.pk for t in transcribers],
        results.window_days,
        date_from=date_from,
        date_to=date_to,
        group=group,
    )
    if date_from or date_to:
        return ResultsScreen(
            results, entity, None, [], TagTable(transcribers, []), status, tradeoff, own_entities=own
        )
    leader = results.leader
    return ResultsScreen(
        results=results,
        entity=entity,
        language_wer=bank_language_wer(bank, results.window_days, leader.transcriber.pk) if leader else None,
        trends=bank_trends(bank, results.window_days, transcribers),
        tags=bank_tags(bank, results.window_days, transcribers),
        queue=status,
        tradeoff=tradeoff,
        by_tenant=bank_groups(bank, results.window_days, transcribers, groups.TENANT),
        by_assistant=bank_groups(bank, results.window_days, transcribers, groups.ASSISTANT),
        own_entities=own,
    )
