"""Every read the dashboard and the API share (and the CSV exports): the calls list and the lines of a call, a
line's clip, flags, banks and their candidates, a bank's results and its turn-by-turn table. The views and the
API routers call these; neither writes a read of its own. Every page stays O(1) in queries: aggregates are
computed in the database, then ranked by the pure functions in scoring. Full-call runs have theirs in
runs/queries.py."""

import json
import re
from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import NamedTuple

from django.core.cache import cache
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from benchmark.selectors import detect_languages, language_wer
from oncore import audio
from oncore.calls.models import Call, Line
from oncore.transcribers.models import Transcriber

from . import aggregates, errors, jobs, scoring
from .lines import live_transcriber_of, why_not_flaggable
from .models import Bank, ControlLine, Flag, Score, Transcription
from .picks import picks_by_item

DEFAULT_WINDOW_DAYS = 30
MAX_WINDOW_DAYS = 90

LIVE_REASON = (
    "Reference only, not a fair rival: flags are mostly lines the live transcriber got wrong and control lines "
    "are its own text, so its score mostly reflects the mix of flags and controls."
)


# ---------------------------------------------------------------- calls and their lines


def _where(qs, **lookups):
    """The queryset filtered on each lookup that has a value (None and "" stand for no filter; False is one)."""
    return qs.filter(
        **{lookup: value for lookup, value in lookups.items() if value is not None and value != ""}
    )


def calls_of(organization):
    """The organization's calls, with their tenant, assistant and live transcriber."""
    return Call.objects.filter(tenant__organization=organization).select_related(
        "tenant", "assistant", "live_transcriber"
    )


def calls_list(
    organization,
    *,
    tenant=None,
    assistant=None,
    date_from=None,
    date_to=None,
    has_flags=None,
    external_id=None,
    after=None,
):
    """The organization's calls, newest first, each with its number of lines and of flagged lines (counters
    stored on the call). Filters: a tenant or assistant id, the days (UTC) it started between, has_flags (True:
    only calls with a flagged line; False: only without; None: both) and the caller system's external_id.
    `after` (a CallCursor) starts the list after that call: keyset pages, as quick deep in the list as at its
    start. Every filter reads an index in the list's order (see Call.Meta.indexes)."""
    qs = _where(
        calls_of(organization),
        external_id=external_id,
        tenant_id=tenant,
        assistant_id=assistant,
        started_at__gte=_midnight(date_from),
        started_at__lt=_midnight(date_to, days=1),
    )
    if has_flags is not None:
        qs = qs.filter(n_flags__gt=0) if has_flags else qs.filter(n_flags=0)
    if after is not None:
        qs = qs.filter(Q(started_at__lt=after.started_at) | Q(started_at=after.started_at, pk__lt=after.pk))
    return qs.order_by("-started_at", "-id")


def _midnight(day, days: int = 0):
    return None if day is None else datetime.combine(day + timedelta(days=days), time.min, UTC)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CURSOR = re.compile(r"(-?[0-9]{1,18})_([0-9]{1,18})")


@dataclass(frozen=True)
class CallCursor:
    """Where a keyset page of calls ends: the last call's start (to the microsecond) and id. Written in URLs and
    the API as "<microseconds since 1970>_<id>"."""

    started_at: datetime
    pk: int

    @classmethod
    def of(cls, call) -> "CallCursor":
        return cls(call.started_at, call.pk)

    @classmethod
    def parse(cls, text: str) -> "CallCursor":
        """ValueError when the text is not a cursor this site wrote."""
        found = _CURSOR.fullmatch(text or "")
        if not found:
            raise ValueError(f"{text!r} is not a calls cursor (it looks like 1732960000000000_123).")
        try:
            started_at = EPOCH + timedelta(microseconds=int(found[1]))
        except OverflowError:
            raise ValueError(f"{text!r} is not a calls cursor: its time is out of range.") from None
        return cls(started_at, int(found[2]))

    def __str__(self) -> str:
        return f"{(self.started_at - EPOCH) // timedelta(microseconds=1)}_{self.pk}"


