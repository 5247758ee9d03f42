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
from .queries import confusion
from .shapes import run_figures, tradeoff, turns

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
    *tradeoff.CSV_COLUMNS,  # latency, price and the monthly projection; the per-tenant and per-assistant rows
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


def results_rows(bank, window_days, group=None):
    """The candidates' rows (on the group's calls, with `group`), the live rows, the catalogue's other prices at
    the volume (`catalogue price`: never called on these lines), then each candidate's accuracy per tenant and
    per assistant (rows `tenant` and `assistant`, the whole bank's, as on the page)."""
    r = queries.bank_results(bank, window_days, group=group)
    choices = queries.tradeoff.bank_tradeoff(bank, r)
    by_id = {c.key: c for c in choices.choices}
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
            *tradeoff.choice_cells(by_id[card.transcriber.pk], group),
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
            *tradeoff.blank_cells(group),
        ]
    for entry, p in choices.catalogue:
        measured = [""] * 7 + ["", "", threshold, ""]  # scored ... mean_wer, leader, clears, threshold, cost
        yield [
            *period,
            "catalogue price",
            "",
            entry.display_name,
            entry.provider,
            entry.model,
            *measured,
            *tradeoff.catalogue_cells(entry, p),
        ]
    transcribers = [card.transcriber for card in r.cards]
    order = {card.transcriber.pk: card.position + 1 for card in r.cards}
    for by in (queries.groups.TENANT, queries.groups.ASSISTANT):
        for row in queries.bank_groups(bank, r.window_days, transcribers, by).rows:
            for t, cell in zip(transcribers, row.cells, strict=True):
                yield [
                    *period,
                    by,
                    order[t.pk],
                    *_summary_cells(t, cell, scoring.wilson_interval(cell.matches, cell.scored)),
                    "",
                    _yes(scoring.clears(cell.matches, cell.scored, bank.threshold) if cell.scored else None),
                    threshold,
                    "",
                    *tradeoff.group_cells(row, cell),
                ]


def results_csv(bank, window_days, group=None):
    return stream_csv(
        f"{slugify(bank.name)}-results.csv", RESULTS_COLUMNS, results_rows(bank, window_days, group)
    )


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
    "candidate_substitutions",
    "candidate_deletions",
    "candidate_insertions",
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
            *_edits(rl),
            _yes(rl.calibration),
            rl.replay_text,
            _yes(rl.replay_matches),
            _yes(rl.in_review),
            {True: "agree", False: "disagree"}.get(rl.review_agrees, ""),
            rl.human_label,
            rl.correction,
        ]


def _edits(rl) -> list:
    """The candidate's substitutions, deletions and insertions against what was said (flagged lines it has text
    for); blank elsewhere."""
    found = run_figures.line_alignment(rl)
    if found["aligned_against"] != "expected":
        return ["", "", ""]
    return [found["candidate_substitutions"], found["candidate_deletions"], found["candidate_insertions"]]


def run_csv(run):
    return stream_csv(
        f"run-{run.pk}-{slugify(run.candidate.display_name)}.csv", RUN_LINE_COLUMNS, run_csv_rows(run)
    )


CONFUSION_COLUMNS = [
    "bank",
    "window_days",
    "first_day",
    "last_day",
    "order",
    "transcriber",
    "kind",
    "expected_word",
    "heard_word",
    "count",
    "share_of_its_errors",
    "pair",
]


def confusion_rows(bank, window_days):
    """Every candidate's every confusion pair in the window, candidate by candidate in the bank's order, most
    frequent first (queries.confusion: the per-day totals, whatever the bank's size). `pair` is the pair as the
    turn table's filter and the API name it (s:for>four)."""
    window_days = queries.clamp_window(window_days)
    period = [bank.name, window_days, *queries.window_days_covered(window_days, bank.organization.zone)]
    order = {c.transcriber_id: c.position + 1 for c in queries.candidates_of(bank)}
    for entry in confusion.confusion_pairs(bank, window_days, limit=None):
        for pair in entry.pairs:
            yield [
                *period,
                order[entry.transcriber.pk],
                entry.transcriber.display_name,
                pair.kind,
                pair.expected_word,
                pair.heard_word,
                pair.n,
                _fmt(pair.n / entry.errors) if entry.errors else "",
                pair.token,
            ]


def confusions_csv(bank, window_days):
    return stream_csv(
        f"{slugify(bank.name)}-confusion-pairs.csv", CONFUSION_COLUMNS, confusion_rows(bank, window_days)
    )
