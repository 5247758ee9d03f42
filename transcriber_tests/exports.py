"""The transcriber-testing CSV downloads (results, turn table, a full-call run's lines), the dashboard's and the
API's alike. They are streamed by oncore.csv, so a large bank never sits in memory. Times, money and positions
are written as the API's JSON writes them (oncore.formats); numbers count as the screens do, from 1 (a
candidate's `order`, a line's `line_number`: "line 2" on the call page is 2 here); the columns keep the
dashboard's word for the production transcript: live."""

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils.text import slugify

from oncore.csv import csv_line, safe_cell, stream_csv
from oncore.formats import iso_time, money
from oncore.transcribers.models import Transcriber

from . import queries, scoring
from .models import ControlLine, Flag, JudgePick, Score

RESULTS_COLUMNS = [
    "bank",
    "window_days",
    "first_day",
    "last_day",
    "row",
    "order",
    "transcriber",
    "provider",
    "model",
    "scored",
    "matches",
    "failed",
    "accuracy",
    "wilson_low",
    "wilson_high",
    "mean_wer",
    "leader",
    "clears_threshold",
    "threshold",
    "audio_cost_usd",
]

TURN_COLUMNS = [
    "flag_id",
    "item",
    "control_id",
    "call_id",
    "line_id",
    "tenant",
    "call_started_at",
    "flagged_at",
    "tags",
    "expected_text",
    "live_text",
    "transcriber",
    "source",
    "text",
    "failed",
    "failure",
    "match",
    "wer",
    "case_or_punctuation_only",
    "normalizer_version",
    "judge_pick",
    "judge_reasoning",
]


def _fmt(x, places=4):
    return "" if x is None else round(x, places)


def _yes(value) -> str:
    return "" if value is None else ("yes" if value else "no")


def _summary_cells(transcriber, summary, interval):
    """The columns a candidate row and a live row share, from the transcriber to the mean WER."""
    lo, hi = interval or (None, None)
    return [
        transcriber.display_name,
        transcriber.provider,
        transcriber.model,
        summary.scored,
        summary.matches,
        summary.failed,
        _fmt(summary.accuracy),
        _fmt(lo),
        _fmt(hi),
        _fmt(summary.mean_wer),
    ]


def results_rows(bank, window_days):
    r = queries.bank_results(bank, window_days)
    threshold = float(bank.threshold)
    period = [bank.name, r.window_days, *queries.window_days_covered(r.window_days)]
    for card in r.cards:
        yield [
            *period,
            "candidate",
            card.position + 1,
            *_summary_cells(card.transcriber, card.summary, card.interval),
            _yes(card.is_leader),
            _yes(card.clears_threshold),
            threshold,
            money(card.cost),
        ]
    for t, s, interval in r.live_rows:
        yield [
            *period,
            "live (reference)",
            "",
            *_summary_cells(t, s, interval),
            "no",
            _yes(scoring.clears(s.matches, s.scored, bank.threshold)),
            threshold,
            "",
        ]


def results_csv(bank, window_days):
    return stream_csv(f"{slugify(bank.name)}-results.csv", RESULTS_COLUMNS, results_rows(bank, window_days))


FETCH_ROWS = 5000  # rows of the turn table's CSV fetched from the database per round trip


def _item_cells(
    flag_id, control_id, call_id, line_id, tenant, started_at, flagged_at, tags, expected, live_text
):
    """The cells every row of one item (a flag or one of its controls) starts with, text cells made safe."""
    is_control = control_id is not None
    return [
        flag_id,
        "control" if is_control else "flag",
        control_id if is_control else "",
        call_id,
        line_id,
        safe_cell(tenant),
        iso_time(started_at),
        iso_time(flagged_at),
        "" if is_control else safe_cell(" ".join(Flag.decode_tags(tags))),  # a control carries no tags
        safe_cell(expected),
        safe_cell(live_text),
    ]


def _stream(queryset, *fields):
    """The rows of a queryset as tuples, fetched FETCH_ROWS at a time (a server-side cursor on PostgreSQL)."""
    return queryset.values_list(*fields).iterator(chunk_size=FETCH_ROWS)


def turn_csv_rows(bank, window_days):
    """One CSV line per item and transcriber (live and candidates), in the turn table's order: newest flag first,
    each flag before its controls, and within an item candidates then live, each by transcriber id. Three queries
    read side by side as streams in that order (the flags, their controls, the scores), FETCH_ROWS rows at a time,
    so memory stays flat; an item's cells and its judge's pick are encoded once and shared by its rows. Cells are
    made safe for a spreadsheet. The three read one snapshot of the database (a repeatable-read transaction on
    PostgreSQL), so a flag made or deleted while the file streams cannot set them apart. (SQLite, for a single
    machine, reads without one: a long read transaction there would hold back the queue's writes.)"""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield from _turn_csv_lines(bank, window_days)
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield from _turn_csv_lines(bank, window_days)


