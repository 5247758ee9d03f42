"""Every write a person asks for: the do_* functions, the same for the HTML views and the API (no view or router
writes a table itself), with the scores those writes cause.

    flags.py      flag a line, edit, move or delete a flag
    banks.py      banks and their candidates (with the candidate's backfill estimate)
    controls.py   control lines: drawn when a flag enters a bank, retired, drawn again (do_redraw)
    scores.py     the scores (the candidates' and the live transcript's) and each write's "results changed" mark
    runs.py       full-call runs: the estimate, start, cancel, retry the judge, review a line; run.finished
    synthetic.py  the benches' synthetic banks (bulk writes, for measuring only)

The writes no person asks for are elsewhere, each the only writer of its rows: the per-day totals, each item's
"candidates disagree" mark and each flag's check_expected mark (aggregates/, called from here in the transaction of
each write), the queue's claims and outcomes of transcriptions (work/jobs.py and work/replay.py; their dispatch in
handles.py), the judge's picks (work/picks.py), a run's steps (work/runs.py) and a bank's snapshots
(queries/snapshots.py). A write hands work to the queue through handles.py, never by importing work/.

The flags' and banks' writes are named here too, so `actions.do_flag_line` reads as the views and the API call it,
and the refusals they raise as `actions.errors`."""

from .. import errors
from .banks import (
    Estimate,
    do_add_candidate,
    do_create_bank,
    do_delete_bank,
    do_move_candidate,
    do_remove_candidate,
    do_reorder_candidates,
    do_set_timezone,
    do_update_bank,
    estimate_backfill,
)
from .flags import KEEP, do_delete_flag, do_edit_flag, do_flag_line, do_move_flag, settle, settle_waiting

__all__ = [
    "KEEP",
    "Estimate",
    "do_add_candidate",
    "do_create_bank",
    "do_delete_bank",
    "do_delete_flag",
    "do_edit_flag",
    "do_flag_line",
    "do_move_candidate",
    "do_move_flag",
    "do_remove_candidate",
    "do_reorder_candidates",
    "do_set_timezone",
    "do_update_bank",
    "errors",
    "estimate_backfill",
    "settle",
    "settle_waiting",
]
