"""Run a catalogue transcriber over every clip of a benchmark dataset.

    run = create_run(dataset, transcriber)        # or resumable_run(dataset, transcriber)
    outcome = execute_run(run.pk, concurrency=2)  # from the command, or the django-q2 task

Hypothesis rows are the work list, one per clip, made when the run is created. Each clip is claimed with a
conditional UPDATE (queued -> running) before it is sent, and its result is written only while the claim
holds, so two executors on one run never send a clip twice, and a clip with a done hypothesis is never sent
again: an interrupted run continues where it stopped. On Ctrl-C the calls already in flight finish and are
recorded (they are paid for); the clips not yet sent stay queued. A process that dies leaves its claimed
clips running; after the lease (the queue's task timeout) they are queued again.

Retryable failures (rate limits, 5xx, timeouts) go back to the queue with an exponential backoff until
ONCORE["MAX_TRANSCRIPTION_ATTEMPTS"]; other failures are recorded at once. Threads only call the engine; the
database is written from the calling thread.
"""

import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from oncore import audio
from oncore.transcribers.engines import TranscriptionError, get_engine

from .models import BenchmarkRun, Clip, Hypothesis

LANGUAGE = "en"
DEFAULT_CONCURRENCY = 2
MAX_CONCURRENCY = 32


class RunRefused(Exception):
    """A run that cannot start, with what to do about it."""


@dataclass(frozen=True)
class RunProgress:
    run_id: int
    status: str
    total: int
    done: int
    failed: int
    queued: int
    running: int
    sent: int  # engine calls made by this execution
    interrupted: bool = False

    @property
    def finished(self) -> int:
        return self.done + self.failed


def _max_attempts() -> int:
    return int(settings.ONCORE["MAX_TRANSCRIPTION_ATTEMPTS"])


def _backoff_s(attempts: int, retry_after: float | None) -> float:
    base = float(settings.ONCORE["RETRY_BACKOFF_S"]) * 2 ** max(attempts - 1, 0)
    return max(base, retry_after or 0.0)


def lease_seconds() -> int:
    return int(settings.Q_CLUSTER["timeout"])


# ---------------------------------------------------------------- creating and finding runs


def _check_transcriber(transcriber) -> None:
    if not transcriber.enabled:
        raise RunRefused(
            f"{transcriber.display_name} is disabled in the catalogue; enable it to run the benchmark."
        )
    try:
        get_engine(transcriber)
    except TranscriptionError as exc:
        raise RunRefused(exc.message) from exc


def create_run(
    dataset, transcriber, *, formatting: bool | None = None, concurrency: int = DEFAULT_CONCURRENCY
):
    """A new run of a catalogue transcriber, with one queued hypothesis per clip."""
    _check_transcriber(transcriber)
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise RunRefused(f"Concurrency must be between 1 and {MAX_CONCURRENCY}, not {concurrency}.")
    with transaction.atomic():
        run = BenchmarkRun.objects.create(
            dataset=dataset,
            source=BenchmarkRun.CATALOGUE,
            transcriber=transcriber,
            system_name=transcriber.slug,
            model=transcriber.model,
            formatting=formatting,
            concurrency=concurrency,
        )
        ensure_hypotheses(run)
    return run


def resumable_run(dataset, transcriber) -> BenchmarkRun | None:
    """The latest run of this transcriber on this dataset that has clips left to transcribe."""
    return (
        BenchmarkRun.objects.filter(dataset=dataset, transcriber=transcriber, source=BenchmarkRun.CATALOGUE)
        .exclude(status=BenchmarkRun.DONE)
        .order_by("-created_at", "-id")
        .first()
    )


def ensure_hypotheses(run) -> int:
    """One queued hypothesis per clip of the dataset (rows that exist are kept); returns the clip count."""
    clip_ids = list(Clip.objects.filter(dataset_id=run.dataset_id).values_list("id", flat=True))
    Hypothesis.objects.bulk_create(
        [Hypothesis(run=run, clip_id=pk) for pk in clip_ids], ignore_conflicts=True, batch_size=500
    )
    BenchmarkRun.objects.filter(pk=run.pk).update(clips_total=len(clip_ids))
    return len(clip_ids)


