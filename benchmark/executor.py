"""The one run loop of both benchmarks: a catalogue transcriber over every clip of a dataset.

    run = create_run(WORK, dataset, transcriber, 2, **fields)  # one queued work item per clip
    outcome = execute(run, WORK)                            # resumable; `progress=ProgressBar(...)`
    run = start_run(WORK, dataset, transcriber, 2, **fields)   # created, then run by the queue (WORK.task)

WORK is the benchmark's Work: its models, what an item transcribes, the language sent with it, the columns
stored with its text and its queue task (entity/runs.py and codeswitch/runs.py each define one and wrap these
calls; benchmark/apps.py binds each task).

The work list is one work item per clip (benchmark.models.WorkItem: a Hypothesis, or a code-switching
CsResult), made when the run is created: an oncore.queue.WorkQueue (`Work.item_queue`). Each item is claimed
with a conditional UPDATE (queued -> running) before it is sent, and its result is written only while the claim
holds, so two executors on one run never send a clip twice, and a done item is never sent again: an interrupted
run continues where it stopped. On Ctrl-C the calls already in flight finish and are recorded (they are paid
for), an item whose call the interrupt cut short is given back, and the clips not yet sent stay queued. A
process that dies leaves its claimed items running; after the lease (the queue's task timeout) they are queued
again.

Retryable failures (rate limits, 5xx, timeouts) go back to the queue after oncore.queue's backoff
(ONCORE_RETRY_BACKOFF_S, doubled each attempt, never before the vendor's Retry-After) until
ONCORE["MAX_TRANSCRIPTION_ATTEMPTS"]; other failures are recorded at once. Threads only call the engine; the
database is written from the calling thread.
"""

import logging
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass

from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Count, Sum
from django.utils import timezone

from oncore import audio, queue
from oncore.config import config
from oncore.transcribers.engines import TranscriptionError, get_engine

from .models import Run

DEFAULT_CONCURRENCY = 2
MAX_CONCURRENCY = 32

log = logging.getLogger(__name__)


class RunRefused(Exception):
    """A run that cannot start, with what to do about it."""


@dataclass(frozen=True)
class Work:
    """What one benchmark's runs are made of; the executor does the rest."""

    name: str  # names the threads: "benchmark-run", "cs-run"
    run_model: type  # a benchmark.models.Run
    item_model: type  # a benchmark.models.WorkItem with a `run` foreign key and one to `source`
    source: str  # the item's foreign key to the clip it transcribes (a model with `dataset` and `audio`)
    counts: tuple[str, str, str]  # the run's columns for its total, done and failed items
    language: Callable  # (run, item) -> the language sent with the clip, None to let the engine detect it
    done_fields: Callable  # (item, result) -> more columns written with a done item's text (its scores)
    task: queue.Task  # the queue task that executes a run (run_id), bound by benchmark/apps.py

    @property
    def item_queue(self) -> queue.WorkQueue:
        """The run's work items as a queue (scope: run_id=...), due at not_before, with the queue task's lease."""
        return queue.WorkQueue(self.item_model, self.item_model.QUEUED, self.item_model.RUNNING)


@dataclass(frozen=True)
class Progress:
    run_id: int
    status: str
    total: int
    done: int
    failed: int
    queued: int
    running: int
    sent: int = 0  # engine calls made by this execution
    interrupted: bool = False

    @property
    def finished(self) -> int:
        return self.done + self.failed

    @property
    def left(self) -> int:
        return self.queued + self.running


def _max_attempts() -> int:
    return int(config().max_transcription_attempts)


def lease_seconds() -> float:
    """The queue's task timeout (oncore.queue.task_lease_s): a task's time budget is a third of it, and a claimed
    item is abandoned after it."""
    return queue.task_lease_s()


# ---------------------------------------------------------------- the work list


def check_start(transcriber, concurrency: int) -> None:
    """Raise RunRefused when the transcriber is disabled or cannot be built, or the concurrency is out of
    range."""
    if not transcriber.enabled:
        raise RunRefused(
            f"{transcriber.display_name} is disabled in the catalogue; enable it to run the benchmark."
        )
    try:
        get_engine(transcriber)
    except TranscriptionError as exc:
        raise RunRefused(exc.message) from exc
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise RunRefused(f"Concurrency must be between 1 and {MAX_CONCURRENCY}, not {concurrency}.")


def create_run(work: Work, dataset, transcriber, concurrency: int, **fields):
    """A new run of a catalogue transcriber over the dataset (with the benchmark's own `fields`), and one
    queued item per clip."""
    check_start(transcriber, concurrency)
    with transaction.atomic():
        run = work.run_model.objects.create(
            dataset=dataset,
            transcriber=transcriber,
            system_name=transcriber.slug,
            model=transcriber.model,
            concurrency=concurrency,
            **fields,
        )
        ensure_items(work, run)
    return run


def start_run(work: Work, dataset, transcriber, concurrency: int, **fields):
    """create_run, and the run handed to the queue (work.task) once the transaction commits."""
    with transaction.atomic():
        run = create_run(work, dataset, transcriber, concurrency, **fields)
        work.task.later(run.pk)
    return run


