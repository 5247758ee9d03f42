"""Thin django-q2 entry points of full-call runs. They take primary keys, call the pipeline, and are safe to run
twice (advance_all runs from the schedule "oncore-runs", see migrations 0003 and 0005). `drain_run` drives a run
in this process for commands, demos and tests."""

import time

from oncore import queue

from ..models import Run
from ..work import jobs
from ..work import runs as pipeline
from ..work import tasks as line_tasks


def advance(run_id: int) -> str:
    """The run's next step: begin, compare once its transcriptions are in, or a batch of the judge."""
    return pipeline.advance(run_id)


def advance_all() -> int:
    """Every minute: nudge each queued or running run, so a lost task never strands one (a judging run whose
    worker still holds its claim is skipped by the step itself)."""
    ids = list(Run.objects.filter(status__in=Run.ACTIVE).values_list("pk", flat=True))
    for run_id in ids:
        queue.enqueue(advance, run_id, group=jobs.GROUP)
    return len(ids)


def transcription_finished(transcription_id: int) -> str:
    """Call once a line transcription is finished (done or failed): when it was the last one the organization's
    transcribing run waited for, the run compares at once instead of at the next minute's advance_all."""
    return pipeline.compare_when_ready(transcription_id)


def drain_run(run_id: int, max_seconds: float = 600.0) -> str:
    """Drive one run to its end in this process, running its line transcriptions here too (no worker
    needed): for `manage.py run_runs`, demos and tests. Returns the run's final status."""
    deadline = time.monotonic() + max_seconds
    while time.monotonic() < deadline:
        outcome = pipeline.advance(run_id)
        status = Run.objects.values_list("status", flat=True).get(pk=run_id)
        if status not in Run.ACTIVE:
            return status
        if outcome == "waiting":
            if not line_tasks.drain(max(1.0, deadline - time.monotonic())):
                # Nothing ran: retries wait for their backoff.
                time.sleep(0.2)
        elif outcome == "skipped" and status == Run.JUDGING:
            return status  # another worker holds the judge's claim
    return Run.objects.values_list("status", flat=True).get(pk=run_id)