@dataclass(frozen=True)
class CallsPage:
    calls: list
    next_after: CallCursor | None  # where the next page starts; None on the last page
    total: int  # calls matching the filters (every page)
    exact: bool  # False: `total` is the database's estimate ("about N calls")


def calls_page(organization, *, after=None, offset: int = 0, size: int = 50, exact: bool = False, **filters):
    """One keyset page of calls_list: `size` calls after the cursor (and `offset` more), the next page's cursor
    and the total, exact when asked, else counted only up to EXACT_COUNT_UP_TO (count_about). Three queries."""
    rows = list(calls_list(organization, after=after, **filters)[offset : offset + size + 1])
    calls, more = rows[:size], len(rows) > size
    matching = calls_list(organization, **filters)
    total, is_exact = (matching.count(), True) if exact else count_about(matching)
    return CallsPage(calls, CallCursor.of(calls[-1]) if more else None, total, is_exact)


EXACT_COUNT_UP_TO = 10_000


def count_about(queryset) -> tuple[int, bool]:
    """(how many rows, exact?): counted exactly up to EXACT_COUNT_UP_TO (a count that stops there), beyond that
    the database's estimate (PostgreSQL's planner; SQLite, local only, counts)."""
    exact = queryset.order_by()[: EXACT_COUNT_UP_TO + 1].count()
    if exact <= EXACT_COUNT_UP_TO or connection.vendor != "postgresql":
        return (exact if exact <= EXACT_COUNT_UP_TO else queryset.count()), True
    sql, params = queryset.order_by().query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return max(int(plan[0]["Plan"]["Plan Rows"]), exact), False


@dataclass(frozen=True)
class LineRow:
    """A line of a call as the call page and GET /calls/{id} show it."""

    line: Line
    flag: Flag | None
    problem: errors.ActionError | None  # why it cannot be flagged now, with the code flagging would give
    playable: bool  # its clip can be played

    @property
    def flaggable(self) -> bool:
        return self.problem is None


def line_rows(call: Call, lines=None) -> list[LineRow]:
    """Each line of a call in order (or only `lines`, of this call) with its flag, why it cannot be flagged and
    whether its clip plays. The recording is probed once, whatever the number of lines."""
    if lines is None:
        lines = list(call.lines.select_related("flag__bank").order_by("position"))
    live = live_transcriber_of(call)
    if live is not None and call.live_transcriber_id is None:
        # Found by name: keep it on this in-memory call so each line's check does not look it up again.
        call.live_transcriber = live
    recording_problem, duration = None, None
    if call.recorded and call.recording:
        try:
            duration = audio.probe(audio.stored(call.recording), label=f"call {call.pk}").duration_s
        except audio.AudioError as exc:
            recording_problem = str(exc)
    rows = []
    for line in lines:
        line.call = call
        flag = getattr(line, "flag", None)
        problem = why_not_flaggable(line, check_audio=False)
        if problem is None and recording_problem:
            problem = errors.RecordingUnavailable(recording_problem)
        elif problem is None and duration is not None and line.start_s >= duration:
            problem = errors.RecordingUnavailable("Its timing lies outside the recording.")
        elif problem is None and flag is not None:
            problem = errors.FlagExists(f"This line already has flag {flag.pk}; edit it.")
        playable = (
            call.recorded
            and bool(call.recording)
            and line.has_timing
            and not recording_problem
            and not (duration is not None and line.start_s >= duration)
        )
        rows.append(LineRow(line, flag, problem, playable))
    return rows


CALL_PAGE_LINES = 200  # lines per call page: the largest call allowed (ONCORE_MAX_LINES_PER_CALL) stays quick


def call_lines_page(call: Call, number=None, line_id: int | None = None):
    """One page of a call's lines in order, with their flags: page `number` (as Paginator.get_page reads it),
    or the page that holds line `line_id` when it is one of the call's."""
    lines = call.lines.select_related("flag__bank").order_by("position")
    if line_id is not None:
        position = lines.filter(pk=line_id).values_list("position", flat=True).first()
        if position is not None:
            number = lines.filter(position__lt=position).count() // CALL_PAGE_LINES + 1
    return Paginator(lines, CALL_PAGE_LINES).get_page(number)


