"""Thin django-q2 entry points for the entity benchmark. They take primary keys and are safe to run twice:
every clip is claimed with a conditional update before it is sent (see benchmark.executor)."""

import logging

from .. import executor
from ..models import BenchmarkRun
from . import actions, runs

log = logging.getLogger(__name__)


def run_benchmark(run_id: int) -> str:
    """Transcribe a run's clips for a third of the queue's task timeout, then hand the rest to a new task, so
    no task is killed mid-call by the queue's timeout. Returns the run's status."""
    budget = executor.lease_seconds() / 3
    try:
        outcome = runs.execute_run(run_id, time_budget_s=budget)
    except BenchmarkRun.DoesNotExist:
        return "missing"
    except executor.RunRefused as exc:
        log.warning("benchmark run %s refused: %s", run_id, exc)
        BenchmarkRun.objects.filter(pk=run_id).exclude(status=BenchmarkRun.DONE).update(
            status=BenchmarkRun.STOPPED
        )
        return "refused"
    if outcome.status == BenchmarkRun.STOPPED and outcome.queued:
        actions.enqueue_run(run_id)
    return outcome.status
