"""Thin django-q2 entry points of line transcriptions and the judge's picks. They take primary keys, are safe to
run twice, and hand the work to the modules that own it: the transcription workflow (replay.py, on the queue
mechanics of jobs.py), the judge's picks (picks.py), the webhook events (events.py). `drain` runs the queue in
this process for commands, demos and tests. Full-call runs have their own entry points in runs/tasks.py."""

import time

from oncore import llm, queue

from .. import snapshots
from ..models import Bank
from . import events, jobs, picks, replay


def transcribe(pk: int) -> str:
    """The queue task: the outcome of the dispatched row ("skipped" if another delivery has it)."""
    outcomes = replay.transcribe_chain(pk)
    return outcomes[0] if outcomes else "skipped"


def pick_line(line_id: int) -> int:
    return picks.maybe_pick_line(line_id)


def fill_picks(bank_id: int) -> str:
    bank = Bank.objects.filter(pk=bank_id).first()
    if bank is None:
        return "no bank"
    result = picks.fill_picks(bank)
    return f"{result.picked} picked, {result.failed} failed, of {result.items} items"


def pump_all() -> int:
    """The minutely schedule ("oncore-pump"): dispatch ready rows and recover abandoned ones, then queue the
    catch-up of judge picks left unasked and the check of banks' leaders for webhooks; hand over the rebuilds of
    banks' figures that are due (snapshots.sweep)."""
    dispatched = jobs.pump_all()
    snapshots.sweep()
    if llm.judge_configured():
        queue.enqueue(catch_up_picks, group=jobs.GROUP)
    queue.enqueue(check_leaders, group=jobs.GROUP)
    return dispatched


def announce_scores(line_ids) -> int:
    return events.announce_scores(line_ids)


def check_leaders() -> int:
    return events.check_leaders()


def catch_up_picks() -> int:
    return picks.catch_up()


def drain(max_seconds: float = 600.0) -> int:
    """Run every dispatched transcription in this process until nothing is ready, then rebuild the figures of the
    banks whose results changed. For `manage.py run_queue`, demos and tests; workers do the same job in
    production. Returns how many transcription attempts ran."""
    deadline = time.monotonic() + max_seconds
    ran = 0
    while time.monotonic() < deadline:
        jobs.pump_all()
        ids = jobs.dispatched_ids()
        if not ids:
            break
        for pk in ids:
            ran += len(replay.transcribe_chain(pk))
    snapshots.drain()
    return ran
