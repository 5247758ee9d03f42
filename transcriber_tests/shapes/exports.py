"""The transcriber-testing CSV downloads (results, turn table, a full-call run's lines), the dashboard's and the
API's alike. They are streamed by oncore.csv, so a large bank never sits in memory. Times, money and positions
are written as the API's JSON writes them (oncore.formats); numbers count as the screens do, from 1 (a
candidate's `order`, a line's `line_number`: "line 2" on the call page is 2 here); the columns keep the
dashboard's word for the production transcript: live."""

from collections import defaultdict

from django.db import connection, transaction
from django.utils.text import slugify

from oncore.accounts.models import Tenant
from oncore.calls.models import Call, Line
from oncore.csv import csv_line, safe_cell, stream_csv
from oncore.formats import money
from oncore.transcribers.models import Transcriber

from .. import queries
from ..lib import entities, scoring
from ..models import ControlLine, Flag, JudgePick, Score
from ..queries import confusion, snapshots
from ..queries.turns import display_name
from . import run_figures, tradeoff, turns
from .banks import summary_fields

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
    # Where the accuracy comes from: flagged lines fixed and control lines kept, each with n; whether a candidate
    # runs the live transcriber's own model.
    "flags_scored",
    "flags_fixed",
    "controls_scored",
    "controls_kept",
    "live_model",
    *tradeoff.STREAM_CSV_COLUMNS,  # a streaming candidate's time to first partial and stability; p99s from 100 lines
    # A candidate's entities right on the bank's own lines (queries.entities): in all, then per category.
    "entities_n",
    "entities_right",
    "entity_accuracy",
    *(f"{entities.LABELS[c]}_{part}" for c in entities.CATEGORIES for part in ("n", "right")),
]
ENTITY_BLANK = [""] * (3 + 2 * len(entities.CATEGORIES))


def _entity_cells(own) -> list:
    """A candidate's entity columns (lib.entities.EntityAccuracy; blank for the other rows, or a snapshot kept
    before it had them)."""
    if own is None:
        return ENTITY_BLANK
    cells = [own.n, own.right, _fmt(own.accuracy)]
    for category in entities.CATEGORIES:
        count = own.of(category)
        cells += [count.n, count.right]
    return cells


def _lead_cells(summary, live_model=None) -> list:
    if summary is None:
        return ["", "", "", "", ""]
    f = summary_fields(summary, None)
    return [f["flags_scored"], f["flags_fixed"], f["controls_scored"], f["controls_kept"], _yes(live_model)]


def _fmt(x, places=4):
    return "" if x is None else round(x, places)


def _yes(value) -> str:
    return "" if value is None else ("yes" if value else "no")


def _summary_cells(transcriber, summary, interval):
    """The columns a candidate row and a live row share, from the transcriber to the mean WER."""
    f = summary_fields(summary, interval)
    lo, hi = (f["interval"]["low"], f["interval"]["high"]) if f["interval"] else (None, None)
    return [
        transcriber.display_name,
        transcriber.provider,
        transcriber.model,
        f["scored"],
        f["matches"],
        f["failed"],
        _fmt(f["accuracy"]),
        _fmt(lo),
        _fmt(hi),
        _fmt(f["mean_wer"]),
    ]


def results_rows(bank, window_days, group=None):
    """The candidates' rows (on the group's calls, with `group`), the live rows, the catalogue's other prices at
    the volume (`catalogue price`: never called on these lines), then each candidate's accuracy per tenant and
    per assistant (rows `tenant` and `assistant`, the whole bank's, as on the page)."""
    screen = snapshots.results_of(bank, window_days, group=group).data.screen
    r, choices = screen.results, screen.tradeoff
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
            *_lead_cells(card.summary, card.live_model),
            *tradeoff.stream_cells(by_id[card.transcriber.pk]),
            *_entity_cells((screen.own_entities or {}).get(card.transcriber.pk)),
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
            *_lead_cells(s),
            *tradeoff.stream_cells(),
            *ENTITY_BLANK,
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
            *_lead_cells(None),
            *tradeoff.stream_cells(),
            *ENTITY_BLANK,
        ]
    transcribers = [card.transcriber for card in r.cards]
    order = {card.transcriber.pk: card.position + 1 for card in r.cards}
    for by, table in (
        (queries.groups.TENANT, screen.by_tenant),
        (queries.groups.ASSISTANT, screen.by_assistant),
    ):
        for row in table.rows:
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
                    *_lead_cells(cell),
                    *tradeoff.stream_cells(),
                    *ENTITY_BLANK,
                ]


