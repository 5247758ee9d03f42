"""The transcriber-testing CSV downloads (results, turn table, a full-call run's lines), the dashboard's and the
API's alike. They are streamed by oncore.csv, so a large bank never sits in memory. Times, money and positions
are written as the API's JSON writes them (oncore.formats); numbers count as the screens do, from 1 (a
candidate's `order`, a line's `line_number`: "line 2" on the call page is 2 here); the columns keep the
dashboard's word for the production transcript: live."""

from django.db import connection, transaction
from django.utils.text import slugify

from oncore.csv import csv_line, safe_cell, stream_csv
from oncore.formats import money
from oncore.transcribers.models import Transcriber

from . import queries, scoring
from .shapes import turns

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
    period = [bank.name, r.window_days, *queries.window_days_covered(r.window_days, bank.organization.zone)]
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


def turn_csv_rows(bank, window_days):
    """One CSV line per item and transcriber, in the turn table's order (newest flag first, each flag before its
    controls; within an item the candidates by transcriber id, then the live transcript), read by the turn
    table's own reader (queries.all_turn_rows) a chunk of flags at a time, so memory stays flat; an item's cells
    are encoded once and shared by its lines. On PostgreSQL the chunks read one snapshot of the database (a
    repeatable-read transaction), so a flag made or deleted while the file streams cannot set them apart.
    (SQLite, for a single machine, reads without one: a long read transaction there would hold back the
    queue's writes.)"""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield from _turn_csv_lines(bank, window_days)
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield from _turn_csv_lines(bank, window_days)


def _turn_csv_lines(bank, window_days):
    candidates = sorted((c.transcriber for c in queries.candidates_of(bank)), key=lambda t: t.pk)
    names = {t.pk: safe_cell(t.display_name) for t in candidates}  # live transcribers join as they appear
    for row in queries.all_turn_rows(bank, window_days, candidates):
        item = csv_line(turns.row_cells(row))[:-2]
        pick = csv_line(turns.pick_cells(row.pick))  # with its line end
        for transcriber, cell in row.cells:  # in the order asked for: by transcriber id
            if cell is not None and not cell.waiting:
                yield f"{item},{csv_line([names[transcriber.pk], *turns.score_cells('candidate', cell)])[:-2]},{pick}"
        live = row.production
        if live.transcriber_id not in names:
            names[live.transcriber_id] = safe_cell(
                Transcriber.objects.values_list("display_name", flat=True).get(pk=live.transcriber_id)
            )
        yield f"{item},{csv_line([names[live.transcriber_id], *turns.score_cells('live', live)])[:-2]},{pick}"


def turns_csv(bank, window_days):
    return stream_csv(
        f"{slugify(bank.name)}-turns.csv", turns.TURN_COLUMNS, turn_csv_rows(bank, window_days), encoded=True
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
    "review_label",
    "review_correction",
]


def run_csv_rows(run):
    lines = run.lines.select_related("line__call__tenant", "pattern").order_by("position")
    for rl in lines.iterator(chunk_size=1000):
        line = rl.line
        hidden = rl.label_hidden  # awaiting review: the review is blind, here too
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
            "" if hidden else rl.label,
            "" if hidden else rl.label_source,
            "" if hidden else rl.reasoning,
            rl.pattern.name if rl.pattern and not hidden else "",
            _fmt(rl.candidate_wer),
            _fmt(rl.live_wer),
            _yes(rl.calibration),
            rl.replay_text,
            _yes(rl.replay_matches),
            _yes(rl.in_review),
            {True: "agree", False: "disagree"}.get(rl.review_agrees, ""),
            rl.human_label,
            rl.correction,
        ]


def run_csv(run):
    return stream_csv(
        f"run-{run.pk}-{slugify(run.candidate.display_name)}.csv", RUN_LINE_COLUMNS, run_csv_rows(run)
    )
