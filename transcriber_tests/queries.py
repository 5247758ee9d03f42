"""Every read the dashboard and the API share (and the CSV exports): the calls list and the lines of a call, a
line's clip, flags, banks and their candidates, a bank's results and its turn-by-turn table. The views and the
API routers call these; neither writes a read of its own. Every page stays O(1) in queries: aggregates are
computed in the database, then ranked by the pure functions in scoring. Full-call runs have theirs in
runs/queries.py."""

from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal

from django.core.cache import cache
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Count, Exists, F, IntegerField, Max, Min, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from benchmark.codeswitch.langtag import detect_languages
from benchmark.codeswitch.report import language_wer
from oncore import audio
from oncore.calls.models import Call, Line
from oncore.transcribers.models import Transcriber

from . import errors, jobs, scoring
from .actions import live_transcriber_of, why_not_flaggable
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


def calls_list(organization, *, tenant=None, assistant=None, date_from=None, date_to=None, has_flags=None):
    """The organization's calls, newest first, each with its number of lines and of flagged lines. Filters: a
    tenant or assistant id, the days it started between, and has_flags (True: only calls with a flagged line;
    False: only without; None: both)."""
    qs = calls_of(organization).annotate(
        n_lines=Count("lines", distinct=True), n_flags=Count("lines__flag", distinct=True)
    )
    qs = _where(
        qs,
        tenant_id=tenant,
        assistant_id=assistant,
        started_at__date__gte=date_from,
        started_at__date__lte=date_to,
    )
    if has_flags is not None:
        flagged = Exists(Flag.objects.filter(line__call=OuterRef("pk")))
        qs = qs.filter(flagged if has_flags else ~flagged)
    return qs.order_by("-started_at", "-id")


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
            duration = audio.probe(call.recording.path, label=f"call {call.pk}").duration_s
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
        playable = call.recorded and bool(call.recording) and line.has_timing and not recording_problem
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
        return audio.locate_clip(call.recording.path, line.start_s, line.end_s, label=f"call {call.pk}")
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
    """The organization's banks by name, each with its number of flags and of candidates."""
    return (
        Bank.objects.filter(organization=organization)
        .annotate(n_flags=Count("flags", distinct=True), n_candidates=Count("candidates", distinct=True))
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
    return timezone.now() - timedelta(days=window_days)


def bank_scores(bank: Bank, window_days: int):
    return Score.objects.filter(flag__bank=bank, flag__created_at__gte=window_start(window_days))


def _summaries(scores) -> dict[tuple[str, int], scoring.CandidateSummary]:
    """Per (source, transcriber): scored, matches, failed and the exact WER sum, in one aggregate query; rows
    derived by scoring.summary_row, as the pure summary derives them."""
    rows = scores.values("source", "transcriber_id").annotate(
        n_scored=Count("id", filter=Q(failed=False)),
        n_matches=Count("id", filter=Q(failed=False, match=True)),
        n_failed=Count("id", filter=Q(failed=True)),
        wer_units=Sum("wer_units", filter=Q(failed=False)),
    )
    return {
        (r["source"], r["transcriber_id"]): scoring.summary_row(
            r["transcriber_id"], r["n_scored"], r["n_matches"], r["n_failed"], int(r["wer_units"] or 0)
        )
        for r in rows
    }


def _empty(tid) -> scoring.CandidateSummary:
    return scoring.summary_row(tid, 0, 0, 0, 0)


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
    return scoring.LeadTest(
        both_scored=both, leader_only_right=b, runner_up_only_right=c, p_value=p, clear=p < 0.05 and b > c
    )


@dataclass(frozen=True)
class Card:
    transcriber: object
    position: int
    summary: scoring.CandidateSummary
    interval: tuple[float, float] | None
    cost: Decimal
    is_leader: bool
    clears_threshold: bool = False  # its accuracy is at or above the bank's threshold, compared exactly


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
    control_mix: tuple = ()  # (controls per flag, flags), most flags first, over the window's flags

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


def _on_bank_lines(bank: Bank) -> Q:
    """Transcriptions of a bank's lines: its flags' lines and their controls' lines."""
    flag_lines = Flag.objects.filter(bank=bank).values("line_id")
    control_lines = ControlLine.objects.filter(flag__bank=bank).values("line_id")
    return Q(line_id__in=flag_lines) | Q(line_id__in=control_lines)


def candidate_costs(bank: Bank, transcriber_ids) -> dict[int, Decimal]:
    """Audio cost so far of each candidate on the bank's lines (flags and controls, any date)."""
    rows = (
        Transcription.objects.filter(
            _on_bank_lines(bank), transcriber_id__in=transcriber_ids, status=Transcription.DONE
        )
        .values("transcriber_id")
        .annotate(total=Sum("cost"))
    )
    return {r["transcriber_id"]: r["total"] or Decimal(0) for r in rows}


def pending_for_bank(bank: Bank, transcriber_ids) -> int:
    return Transcription.objects.filter(
        _on_bank_lines(bank),
        organization_id=bank.organization_id,
        status__in=jobs.ACTIVE,
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


def control_mix(bank: Bank, since) -> tuple[tuple[int, int], ...]:
    """How many of the bank's flags since `since` carry each number of control lines: ((controls, flags), ...),
    most flags first. One query."""
    per_flag = (
        ControlLine.objects.filter(flag=OuterRef("pk"))
        .order_by()
        .values("flag")
        .annotate(n=Count("id"))
        .values("n")
    )
    rows = (
        Flag.objects.filter(bank=bank, created_at__gte=since)
        .annotate(n_controls=Coalesce(Subquery(per_flag), 0))
        .order_by()
        .values("n_controls")
        .annotate(flags=Count("id"))
        .values_list("n_controls", "flags")
    )
    return tuple(sorted(rows, key=lambda row: (-row[1], row[0])))


def _compute_bank_results(bank: Bank, window_days: int) -> BankResults:
    candidates = list(candidates_of(bank))
    ids = [c.transcriber_id for c in candidates]
    since = window_start(window_days)
    summaries = _summaries(Score.objects.filter(flag__bank=bank, flag__created_at__gte=since))
    candidate = {t: summaries.get((Score.CANDIDATE, t), _empty(t)) for t in ids}
    ranked = scoring.rank([candidate[t] for t in ids], bank.threshold)
    costs = candidate_costs(bank, ids)
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
            )
        )
    by_id = {card.transcriber.pk: card for card in cards}
    leader = by_id.get(ranked.leader)
    runner_up_id = ranked.runner_up
    lead = (
        lead_test(bank, since, ranked.leader, runner_up_id) if leader and runner_up_id is not None else None
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
        control_mix=control_mix(bank, since),
    )