def results_csv(bank, window_days, group=None):
    return stream_csv(
        f"{slugify(bank.name)}-results.csv", RESULTS_COLUMNS, results_rows(bank, window_days, group)
    )


def turn_csv_rows(bank, window_days):
    """One CSV line per item and transcriber, in the turn table's order (newest flag first, each flag before its
    controls; within an item the candidates by transcriber id, then the live transcript). Each score's own cells
    were encoded when it was written (Score.csv_cells), so a line is its item's cells, the transcriber's name,
    those cells and the judge's pick. On PostgreSQL the database writes the lines (one query, read a chunk at a
    time through a server-side cursor, in one repeatable-read snapshot, so a flag made or deleted while the file
    streams cannot set them apart): memory stays flat at any bank size. Elsewhere (SQLite, one machine) the turn
    table's own reader (queries.all_turn_rows) gives the same lines, without a long read transaction that would
    hold back the queue's writes."""
    if connection.vendor != "postgresql":
        yield from _turn_csv_lines(bank, window_days)
        return
    if connection.in_atomic_block:
        yield from _turn_csv_lines_sql(bank, window_days)
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor.execute("SET LOCAL jit = off")  # compiling its expressions costs more than it saves here
        yield from _turn_csv_lines_sql(bank, window_days)


def _turn_csv_lines(bank, window_days):
    candidates = sorted((c.transcriber for c in queries.candidates_of(bank)), key=lambda t: t.pk)
    names = {
        t.pk: csv_line([safe_cell(t.display_name)])[:-2] for t in candidates
    }  # live ones join as they appear
    for row in queries.all_turn_rows(bank, window_days, candidates):
        item = csv_line(turns.row_cells(row))[:-2]
        pick = csv_line(turns.pick_cells(row.pick))  # with its line end
        for transcriber, cell in row.cells:  # in the order asked for: by transcriber id
            if cell is not None and not cell.waiting:
                yield f"{item},{names[transcriber.pk]},{turns.score_csv('candidate', cell)},{pick}"
        live = row.production
        if live.transcriber_id not in names:
            name = display_name(live.transcriber_id)
            names[live.transcriber_id] = csv_line([safe_cell(name)])[:-2]
        yield f"{item},{names[live.transcriber_id]},{turns.score_csv('live', live)},{pick}"


def _csv_sql(expr: str) -> str:
    """SQL writing a text cell as csv_line writes safe_cell(text): an apostrophe before a formula's first
    character, then quoted (quotes doubled) where it holds a comma, a quote or a line break."""
    safe = f"(CASE WHEN left({expr}, 1) IN ('=', '+', '-', '@', E'\\t', E'\\r') THEN '''' || {expr} ELSE {expr} END)"
    return (
        f"(CASE WHEN translate({safe}, E',\"\\r\\n', '') <> {safe} "
        f"THEN '\"' || replace({safe}, '\"', '\"\"') || '\"' ELSE {safe} END)"
    )


def _iso_sql(expr: str) -> str:
    """SQL writing a moment as oncore.formats.iso_time does: UTC, to the second, with a Z."""
    return f"coalesce(to_char({expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '')"


