"""Thin django-q2 entry points for full-call runs and the judge's picks. They take primary keys, call
runs/picks, and are safe to run twice."""

import time

from . import jobs, picks, runs
from .models import Bank, Run, Transcription


def advance(run_id: int) -> str:
    """The run's next step: begin, compare once its transcriptions are in, or a batch of the judge."""
    return runs.advance(run_id)


def advance_all() -> int:
    """Every minute: nudge each queued or running run, so a lost task never strands one (a judging run whose
    worker still holds its claim is skipped by the step itself)."""
    ids = list(Run.objects.filter(status__in=Run.ACTIVE).values_list("pk", flat=True))
    for run_id in ids:
        jobs.enqueue("transcriber_tests.run_tasks.advance", run_id)
    return len(ids)


def transcription_finished(transcription_id: int) -> str:
    """Call once a line transcription is finished (done or failed): when it was the last one the organization's
    transcribing run waited for, the run compares at once instead of at the next minute's advance_all."""
    t = Transcription.objects.filter(pk=transcription_id).values("line_id", "organization_id", "status").first()
    if t is None or t["status"] not in runs.FINISHED:
        return "skipped"
    run = Run.objects.filter(organization_id=t["organization_id"], status=Run.TRANSCRIBING).first()
    if run is None or not run.lines.filter(line_id=t["line_id"]).exists():
        return "no run"
    needed = {run.candidate_id} | set(
        run.lines.filter(calibration=True).values_list("replay_transcriber_id", flat=True)
    )
    waiting = Transcription.objects.filter(
        line__run_lines__run=run, transcriber_id__in=needed, status__in=jobs.ACTIVE
    ).exists()
    return "waiting" if waiting else runs.compare(run.pk)


def fill_picks(bank_id: int) -> str:
    bank = Bank.objects.filter(pk=bank_id).first()
    if bank is None:
        return "no bank"
    result = picks.fill_picks(bank)
    return f"{result.picked} picked, {result.failed} failed, of {result.items} items"


def drain_run(run_id: int, max_seconds: float = 600.0) -> str:
    """Drive one run to its end in this process, running its line transcriptions here too (no worker
    needed): for `manage.py run_runs`, demos and tests. Returns the run's final status."""
    from . import tasks

    deadline = time.monotonic() + max_seconds
    while time.monotonic() < deadline:
        outcome = runs.advance(run_id)
        status = Run.objects.values_list("status", flat=True).get(pk=run_id)
        if status not in Run.ACTIVE:
            return status
        if outcome == "waiting":
            if not tasks.drain(max(1.0, deadline - time.monotonic())):
                # Nothing ran: retries wait for their backoff.
                time.sleep(0.2)
        elif outcome == "skipped" and status == Run.JUDGING:
            return status  # another worker holds the judge's claim
    return Run.objects.values_list("status", flat=True).get(pk=run_id)