def line_clip(line: Line) -> audio.Clip:
    """The line's clip as played on the dashboard, located but not read (oncore.http.clip_response streams it):
    both channels, with the margin on each side. Refuses with LineNotRecorded, LineHasNoTiming or
    RecordingUnavailable."""
    call = line.call
    if not (call.recorded and call.recording):
        raise errors.LineNotRecorded(f"Call {call.pk} was not recorded, so its lines have no audio.")
    if not line.has_timing:
        raise errors.LineHasNoTiming("This line has no audio timing, so its audio cannot be cut.")
    try:
        return audio.locate_clip(
            audio.stored(call.recording), line.start_s, line.end_s, label=f"call {call.pk}"
        )
    except audio.AudioError as exc:
        raise errors.RecordingUnavailable(str(exc)) from None


# ---------------------------------------------------------------- flags, banks and candidates


def flags_list(organization, *, bank=None, unbanked=None, tag="", call=None, date_from=None, date_to=None):
    """The organization's flags, newest first, with their line, call and tenant. Filters: a bank id, unbanked
    (True: only flags in no bank; False: only flags in a bank), a tag, a call id, the days they were made between."""
    qs = Flag.objects.filter(organization=organization).select_related("line__call__tenant")
    qs = _where(
        qs,
        bank_id=bank,
        bank__isnull=unbanked,
        tags__contains=f",{' '.join(tag.split()).lower()}," if tag else None,
        line__call_id=call,
        created_at__date__gte=date_from,
        created_at__date__lte=date_to,
    )
    return qs.order_by("-created_at", "-id")


def banks_list(organization):
    """The organization's banks by name, each with its number of flags (from the per-day totals) and of
    candidates."""
    return (
        Bank.objects.filter(organization=organization)
        .annotate(
            n_flags=aggregates.flags_in(OuterRef("pk")), n_candidates=Count("candidates", distinct=True)
        )
        .order_by("name", "id")
    )


def candidates_of(bank: Bank):
    """The bank's candidates in their order, with their transcribers."""
    return bank.candidates.select_related("transcriber").order_by("position")


# ---------------------------------------------------------------- results


def clamp_window(days) -> int:
    try:
        days = int(days)
    except (TypeError, ValueError):
        return DEFAULT_WINDOW_DAYS
    return min(max(days, 1), MAX_WINDOW_DAYS)


def window_start(window_days: int):
    """The start of a window of the last `window_days` days: midnight (UTC) of the day that many days ago, so the
    window holds whole days, as the per-day totals do (aggregates)."""
    return _midnight(timezone.now().astimezone(UTC).date(), -window_days)


def window_days_covered(window_days: int) -> tuple[date, date]:
    """The first and last day (UTC) a window of the last `window_days` days counts, as the results CSV states."""
    return window_start(window_days).date(), timezone.now().astimezone(UTC).date()


def period_bounds(window_days: int, date_from: date | None = None, date_to: date | None = None):
    """(since, until) of the flags a bank's results count: the last `window_days` days (until None: up to now),
    or, when either date is given, the days from `date_from` to `date_to`, inclusive, in UTC (a missing one
    leaves that side open)."""
    if date_from is None and date_to is None:
        return window_start(window_days), None
    return _midnight(date_from) or EPOCH, _midnight(date_to, 1)


def _empty(tid) -> scoring.CandidateSummary:
    return scoring.summary_row(tid, 0, 0, 0, 0)


def lead_test(bank: Bank, since, leader_id: int, runner_up_id: int, until=None) -> scoring.LeadTest:
    """Exact McNemar on the items both scored, from the bank's per-day pair totals (aggregates)."""
    return scoring.lead_test(*aggregates.pair_counts(bank.pk, since, until, leader_id, runner_up_id))


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


