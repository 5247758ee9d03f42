"""Every read. The views, the API routers, the webhook events, the CSV files and the queue's work read the tables
through these, and find what a request names through lookups.py (one function per model, scoped to the
organization). One module per screen or feature:

    calls.py      the calls list, a call's lines, a line's clip; the catalogue and the assistants
    lines.py      the rules of lines: which can be flagged or replayed, which transcriber a call ran on
    flags.py      the flags lists, the flag form's preselected bank, a flag's results per candidate
    board.py      the leaderboard, the banks with their candidates
    results.py    a bank's cards, trends, tags and languages; turns.py, the turn table
    trust.py      how far to trust a lead; confusion.py, reference_check.py, people.py beside it
    latency.py, cost.py, pacing.py, tradeoff.py, groups.py   beside accuracy, and per tenant and assistant
    runs.py       full-call runs; picks.py, the judge's picks; events.py, what the webhook events read
    jobs.py       the queue as a page shows it; snapshots.py, a bank's figures kept by key (and rebuilt)
    totals.py, window.py, cached.py, filters.py   the per-day totals, the windows of days, the cache, filters

The names most callers use are named here (`queries.bank_results`, ...)."""

from ..lib import cells
from ..lib.cells import ScoreCell
from . import cost, groups, latency, totals, tradeoff
from .board import (
    BoardRow,
    banks_list,
    candidates_of,
    leaderboard,
)
from .calls import (
    CALL_PAGE_LINES,
    EXACT_COUNT_UP_TO,
    CallCursor,
    CallScreen,
    CallsPage,
    LineRow,
    assistants_of,
    call_lines_page,
    call_screen,
    calls_list,
    calls_of,
    calls_page,
    catalogue,
    count_about,
    line_clip,
    line_rows,
    line_screen,
    new_flag_screen,
)
from .flags import (
    FlagResults,
    flag_results,
    flags_list,
    remembered_bank,
)
from .results import (
    LANGUAGE_CACHE_SECONDS,
    LANGUAGE_SAMPLE,
    LIVE_MODEL_REASON,
    LIVE_REASON,
    MAX_TAGS,
    NO_WORDS,
    NOTHING_CAME_BACK,
    RESULTS_CACHE_SECONDS,
    BankResults,
    Card,
    ResultsFrame,
    ResultsScreen,
    TagRow,
    TagTable,
    Trend,
    bank_groups,
    bank_language_wer,
    bank_languages,
    bank_results,
    bank_tags,
    bank_trends,
    failure_reasons,
    lead_test,
    pending_for_bank,
    results_frame,
    results_screen,
)
from .turns import (
    KnownCount,
    TurnRow,
    TurnScreen,
    all_turn_rows,
    row_version,
    turn_items,
    turn_rows,
    turn_screen,
)
from .window import (
    DEFAULT_WINDOW_DAYS,
    EPOCH,
    MAX_WINDOW_DAYS,
    clamp_window,
    period_bounds,
    window_days_covered,
    window_start,
)

__all__ = [
    "assistants_of",
    "catalogue",
    "CallScreen",
    "call_screen",
    "line_screen",
    "new_flag_screen",
    "ResultsScreen",
    "results_screen",
    "ResultsFrame",
    "results_frame",
    "TurnScreen",
    "turn_screen",
    "cells",
    "cost",
    "groups",
    "latency",
    "totals",
    "tradeoff",
    "bank_groups",
    "ScoreCell",
    "all_turn_rows",
    "BoardRow",
    "banks_list",
    "candidates_of",
    "leaderboard",
    "CALL_PAGE_LINES",
    "EXACT_COUNT_UP_TO",
    "CallCursor",
    "CallsPage",
    "LineRow",
    "call_lines_page",
    "calls_list",
    "calls_of",
    "calls_page",
    "count_about",
    "line_clip",
    "line_rows",
    "FlagResults",
    "flag_results",
    "flags_list",
    "remembered_bank",
    "LANGUAGE_CACHE_SECONDS",
    "LANGUAGE_SAMPLE",
    "LIVE_REASON",
    "LIVE_MODEL_REASON",
    "MAX_TAGS",
    "NO_WORDS",
    "NOTHING_CAME_BACK",
    "RESULTS_CACHE_SECONDS",
    "BankResults",
    "Card",
    "TagRow",
    "TagTable",
    "Trend",
    "bank_language_wer",
    "bank_languages",
    "bank_results",
    "bank_tags",
    "bank_trends",
    "failure_reasons",
    "lead_test",
    "pending_for_bank",
    "KnownCount",
    "TurnRow",
    "turn_items",
    "turn_rows",
    "row_version",
    "DEFAULT_WINDOW_DAYS",
    "EPOCH",
    "MAX_WINDOW_DAYS",
    "clamp_window",
    "period_bounds",
    "window_days_covered",
    "window_start",
]