def ensure_items(work: Work, run) -> int:
    """One queued item per clip of the run's dataset (items that exist are kept); returns the clip count."""
    clips = work.item_model._meta.get_field(work.source).related_model
    ids = list(clips.objects.filter(dataset_id=run.dataset_id).values_list("id", flat=True))
    work.item_model.objects.bulk_create(
        [work.item_model(run=run, **{f"{work.source}_id": pk}) for pk in ids],
        ignore_conflicts=True,
        batch_size=500,
    )
    work.run_model.objects.filter(pk=run.pk).update(**{work.counts[0]: len(ids)})
    return len(ids)


def retry_failed(work: Work, run) -> int:
    """Queue a run's failed items again, with fresh attempts; returns how many."""
    items = work.item_model
    with transaction.atomic():
        count = items.objects.filter(run=run, status=items.FAILED).update(
            status=items.QUEUED, attempts=0, error="", not_before=None, claimed_at=None
        )
        if count:
            work.run_model.objects.filter(pk=run.pk).update(status=Run.STOPPED, finished_at=None)
    refresh_counts(work, run.pk)
    return count


def refresh_counts(work: Work, run_id: int) -> Progress:
    """Recount a run's items by status, store the counts and cost on the run, and return them."""
    items = work.item_model
    counts = dict(
        items.objects.filter(run_id=run_id)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    cost = items.objects.filter(run_id=run_id).aggregate(total=Sum("cost"))["total"] or 0
    total = sum(counts.values())
    done, failed = counts.get(items.DONE, 0), counts.get(items.FAILED, 0)
    work.run_model.objects.filter(pk=run_id).update(
        **dict(zip(work.counts, (total, done, failed), strict=True)), cost=cost
    )
    status = work.run_model.objects.values_list("status", flat=True).get(pk=run_id)
    return Progress(
        run_id, status, total, done, failed, counts.get(items.QUEUED, 0), counts.get(items.RUNNING, 0)
    )


# ---------------------------------------------------------------- audio


def clip_wav(clip) -> bytes:
    """The clip's audio as WAV for the engines: WAV clips as stored, other formats (FLAC, Ogg, MP3) decoded
    to 16-bit mono WAV at their own sample rate."""
    with default_storage.open(clip.audio.name, "rb") as fh:
        data = fh.read()
    info = audio.wav_info(data)
    if info.format.upper() == "WAV":
        return data
    return audio.encode_wav(audio.decode_wav_mono(data, target_rate=info.sample_rate), info.sample_rate)


# ---------------------------------------------------------------- claims


def claim_next(work: Work, run_id: int):
    """Claim the run's next queued item whose retry is due, with its clip loaded; None when none is ready."""
    pk = work.item_queue.claim_next(run_id=run_id)
    return None if pk is None else work.item_model.objects.select_related(work.source).get(pk=pk)


def record_outcome(work: Work, item, result=None, exc: BaseException | None = None, **done_fields) -> None:
    """Done with the engine's text (plus `done_fields`), queued again after a backoff when a retry can help,
    else failed with the reason. Written only while the claim holds."""
    q, failed = work.item_queue, work.item_model.FAILED
    if exc is None:
        q.finish(
            item,
            status=work.item_model.DONE,
            text=result.text,
            error="",
            cost=result.cost,
            latency_s=result.latency_s,
            **done_fields,
        )
    elif isinstance(exc, TranscriptionError) and exc.retryable and item.attempts < _max_attempts():
        again = q.retry_fields(item, float(config().retry_backoff_s), exc.retry_after)
        q.finish(item, error=f"attempt {item.attempts}: {exc.message}", **again)
    elif isinstance(exc, TranscriptionError | audio.AudioError):
        q.finish(item, status=failed, error=str(exc))
    else:
        q.finish(item, status=failed, error=f"Unexpected error: {type(exc).__name__}: {exc}")


# ---------------------------------------------------------------- executing


def _close(work: Work, run_id: int, sent: int, interrupted: bool) -> Progress:
    p = refresh_counts(work, run_id)
    runs = work.run_model.objects.filter(pk=run_id)
    if p.left == 0:
        runs.update(status=Run.DONE)
        runs.filter(finished_at__isnull=True).update(finished_at=timezone.now())
        status = Run.DONE
    elif p.running == 0:
        runs.update(status=Run.STOPPED)
        status = Run.STOPPED
    else:  # another executor holds items of this run
        status = Run.RUNNING
    return Progress(run_id, status, p.total, p.done, p.failed, p.queued, p.running, sent, interrupted)


def execute(
    run,
    work: Work,
    *,
    concurrency: int | None = None,
    max_items: int | None = None,
    time_budget_s: float | None = None,
    progress=None,
) -> Progress:
    """Transcribe the run's queued items, `concurrency` at a time, until none is left, or `max_items` have
    been sent, or `time_budget_s` has passed (one item is always sent): then the run stops and can be
    resumed. `progress(Progress)` is called after each item. A KeyboardInterrupt stops sending, records
    the calls in flight, and is re-raised with the outcome."""
    run_id, items = run.pk, work.item_model
    concurrency = concurrency or run.concurrency or DEFAULT_CONCURRENCY
    check_start(run.transcriber, concurrency)
    ensure_items(work, run)
    work.item_queue.reclaim_stale(run_id=run_id)
    if items.objects.filter(run_id=run_id, status=items.QUEUED).exists():
        work.run_model.objects.filter(pk=run_id).update(status=Run.RUNNING, finished_at=None)
        work.run_model.objects.filter(pk=run_id, started_at__isnull=True).update(started_at=timezone.now())
    engine = get_engine(run.transcriber)
    deadline = None if time_budget_s is None else time.monotonic() + time_budget_s
    sent = 0
    interrupted = False
    in_flight: dict = {}

    def may_send() -> bool:
        if interrupted or (max_items is not None and sent >= max_items):
            return False
        return deadline is None or sent == 0 or time.monotonic() < deadline  # each execution makes progress

    def collect(futures) -> None:
        nonlocal interrupted
        for future in futures:
            item = in_flight.pop(future)
            exc = future.exception()
            if exc is not None and not isinstance(exc, Exception):  # KeyboardInterrupt inside a call
                interrupted = True
                work.item_queue.release(item)
                continue
            result = None if exc else future.result()
            record_outcome(work, item, result, exc, **(work.done_fields(item, result) if exc is None else {}))
            if progress:
                progress(refresh_counts(work, run_id))

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"{work.name}-{run_id}")
    try:
        while True:
            while may_send() and len(in_flight) < concurrency:
                item = claim_next(work, run_id)
                if item is None:
                    break
                try:
                    wav = clip_wav(getattr(item, work.source))
                except (audio.AudioError, OSError) as exc:
                    error = f"The clip's audio cannot be read: {exc}"
                    work.item_queue.finish(item, status=items.FAILED, error=error)
                    continue
                in_flight[pool.submit(engine.transcribe, wav, language=work.language(run, item))] = item
                sent += 1
            if in_flight:
                done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                collect(done)
                continue
            if not may_send():
                break
            pause = work.item_queue.next_due_in(run_id=run_id)
            if pause is None:
                break
            if deadline is not None and time.monotonic() + pause > deadline:
                break
            time.sleep(min(pause, 5.0) or 0.05)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if in_flight:  # calls already made are paid for: wait for them and keep their results
            done, _ = wait(list(in_flight))
            collect(done)
        pool.shutdown(wait=True)
        outcome = _close(work, run_id, sent, interrupted)
    if interrupted:
        raise KeyboardInterrupt(outcome)
    return outcome