def pending_for_bank(bank: Bank, transcriber_ids) -> int:
    """The organization's waiting transcriptions of these candidates on the bank's lines: each waiting row is
    looked up in the bank (the waiting rows are few, bounded by ONCORE_ORG_QUEUE_LIMIT; the bank's lines many)."""
    on_flag = Flag.objects.filter(bank=bank, line_id=OuterRef("line_id"))
    on_control = ControlLine.objects.filter(flag__bank=bank, line_id=OuterRef("line_id"))
    return (
        Transcription.objects.filter(
            organization_id=bank.organization_id, status__in=jobs.ACTIVE, transcriber_id__in=transcriber_ids
        )
        .filter(Exists(on_flag) | Exists(on_control))
        .count()
    )


RESULTS_CACHE_SECONDS = 60


def bank_results(
    bank: Bank, window_days: int = DEFAULT_WINDOW_DAYS, *, date_from=None, date_to=None
) -> BankResults:
    """The results of a bank over a window, or over the days from `date_from` to `date_to` (period_bounds).
    Cached per bank and period until the next write that changes the bank's results
    (actions.results_changed moves bank.results_changed_at) or for a minute at most, so the window's start
    moves on; the waiting count is always fresh."""
    window_days = clamp_window(window_days)
    changed = bank.results_changed_at.isoformat()
    key = f"bank-results:{bank.pk}:{window_days}:{date_from}:{date_to}:{changed}"
    results = cache.get(key)
    if results is None:
        results = _compute_bank_results(bank, window_days, date_from, date_to)
        cache.set(key, results, RESULTS_CACHE_SECONDS)
    ids = [card.transcriber.pk for card in results.cards]
    return replace(results, bank=bank, pending=pending_for_bank(bank, ids))


def control_mix(bank: Bank, since, until=None) -> tuple[tuple[int, int], ...]:
    """How many of the bank's flags since `since` (and before `until`) carry each number of control lines:
    ((controls, flags), ...), most flags first. From the per-day totals (aggregates)."""
    return aggregates.control_mix(bank.pk, since, until)


def _compute_bank_results(bank: Bank, window_days: int, date_from=None, date_to=None) -> BankResults:
    candidates = list(candidates_of(bank))
    ids = [c.transcriber_id for c in candidates]
    since, until = period_bounds(window_days, date_from, date_to)
    summaries, costs = aggregates.summaries(bank.pk, since, until)
    candidate = {t: summaries.get((Score.CANDIDATE, t), _empty(t)) for t in ids}
    failing = [t for t in ids if candidate[t].failed]
    reasons = failure_reasons(bank, failing, since, until) if failing else {}
    ranked = scoring.rank([candidate[t] for t in ids], bank.threshold)
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
            )
        )
    by_id = {card.transcriber.pk: card for card in cards}
    leader = by_id.get(ranked.leader)
    runner_up_id = ranked.runner_up
    lead = (
        lead_test(bank, since, ranked.leader, runner_up_id, until)
        if leader and runner_up_id is not None
        else None
    )

    live = {t: s for (source, t), s in summaries.items() if source == Score.LIVE}
    live_rows = [
        (t, live[t.pk], scoring.wilson_interval(live[t.pk].matches, live[t.pk].scored))
        for t in Transcriber.objects.filter(pk__in=live)
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
        control_mix=control_mix(bank, since, until),
        date_from=date_from,
        date_to=date_to,
    )


NO_WORDS = "its text had no words"
NOTHING_CAME_BACK = "no text came back"


