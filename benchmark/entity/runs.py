"""Run a catalogue transcriber over every clip of an entity benchmark dataset.

    run = create_run(dataset, transcriber)        # or resumable_run(dataset, transcriber)
    outcome = execute_run(run.pk, concurrency=2)  # from the command, or the django-q2 task
    run = start_run(dataset, transcriber)         # from a page: created, then run by the queue (tasks.py)

Hypothesis rows are the work list, one per clip, made when the run is created; benchmark.executor claims,
sends, retries and records them (resumable, safe to run twice). Every clip is sent in English.
"""

from oncore import queue

from .. import executor
from ..executor import DEFAULT_CONCURRENCY, RunRefused
from ..models import BenchmarkRun, Hypothesis

LANGUAGE = "en"

WORK = executor.Work(
    name="benchmark-run",
    run_model=BenchmarkRun,
    item_model=Hypothesis,
    source="clip",
    counts=("clips_total", "clips_done", "clips_failed"),
    language=lambda run, item: LANGUAGE,
    done_fields=lambda item, result: {},
    # tasks.run_benchmark(run_id), bound by benchmark/apps.py: it imports this module.
    task=queue.Task("transcribes an entity benchmark run's clips", group="benchmark"),
)


def create_run(
    dataset, transcriber, *, formatting: bool | None = None, concurrency: int = DEFAULT_CONCURRENCY
):
    """A new run of a catalogue transcriber, with one queued hypothesis per clip."""
    return executor.create_run(
        WORK, dataset, transcriber, concurrency, source=BenchmarkRun.CATALOGUE, formatting=formatting
    )


def start_run(
    dataset, transcriber, *, formatting: bool | None = None, concurrency: int = DEFAULT_CONCURRENCY
) -> BenchmarkRun:
    """create_run, handed to the queue once the transaction commits (executor.start_run)."""
    return executor.start_run(
        WORK, dataset, transcriber, concurrency, source=BenchmarkRun.CATALOGUE, formatting=formatting
    )


def resumable_run(dataset, transcriber) -> BenchmarkRun | None:
    """The latest run of this transcriber on this dataset that has clips left to transcribe."""
    return (
        BenchmarkRun.objects.filter(dataset=dataset, transcriber=transcriber, source=BenchmarkRun.CATALOGUE)
        .exclude(status=BenchmarkRun.DONE)
        .order_by("-created_at", "-id")
        .first()
    )


def retry_failed(run) -> int:
    """Queue a run's failed clips again, with fresh attempts; returns how many."""
    return executor.retry_failed(WORK, run)


def refresh_counts(run_id: int) -> executor.Progress:
    return executor.refresh_counts(WORK, run_id)


def execute_run(
    run_id: int,
    *,
    concurrency: int | None = None,
    max_clips: int | None = None,
    time_budget_s: float | None = None,
    progress=None,
) -> executor.Progress:
    """Transcribe the run's queued clips (see executor.execute); imported runs have nothing to transcribe."""
    run = BenchmarkRun.objects.select_related("transcriber").get(pk=run_id)
    if run.source != BenchmarkRun.CATALOGUE or run.transcriber is None:
        raise RunRefused(f"Run {run_id} holds imported hypotheses; there is nothing to transcribe.")
    return executor.execute(
        run,
        WORK,
        concurrency=concurrency,
        max_items=max_clips,
        time_budget_s=time_budget_s,
        progress=progress,
    )