def retry_failed(run) -> int:
    """Queue a run's failed clips again, with fresh attempts; returns how many."""
    with transaction.atomic():
        count = Hypothesis.objects.filter(run=run, status=Hypothesis.FAILED).update(
            status=Hypothesis.QUEUED, attempts=0, error="", not_before=None, claimed_at=None
        )
        if count:
            BenchmarkRun.objects.filter(pk=run.pk).update(status=BenchmarkRun.STOPPED, finished_at=None)
    refresh_counts(run.pk)
    return count


def refresh_counts(run_id: int) -> RunProgress:
    """Recount a run's clips by status, store the counts and cost on the run, and return them."""
    counts = dict(
        Hypothesis.objects.filter(run_id=run_id)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    cost = Hypothesis.objects.filter(run_id=run_id).aggregate(total=Sum("cost"))["total"] or 0
    total = sum(counts.values())
    done, failed = counts.get(Hypothesis.DONE, 0), counts.get(Hypothesis.FAILED, 0)
    BenchmarkRun.objects.filter(pk=run_id).update(
        clips_total=total, clips_done=done, clips_failed=failed, cost=cost
    )
    status = BenchmarkRun.objects.values_list("status", flat=True).get(pk=run_id)
    return RunProgress(
        run_id,
        status,
        total,
        done,
        failed,
        counts.get(Hypothesis.QUEUED, 0),
        counts.get(Hypothesis.RUNNING, 0),
        0,
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


# ---------------------------------------------------------------- executing


def claim_next(model, run_id: int, related: str):
    """Claim the run's next queued work item (a Hypothesis, or a code-switching CsResult) whose retry is due,
    with `related` loaded; None when none is ready."""
    now = timezone.now()
    ready = (
        model.objects.filter(run_id=run_id, status=model.QUEUED)
        .filter(Q(not_before__isnull=True) | Q(not_before__lte=now))
        .order_by("id")
        .values_list("id", flat=True)[:8]
    )
    for pk in list(ready):
        claimed = model.objects.filter(pk=pk, status=model.QUEUED).update(
            status=model.RUNNING, claimed_at=now, attempts=F("attempts") + 1
        )
        if claimed:
            return model.objects.select_related(related).get(pk=pk)
    return None


def next_retry_wait(model, run_id: int) -> float | None:
    """Seconds until the run's earliest queued retry is due; None when nothing is queued."""
    first = (
        model.objects.filter(run_id=run_id, status=model.QUEUED)
        .order_by(F("not_before").asc(nulls_first=True))
        .values_list("not_before", flat=True)
        .first()
    )
    if first is None:
        exists = model.objects.filter(run_id=run_id, status=model.QUEUED, not_before__isnull=True).exists()
        return 0.0 if exists else None
    return max(0.0, (first - timezone.now()).total_seconds())


def reclaim_stale(model, run_id: int) -> int:
    """Queue again the run's items claimed longer ago than the lease (their executor died)."""
    stale = timezone.now() - timedelta(seconds=lease_seconds())
    return model.objects.filter(run_id=run_id, status=model.RUNNING, claimed_at__lt=stale).update(
        status=model.QUEUED, claimed_at=None
    )


def finish_claimed(item, **fields) -> bool:
    """Write an outcome on a claimed work item (a Hypothesis, or a code-switching CsResult) only while this
    executor still holds the claim."""
    model = type(item)
    return bool(
        model.objects.filter(pk=item.pk, status=model.RUNNING, claimed_at=item.claimed_at).update(
            claimed_at=None, updated_at=timezone.now(), **fields
        )
    )


def record_outcome(item, result=None, exc: BaseException | None = None, **done_fields) -> None:
    """Done with the engine's text (plus `done_fields`), queued again after a backoff when a retry can help,
    else failed with the reason."""
    model = type(item)
    if exc is None:
        finish_claimed(item, status=model.DONE, text=result.text, error="", cost=result.cost,
                       latency_s=result.latency_s, **done_fields)
    elif isinstance(exc, TranscriptionError) and exc.retryable and item.attempts < _max_attempts():
        due = timezone.now() + timedelta(seconds=_backoff_s(item.attempts, exc.retry_after))
        finish_claimed(item, status=model.QUEUED, error=f"attempt {item.attempts}: {exc.message}", not_before=due)
    elif isinstance(exc, TranscriptionError | audio.AudioError):
        finish_claimed(item, status=model.FAILED, error=str(exc))
    else:
        finish_claimed(item, status=model.FAILED, error=f"Unexpected error: {type(exc).__name__}: {exc}")


def _release(h: Hypothesis) -> None:
    """Give back a claimed clip that was never sent."""
    Hypothesis.objects.filter(pk=h.pk, status=Hypothesis.RUNNING, claimed_at=h.claimed_at).update(
        status=Hypothesis.QUEUED, claimed_at=None, attempts=F("attempts") - 1
    )


def _close_run(run_id: int, sent: int, interrupted: bool) -> RunProgress:
    progress = refresh_counts(run_id)
    now = timezone.now()
    if progress.queued == 0 and progress.running == 0:
        BenchmarkRun.objects.filter(pk=run_id).update(status=BenchmarkRun.DONE)
        BenchmarkRun.objects.filter(pk=run_id, finished_at__isnull=True).update(finished_at=now)
        status = BenchmarkRun.DONE
    elif progress.running == 0:
        BenchmarkRun.objects.filter(pk=run_id).update(status=BenchmarkRun.STOPPED)
        status = BenchmarkRun.STOPPED
    else:  # another executor holds clips of this run
        status = BenchmarkRun.RUNNING
    return RunProgress(
        run_id,
        status,
        progress.total,
        progress.done,
        progress.failed,
        progress.queued,
        progress.running,
        sent,
        interrupted,
    )


def execute_run(
    run_id: int,
    *,
    concurrency: int | None = None,
    max_clips: int | None = None,
    time_budget_s: float | None = None,
    progress=None,
) -> RunProgress:
    """Transcribe the run's queued clips, `concurrency` at a time, until none is left, or `max_clips` have
    been sent, or `time_budget_s` has passed (one clip is always sent): then the run stops and can be
    resumed. `progress(RunProgress)` is called after each clip. A KeyboardInterrupt stops sending, records
    the calls in flight, and is re-raised."""
    run = BenchmarkRun.objects.select_related("transcriber").get(pk=run_id)
    if run.source != BenchmarkRun.CATALOGUE or run.transcriber is None:
        raise RunRefused(f"Run {run_id} holds imported hypotheses; there is nothing to transcribe.")
    _check_transcriber(run.transcriber)
    concurrency = concurrency or run.concurrency or DEFAULT_CONCURRENCY
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise RunRefused(f"Concurrency must be between 1 and {MAX_CONCURRENCY}, not {concurrency}.")
    ensure_hypotheses(run)
    reclaim_stale(Hypothesis, run_id)
    if Hypothesis.objects.filter(run_id=run_id, status=Hypothesis.QUEUED).exists():
        BenchmarkRun.objects.filter(pk=run_id).update(status=BenchmarkRun.RUNNING, finished_at=None)
        BenchmarkRun.objects.filter(pk=run_id, started_at__isnull=True).update(started_at=timezone.now())
    engine = get_engine(run.transcriber)
    deadline = None if time_budget_s is None else time.monotonic() + time_budget_s
    sent = 0
    interrupted = False
    in_flight: dict = {}

    def may_send() -> bool:
        if interrupted or (max_clips is not None and sent >= max_clips):
            return False
        return deadline is None or sent == 0 or time.monotonic() < deadline  # each execution makes progress

    def collect(futures) -> None:
        nonlocal interrupted
        for future in futures:
            h = in_flight.pop(future)
            exc = future.exception()
            if exc is not None and not isinstance(exc, Exception):  # KeyboardInterrupt inside a call
                interrupted = True
                _release(h)
                continue
            record_outcome(h, None if exc else future.result(), exc)
            if progress:
                progress(refresh_counts(run_id))

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"benchmark-run-{run_id}")
    try:
        while True:
            while may_send() and len(in_flight) < concurrency:
                h = claim_next(Hypothesis, run_id, "clip")
                if h is None:
                    break
                try:
                    wav = clip_wav(h.clip)
                except (audio.AudioError, OSError) as exc:
                    finish_claimed(h, status=Hypothesis.FAILED, error=f"The clip's audio cannot be read: {exc}")
                    continue
                in_flight[pool.submit(engine.transcribe, wav, language=LANGUAGE)] = h
                sent += 1
            if in_flight:
                done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                collect(done)
                continue
            if not may_send():
                break
            pause = next_retry_wait(Hypothesis, run_id)
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
        outcome = _close_run(run_id, sent, interrupted)
    if interrupted:
        raise KeyboardInterrupt(outcome)
    return outcome