LANGUAGE_SAMPLE = 200  # newest flagged lines of the window the languages are detected on
LANGUAGE_CACHE_SECONDS = 600


def bank_languages(bank: Bank, window_days: int) -> list[str]:
    """The languages the bank's flagged lines in the window span, detected from their expected texts (the
    newest LANGUAGE_SAMPLE) with the code-switching report's tagger (benchmark.codeswitch.langtag); the bank's
    language label plays no part, it is a display name only."""
    texts = (
        Flag.objects.filter(bank=bank, created_at__gte=window_start(clamp_window(window_days)))
        .order_by("-created_at", "-id")
        .values_list("expected_text", flat=True)[:LANGUAGE_SAMPLE]
    )
    return detect_languages(texts)


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


def _disagreeing(bank: Bank, since) -> Q:
    """Items where the bank's candidates disagree: among their scored texts, some matched and some did not.
    Grouped once per item kind, then used as IN subqueries (fast on large banks, unlike per-row EXISTS)."""
    ids = bank.candidates.values("transcriber_id")
    scored = Score.objects.filter(
        source=Score.CANDIDATE,
        failed=False,
        transcriber_id__in=ids,
        flag__bank=bank,
        flag__created_at__gte=since,
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
    return items.order_by("-flag__created_at", "-flag_id", F("control_id").asc(nulls_first=True)).values_list(
        "id", flat=True
    )


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
        TurnRow(
            item,
            [(t, by_key.get((item.flag_id, item.control_id, t.pk))) for t in transcribers],
            picks.get((item.flag_id, item.control_id)),
        )
        for item in items
    ]
