"""Thin django-q2 entry points for the entity benchmark. They take primary keys and are safe to run twice:
every clip is claimed with a conditional update before it is sent (see benchmark.executor)."""

import logging

from .. import executor
from ..models import BenchmarkRun
from . import actions, runs

log = logging.getLogger(__name__)


def run_benchmark(run_id: int) -> str:
    """Transcribe a run's clips for a third of the queue's task timeout, then hand the rest to a new task, so
    no task is killed mid-call by the queue's timeout. A run that finishes is scored (tier A, as its page's
    Score button does) unless it already was. Returns the run's status."""
    status = executor.run_from_queue(runs.WORK, run_id, runs.execute_run)
    if status == BenchmarkRun.DONE:
        run = BenchmarkRun.objects.get(pk=run_id)
        if run.scored_at is None:
            try:
                actions.score_run(run)
            except actions.ScoringRefused as exc:
                log.warning("benchmark run %s finished but was not scored: %s", run_id, exc)
    return status
