"""Thin django-q2 entry point for code-switching runs. It takes a primary key and is safe to run twice: every
clip is claimed with a conditional update before it is sent (see benchmark.executor)."""

from .. import executor
from . import runs


def run_codeswitch(run_id: int) -> str:
    """Transcribe and score a run's clips for a third of the queue's task timeout, then hand the rest to a new
    task. Returns the run's status."""
    return executor.run_from_queue(runs.WORK, run_id, runs.execute_run)