def failure_reasons(bank: Bank, transcriber_ids, since, until=None) -> dict[int, tuple]:
    """Why the candidates' failed lines in the period failed: {transcriber id: ((reason, lines), ...)}, most
    lines first. The reason is the engine's error on the line's transcription ("DEEPGRAM_API_KEY is not set on
    this server: ..."), or that its text had no words. One query, grouped in the database."""
    failed = Score.objects.filter(
        flag__bank=bank,
        flag__created_at__gte=since,
        source=Score.CANDIDATE,
        failed=True,
        transcriber_id__in=transcriber_ids,
    )
    if until is not None:
        failed = failed.filter(flag__created_at__lt=until)
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
    since = window_start(window_days)
    flags = Flag.objects.filter(bank=bank, created_at__gte=since).order_by("-created_at", "-id")
    newest_id, newest_at = flags.values_list("pk", "updated_at").first() or (0, None)
    count = aggregates.item_count(bank.pk, since, kind="flags")
    stamp = newest_at.timestamp() if newest_at else 0
    key = f"bank-language-set:{bank.pk}:{window_days}:{count}:{newest_id}:{stamp}"
    found = cache.get(key)
    if found is None:
        found = detect_languages(flags.values_list("expected_text", flat=True)[:LANGUAGE_SAMPLE])
        cache.set(key, found, LANGUAGE_CACHE_SECONDS)
    return found


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
    key = f"bank-languages:{bank.pk}:{window_days}:{transcriber_id}:{bank.results_changed_at.isoformat()}"
    found = cache.get(key)
    if found is None:
        found = {"figures": _language_wer(bank, window_days, transcriber_id)}
        cache.set(key, found, LANGUAGE_CACHE_SECONDS)
    return found["figures"]


def _language_wer(bank: Bank, window_days: int, transcriber_id: int | None) -> dict | None:
    languages = bank_languages(bank, window_days)
    if len(languages) < 2:
        return None
    if transcriber_id is None:
        return {}
    scores = Score.objects.filter(
        flag__bank=bank,
        flag__created_at__gte=window_start(window_days),
        control__isnull=True,
        source=Score.CANDIDATE,
        transcriber_id=transcriber_id,
        failed=False,
    ).values_list("flag__expected_text", "hypothesis")
    return language_wer(languages, scores)


# ---------------------------------------------------------------- the turn-by-turn table


class KnownCount:
    """An ordered queryset whose count is already known (from the per-day totals), for Paginator and the API's
    pages: counting every item of a large bank would cost more than reading the page."""

    def __init__(self, queryset, count: int):
        self.queryset, self._count = queryset, count
        self.ordered = True

    def count(self) -> int:
        return self._count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, key):
        return self.queryset[key]

    def __iter__(self):
        return iter(self.queryset)


def turn_items(bank: Bank, window_days: int, *, kind: str = "", tag: str = "", disagree: bool = False):
    """Ids of the bank's items (flags and their controls), newest flag first, for pagination; `turn_rows` loads
    one page of them. Every item has exactly one live score, written when it entered a bank, so live scores
    double as the item list; each carries whether the bank's candidates disagree on the item (aggregates).
    Pages are read along the bank's flags newest first (an index); the count comes from the per-day totals,
    except with a tag (counted in the database)."""
    since = window_start(clamp_window(window_days))
    items = Score.objects.filter(source=Score.LIVE, flag__bank=bank, flag__created_at__gte=since)
    if kind == "flags":
        items = items.filter(control__isnull=True)
    elif kind == "controls":
        items = items.filter(control__isnull=False)
    if tag:
        items = items.filter(flag__tags__contains=f",{tag.strip().lower()},")
    if disagree:
        items = items.filter(disagree=True)
    ordered = items.order_by(
        "-flag__created_at", "-flag_id", F("control_id").asc(nulls_first=True)
    ).values_list("id", flat=True)
    if tag:
        return ordered
    return KnownCount(ordered, aggregates.item_count(bank.pk, since, kind=kind, disagree=disagree))


@dataclass(frozen=True)
class TurnRow:
    item: Score  # the live score of the item
    cells: list  # (transcriber, Cell or None) in candidate order
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


class Cell(NamedTuple):
    """What a turn-table cell shows of a candidate's score (the dashboard's and the API's): a Score's fields,
    read without building the model (a page has hundreds)."""

    flag_id: int
    control_id: int | None
    transcriber_id: int
    hypothesis: str
    failed: bool
    failure: str
    match: bool
    wer: float | None
    case_or_punctuation_only: bool


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
    ).values_list(*Cell._fields)
    by_key = {(s.flag_id, s.control_id, s.transcriber_id): s for s in map(Cell._make, scores)}
    picks = picks_by_item(items)
    return [
        TurnRow(
            item,
            [(t, by_key.get((item.flag_id, item.control_id, t.pk))) for t in transcribers],
            picks.get((item.flag_id, item.control_id)),
        )
        for item in items
    ]