def _turn_csv_sql(table: dict) -> tuple[str, str]:
    """The turn-table CSV's two statements: its items in the table's order (the live scores list them), each
    with its cells up to the transcriber's and its judge's pick after them, written once per item; and the
    transcriber and cells of each score of some flags, each item's candidates by id, then its live one (the
    transcribers' names, few, are written once in Python)."""
    tags = "replace(trim(both ',' from f.tags), ',', ' ')"
    head = [
        "f.id::text",
        "CASE WHEN s.control_id IS NULL THEN 'flag' ELSE 'control' END",
        "coalesce(s.control_id::text, '')",
        "ln.call_id::text",
        "ln.id::text",
        _csv_sql("tn.name"),
        _iso_sql("cl.started_at"),
        _iso_sql("f.created_at"),
        _iso_sql("f.joined_at"),
        f"CASE WHEN s.control_id IS NULL THEN {_csv_sql(tags)} ELSE '' END",
        _csv_sql("coalesce(c.expected_text, f.expected_text)"),
        _csv_sql("ln.text"),
    ]
    pick = f"CASE WHEN p.chosen_id IS NULL THEN ',' ELSE {_csv_sql('pt.display_name')} || ',' || {_csv_sql('p.reasoning')} END"
    items = f"""
SELECT s.flag_id, coalesce(s.control_id, 0), {" || ',' || ".join(head)} || ',', ',' || {pick} || E'\\r\\n'
FROM {table["Score"]} s
JOIN {table["Flag"]} f ON f.id = s.flag_id
LEFT JOIN {table["ControlLine"]} c ON c.id = s.control_id
JOIN {table["Line"]} ln ON ln.id = coalesce(c.line_id, f.line_id)
JOIN {table["Call"]} cl ON cl.id = ln.call_id
JOIN {table["Tenant"]} tn ON tn.id = cl.tenant_id
LEFT JOIN {table["JudgePick"]} p ON p.flag_id = s.flag_id AND coalesce(p.control_id, 0) = coalesce(s.control_id, 0)
LEFT JOIN {table["Transcriber"]} pt ON pt.id = p.chosen_id
WHERE f.bank_id = %(bank)s AND f.joined_at >= %(since)s AND s.source = 'live'
ORDER BY f.joined_at DESC, s.flag_id DESC, s.control_id ASC NULLS FIRST
"""
    scores = f"""
SELECT s.flag_id, coalesce(s.control_id, 0), s.transcriber_id, s.csv_cells
FROM {table["Score"]} s
WHERE s.flag_id = ANY(%(flags)s) AND (s.source = 'live' OR s.transcriber_id = ANY(%(candidates)s))
ORDER BY s.flag_id, s.control_id ASC NULLS FIRST, s.source = 'live', s.transcriber_id
"""
    return items, scores


FETCH_ITEMS = 2000  # items the CSV reads from the database per round trip, with their scores


def _turn_csv_lines_sql(bank, window_days):
    since = queries.window_start(queries.clamp_window(window_days), bank.organization.zone)
    candidates = [c.transcriber for c in queries.candidates_of(bank)]
    names = {
        t.pk: csv_line([safe_cell(t.display_name)])[:-2] + "," for t in candidates
    }  # live ones as they come
    table = {
        m.__name__: m._meta.db_table
        for m in (Score, Flag, ControlLine, Line, Call, Tenant, Transcriber, JudgePick)
    }
    items_sql, scores_sql = _turn_csv_sql(table)
    with connection.chunked_cursor() as items, connection.cursor() as scores:
        items.execute(items_sql, {"bank": bank.pk, "since": since})
        while chunk := items.fetchmany(FETCH_ITEMS):
            scores.execute(scores_sql, {"flags": list({row[0] for row in chunk}), "candidates": list(names)})
            found = defaultdict(list)
            for flag_id, control, transcriber_id, cells in scores.fetchall():
                if transcriber_id not in names:
                    names[transcriber_id] = csv_line([safe_cell(display_name(transcriber_id))])[:-2] + ","
                found[flag_id, control].append(names[transcriber_id] + cells)
            for flag_id, control, head, tail in chunk:
                yield "".join(head + cells + tail for cells in found[flag_id, control])


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