def _turn_csv_lines(bank, window_days):
    since = queries.window_start(queries.clamp_window(window_days))
    candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
    names = {}  # transcriber id -> safe display name, filled as new ids appear (live transcribers vary by call)
    picks = {
        (flag_id, control_id): csv_line((safe_cell(name), safe_cell(reasoning)))
        for flag_id, control_id, name, reasoning in JudgePick.objects.filter(
            flag__bank=bank, chosen__isnull=False
        ).values_list("flag_id", "control_id", "chosen__display_name", "reasoning")
    }
    no_pick = csv_line(("", ""))
    newest = ("-flag__created_at", "-flag_id")
    flags = _stream(
        Flag.objects.filter(bank=bank, created_at__gte=since).order_by("-created_at", "-id"),
        "id",
        "line__call_id",
        "line_id",
        "line__call__tenant__name",
        "line__call__started_at",
        "created_at",
        "tags",
        "expected_text",
        "line__text",
    )
    controls = _stream(
        ControlLine.objects.filter(flag__bank=bank, flag__created_at__gte=since).order_by(*newest, "id"),
        "flag_id",
        "id",
        "line_id",
        "expected_text",
        "line__text",
    )
    scores = _stream(
        Score.objects.filter(flag__bank=bank, flag__created_at__gte=since)
        .filter(Q(source=Score.CANDIDATE, transcriber_id__in=candidate_ids) | Q(source=Score.LIVE))
        .order_by(*newest, F("control_id").asc(nulls_first=True), "source", "transcriber_id"),
        "flag_id",
        "control_id",
        "transcriber_id",
        "source",
        "hypothesis",
        "failed",
        "failure",
        "match",
        "wer",
        "case_or_punctuation_only",
        "normalizer_version",
    )
    flag = (None,)
    its_controls = {}
    next_control = next(controls, None)
    item, cells, pick = None, "", no_pick
    for flag_id, control_id, transcriber_id, *score in scores:
        while flag[0] != flag_id:  # the streams are in the same order: catch up with this score's flag
            flag = next(flags)
            its_controls = {}  # the controls of each flag passed, a flag with none included
            while next_control is not None and next_control[0] == flag[0]:
                its_controls[next_control[1]] = next_control[2:]
                next_control = next(controls, None)
        if (flag_id, control_id) != item:
            item = (flag_id, control_id)
            _, call_id, line_id, tenant, started_at, flagged_at, tags, expected, live_text = flag
            if control_id is not None:
                line_id, expected, live_text = its_controls[control_id]
            cells = csv_line(
                _item_cells(
                    flag_id,
                    control_id,
                    call_id,
                    line_id,
                    tenant,
                    started_at,
                    flagged_at,
                    tags,
                    expected,
                    live_text,
                )
            )[:-2]
            pick = picks.get(item, no_pick)
        name = names.get(transcriber_id)
        if name is None:
            name = names[transcriber_id] = safe_cell(
                Transcriber.objects.values_list("display_name", flat=True).get(pk=transcriber_id)
            )
        source, hypothesis, failed, failure, match, wer, noted, normalizer_version = score
        score_cells = csv_line(
            (
                name,
                source,
                safe_cell(hypothesis),
                "yes" if failed else "no",
                failure,
                "" if failed else ("yes" if match else "no"),
                _fmt(wer),
                "yes" if noted else "no",
                normalizer_version,
            )
        )[:-2]
        yield f"{cells},{score_cells},{pick}"


def turns_csv(bank, window_days):
    return stream_csv(
        f"{slugify(bank.name)}-turns.csv", TURN_COLUMNS, turn_csv_rows(bank, window_days), encoded=True
    )


RUN_LINE_COLUMNS = [
    "run_id",
    "candidate",
    "bank",
    "call_id",
    "tenant",
    "line_id",
    "line_number",
    "start_s",
    "end_s",
    "flagged",
    "expected_text",
    "live_text",
    "candidate_text",
    "candidate_failed",
    "candidate_error",
    "differs",
    "label",
    "label_source",
    "reasoning",
    "pattern",
    "candidate_wer",
    "live_wer",
    "calibration",
    "replay_text",
    "replay_matches",
    "in_review_sample",
    "review",
]


def run_csv_rows(run):
    lines = run.lines.select_related("line__call__tenant", "pattern").order_by("position")
    for rl in lines.iterator(chunk_size=1000):
        line = rl.line
        yield [
            run.pk,
            run.candidate.display_name,
            run.bank_name,
            line.call_id,
            line.call.tenant.name,
            line.pk,
            line.position + 1,
            line.start_s,
            line.end_s,
            _yes(bool(rl.expected_text)),
            rl.expected_text,
            rl.live_text,
            rl.candidate_text,
            _yes(rl.candidate_failed) if rl.compared else "",
            rl.candidate_error,
            _yes(rl.differs) if rl.compared else "",
            rl.label,
            rl.label_source,
            rl.reasoning,
            rl.pattern.name if rl.pattern else "",
            _fmt(rl.candidate_wer),
            _fmt(rl.live_wer),
            _yes(rl.calibration),
            rl.replay_text,
            _yes(rl.replay_matches),
            _yes(rl.in_review),
            {True: "agree", False: "disagree"}.get(rl.review_agrees, ""),
        ]


def run_csv(run):
    return stream_csv(
        f"run-{run.pk}-{slugify(run.candidate.display_name)}.csv", RUN_LINE_COLUMNS, run_csv_rows(run)
    )