# ---------------------------------------------------------------- from the queue


def run_from_queue(work: Work, run_id: int, execute: Callable) -> str:
    """The body of a benchmark's queue task: `execute(run_id, time_budget_s=...)` for a third of the queue's
    task timeout, so no task is killed mid-call, then the task again (work.task) for the rest. Returns the run's
    status, "missing" for a deleted run, "refused" (the run is stopped) when it cannot go on."""
    run_model = work.run_model
    try:
        outcome = execute(run_id, time_budget_s=lease_seconds() / 3)
    except run_model.DoesNotExist:
        return "missing"
    except RunRefused as exc:
        log.warning("%s %s refused: %s", run_model.__name__, run_id, exc)
        run_model.objects.filter(pk=run_id).exclude(status=Run.DONE).update(status=Run.STOPPED)
        return "refused"
    if outcome.status == Run.STOPPED and outcome.queued:
        work.task.enqueue(run_id)
    return outcome.status


# ---------------------------------------------------------------- the commands' progress bar


class ProgressBar:
    """A text progress bar on a command's stderr: redrawn in place on a terminal, a line per 5% otherwise.
    Pass it as execute's `progress`, or call `show(finished, total)` for other work (the judge)."""

    WIDTH = 30

    def __init__(self, stream, label: str, unit: str = "clips"):
        self.stream = stream  # a command's OutputWrapper
        self.label = label  # "run 12"
        self.unit = unit
        self.started = time.monotonic()
        self.first = None
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.last_step = -1

    def __call__(self, p: Progress) -> None:
        self.show(p.finished, p.total, f" (done {p.done}, failed {p.failed})")

    def show(self, finished: int, total: int, detail: str = "") -> None:
        if self.first is None:
            self.first = finished - 1
        filled = int(self.WIDTH * finished / max(total, 1))
        elapsed = max(time.monotonic() - self.started, 1e-6)
        rate = (finished - self.first) / elapsed
        left = total - finished
        eta = f"{int(left / rate // 60)}m{int(left / rate % 60):02d}s" if rate > 0 else "?"
        line = (
            f"{self.label} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {finished}/{total}{detail} "
            f"{rate:.2f} {self.unit}/s, eta {eta}"
        )
        if self.tty:
            self.stream.write("\r" + line, ending="")
            self.stream.flush()
            return
        step = 20 * finished // max(total, 1)
        if step != self.last_step or finished == total:
            self.last_step = step
            self.stream.write(line)
            self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("")
