"""Every django-q2 entry point of transcriber testing. Each takes primary keys, is safe to run twice, and hands the
work to the module that owns it: a line transcription (replay.py, on the queue mechanics of jobs.py), the judge's
picks (picks.py), the webhook events (events.py), a full-call run's next step (runs.py), a bank's snapshots
(queries/snapshots.py), a call's flag boxes (queries/boxes.py), the rest of making a flag its request left
(actions/flags.settle). The schedules run `pump_all` ("oncore-pump") and `advance_all` ("oncore-runs") every minute
(migrations 0002, 0003 and 0020). `drain` and `drain_run` run the queue in this process for commands, demos and
tests."""

import time

from oncore import llm, queue

from .. import handles
from ..actions import flags
from ..models import Bank, Run
from ..queries import boxes, snapshots
from . import events, jobs, picks, replay, runs


def transcribe(pk: int) -> str:
    """The queue task: the outcome of the dispatched row ("skipped" if another delivery has it)."""
    outcomes = replay.transcribe_chain(pk)
    return outcomes[0] if outcomes else "skipped"


def pick_line(line_id: int) -> int:
    picked = picks.maybe_pick_line(line_id)
    boxes.build_line(line_id)
    return picked


def fill_picks(bank_id: int) -> str:
    bank = Bank.objects.filter(pk=bank_id).first()
    if bank is None:
        return "no bank"
    result = picks.fill_picks(bank)
    return f"{result.picked} picked, {result.failed} failed, of {result.items} items"


SETTLE_LOST_S = 60.0  # a flag unsettled this long lost its task: the schedule settles it


def pump_all() -> int:
    """The minutely schedule ("oncore-pump"): settle the flags whose task was lost, dispatch ready rows and recover
    abandoned ones, then queue the catch-up of judge picks left unasked and the check of banks' leaders for
    webhooks; hand over the rebuilds of banks' figures that are due (snapshots.sweep)."""
    flags.settle_waiting(older_than_s=SETTLE_LOST_S)
    dispatched = jobs.pump_all()
    snapshots.sweep()
    if llm.judge_configured():
        queue.enqueue(catch_up_picks, group=handles.GROUP)
    queue.enqueue(check_leaders, group=handles.GROUP)
    return dispatched


def announce_scores(line_ids) -> int:
    return events.announce_scores(line_ids)


def check_leaders() -> int:
    return events.check_leaders()


def catch_up_picks() -> int:
    return picks.catch_up()


def rebuild_snapshots(bank_id: int) -> int:
    return snapshots.rebuild(bank_id)


def build_boxes(call_id: int) -> int:
    return boxes.build([call_id])


def settle_flag(flag_id: int) -> bool:
    settled = flags.settle(flag_id)
    boxes.build_flag(flag_id)
    return settled


def drain(max_seconds: float = 600.0) -> int:
    """Settle the flags waiting for it, run every dispatched transcription in this process until nothing is
    ready, then rebuild the figures of the banks whose results changed. For `manage.py run_queue`, demos and
    tests; workers do the same job in production. Returns how many transcription attempts ran."""
    deadline = time.monotonic() + max_seconds
    ran = 0
    flags.settle_waiting()
    while time.monotonic() < deadline:
        jobs.pump_all()
        ids = jobs.dispatched_ids()
        if not ids:
            break
        for pk in ids:
            ran += len(replay.transcribe_chain(pk))
    snapshots.drain()
    return ran


def advance(run_id: int) -> str:
    """The run's next step: begin, compare once its transcriptions are in, or a batch of the judge."""
    return runs.advance(run_id)


def advance_all() -> int:
    """Every minute: nudge each queued or running run, so a lost task never strands one (a judging run whose
    worker still holds its claim is skipped by the step itself)."""
    ids = list(Run.objects.filter(status__in=Run.ACTIVE).values_list("pk", flat=True))
    for run_id in ids:
        queue.enqueue(advance, run_id, group=handles.GROUP)
    return len(ids)


def transcription_finished(transcription_id: int) -> str:
    """Call once a line transcription is finished (done or failed): when it was the last one the organization's
    transcribing run waited for, the run compares at once instead of at the next minute's advance_all."""
    return runs.compare_when_ready(transcription_id)


def drain_run(run_id: int, max_seconds: float = 600.0) -> str:
    """Drive one run to its end in this process, running its line transcriptions here too (no worker
    needed): for `manage.py run_runs`, demos and tests. Returns the run's final status."""
    deadline = time.monotonic() + max_seconds
    while time.monotonic() < deadline:
        outcome = runs.advance(run_id)
        status = Run.objects.values_list("status", flat=True).get(pk=run_id)
        if status not in Run.ACTIVE:
            return status
        if outcome == "waiting":
            if not drain(max(1.0, deadline - time.monotonic())):
                # Nothing ran: retries wait for their backoff.
                time.sleep(0.2)
        elif outcome == "skipped" and status == Run.JUDGING:
            return status  # another worker holds the judge's claim
    return Run.objects.values_list("status", flat=True).get(pk=run_id)
