"""Run a catalogue transcriber over a code-switched dataset, score every utterance, then judge it.

    run = create_run(dataset, transcriber, language_hint=False)
    progress = execute_run(run.pk, concurrency=2)   # transcribes and scores; resumable
    judged = cs_judge.judge_run(run.pk)             # semantic WER and answer error rate (needs the judge)

The work list is one CsResult per clip, claimed with a conditional UPDATE (queued -> running) before it is
sent and written only while the claim holds, as in benchmark.runs (whose transcriber checks, retry backoff,
lease and audio reading are reused): two executors never send a clip twice, a done clip is never sent
again, and a stopped run continues where it stopped. Threads only call the engine; the database is written
from the calling thread.

Language hint: with `language_hint=True` each clip is sent with its language: English for the monolingual
English condition, the matrix language for the other two (a code-switched clip is mostly the matrix
language). Without it the engine gets language=None and detects the language itself. English-only models
(Whisper tiny.en) always transcribe as English whatever the hint.

Scores are written with the hypothesis (`score_fields`): word errors after the OnCore normalization, errors
per language (substitutions and deletions charged to the language of the reference word; insertions left
out) and where the errors fall (matrix, embedded, language-independent words), using the clip's stored tags.
"""

import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass

from django.db import transaction
from django.db.models import Count, Sum
from django.utils import timezone

from oncore import audio
from oncore.transcribers.engines import get_engine
from transcriber_tests.scoring import NORMALIZER_VERSION

from . import runs
from .codeswitch import error_location, per_language_errors, word_errors
from .models import CsResult, CsRun, CsUtterance

RunRefused = runs.RunRefused


@dataclass(frozen=True)
class Progress:
    run_id: int
    status: str
    total: int
    done: int
    failed: int
    queued: int
    sent: int

    @property
    def finished(self) -> int:
        return self.done + self.failed


def score_fields(utterance: CsUtterance, text: str) -> dict:
    """The score columns of a CsResult for this hypothesis of this clip."""
    counts = word_errors(utterance.reference, text)
    per_language = per_language_errors(utterance.reference, utterance.tags, text)
    location = error_location(utterance.reference, utterance.tags, text, utterance.matrix_language)
    return {
        "substitutions": counts.substitutions,
        "deletions": counts.deletions,
        "insertions": counts.insertions,
        "reference_words": counts.reference_words,
        "wer": counts.wer,
        "per_language": {lang: [c.errors, c.words] for lang, c in per_language.items()},
        "location": asdict(location),
        "normalizer_version": NORMALIZER_VERSION,
    }


def hint_for(utterance: CsUtterance) -> str:
    return "en" if utterance.condition == CsUtterance.MONO_ENGLISH else utterance.matrix_language


# ---------------------------------------------------------------- creating and finding runs


def create_run(dataset, transcriber, *, language_hint: bool, concurrency: int = runs.DEFAULT_CONCURRENCY):
    runs._check_transcriber(transcriber)
    if not 1 <= concurrency <= runs.MAX_CONCURRENCY:
        raise RunRefused(f"Concurrency must be between 1 and {runs.MAX_CONCURRENCY}, not {concurrency}.")
    with transaction.atomic():
        run = CsRun.objects.create(
            dataset=dataset,
            transcriber=transcriber,
            system_name=transcriber.slug,
            model=transcriber.model,
            language_hint=language_hint,
            concurrency=concurrency,
        )
        ensure_results(run)
    return run


def resumable_run(dataset, transcriber, *, language_hint: bool) -> CsRun | None:
    """The latest unfinished run of this transcriber, with this hint setting, on this dataset."""
    return (
        CsRun.objects.filter(dataset=dataset, transcriber=transcriber, language_hint=language_hint)
        .exclude(status=CsRun.DONE)
        .first()
    )


def ensure_results(run) -> int:
    ids = list(CsUtterance.objects.filter(dataset_id=run.dataset_id).values_list("id", flat=True))
    CsResult.objects.bulk_create(
        [CsResult(run=run, utterance_id=pk) for pk in ids], ignore_conflicts=True, batch_size=500
    )
    return len(ids)


def retry_failed(run) -> int:
    count = CsResult.objects.filter(run=run, status=CsResult.FAILED).update(
        status=CsResult.QUEUED, attempts=0, error="", not_before=None, claimed_at=None
    )
    if count:
        CsRun.objects.filter(pk=run.pk).update(status=CsRun.STOPPED, finished_at=None)
    refresh_counts(run.pk)
    return count


def refresh_counts(run_id: int, sent: int = 0) -> Progress:
    counts = dict(
        CsResult.objects.filter(run_id=run_id)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    cost = CsResult.objects.filter(run_id=run_id).aggregate(total=Sum("cost"))["total"] or 0
    done, failed = counts.get(CsResult.DONE, 0), counts.get(CsResult.FAILED, 0)
    total = sum(counts.values())
    CsRun.objects.filter(pk=run_id).update(
        utterances_total=total, utterances_done=done, utterances_failed=failed, cost=cost
    )
    status = CsRun.objects.values_list("status", flat=True).get(pk=run_id)
    queued = counts.get(CsResult.QUEUED, 0) + counts.get(CsResult.RUNNING, 0)
    return Progress(run_id, status, total, done, failed, queued, sent)


# ---------------------------------------------------------------- executing


def _record(r: CsResult, result=None, exc: BaseException | None = None) -> None:
    extra = {} if exc is not None else {
        "detected_language": str((result.raw or {}).get("language") or "")[:20],
        **score_fields(r.utterance, result.text),
    }
    runs.record_outcome(r, result, exc, **extra)


def _close(run_id: int, sent: int) -> Progress:
    progress = refresh_counts(run_id, sent)
    running = CsResult.objects.filter(run_id=run_id, status=CsResult.RUNNING).exists()
    if progress.queued == 0:
        CsRun.objects.filter(pk=run_id).update(status=CsRun.DONE)
        CsRun.objects.filter(pk=run_id, finished_at__isnull=True).update(finished_at=timezone.now())
    elif not running:
        CsRun.objects.filter(pk=run_id).update(status=CsRun.STOPPED)
    return refresh_counts(run_id, sent)


def execute_run(
    run_id: int, *, concurrency: int | None = None, max_utterances: int | None = None, progress=None
):
    """Transcribe and score the run's queued clips, `concurrency` at a time, until none is left or
    `max_utterances` were sent; `progress(Progress)` is called after each clip. Failures that may pass
    (rate limits, 5xx, timeouts) are retried with backoff; a KeyboardInterrupt waits for the calls in flight,
    keeps them, and is re-raised."""
    run = CsRun.objects.select_related("transcriber").get(pk=run_id)
    if run.transcriber is None:
        raise RunRefused(f"The transcriber of run {run_id} was deleted from the catalogue.")
    runs._check_transcriber(run.transcriber)
    concurrency = concurrency or run.concurrency or runs.DEFAULT_CONCURRENCY
    if not 1 <= concurrency <= runs.MAX_CONCURRENCY:
        raise RunRefused(f"Concurrency must be between 1 and {runs.MAX_CONCURRENCY}, not {concurrency}.")
    ensure_results(run)
    runs.reclaim_stale(CsResult, run_id)
    CsRun.objects.filter(pk=run_id).update(status=CsRun.RUNNING, finished_at=None)
    CsRun.objects.filter(pk=run_id, started_at__isnull=True).update(started_at=timezone.now())
    engine = get_engine(run.transcriber)
    sent = 0
    in_flight: dict = {}
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"cs-run-{run_id}")

    def collect(futures):
        for future in futures:
            r = in_flight.pop(future)
            exc = future.exception()
            _record(r, None if exc else future.result(), exc)
            if progress:
                progress(refresh_counts(run_id, sent))

    try:
        while True:
            while (max_utterances is None or sent < max_utterances) and len(in_flight) < concurrency:
                r = runs.claim_next(CsResult, run_id, "utterance")
                if r is None:
                    break
                try:
                    wav = runs.clip_wav(r.utterance)
                except (audio.AudioError, OSError) as exc:
                    runs.finish_claimed(r, status=CsResult.FAILED, error=f"The clip's audio cannot be read: {exc}")
                    continue
                language = hint_for(r.utterance) if run.language_hint else None
                in_flight[pool.submit(engine.transcribe, wav, language=language)] = r
                sent += 1
            if in_flight:
                done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                collect(done)
                continue
            if max_utterances is not None and sent >= max_utterances:
                break
            pause = runs.next_retry_wait(CsResult, run_id)
            if pause is None:
                break
            time.sleep(min(max(pause, 0.05), 5.0))
    finally:
        if in_flight:  # calls already made are paid for: keep their results
            done, _ = wait(list(in_flight))
            collect(done)
        pool.shutdown(wait=True)
        outcome = _close(run_id, sent)
    return outcome


def rescore(run) -> int:
    """Score a run's done clips again (after a normalizer change, say); returns how many."""
    rows = list(CsResult.objects.filter(run=run, status=CsResult.DONE).select_related("utterance"))
    for r in rows:
        for name, value in score_fields(r.utterance, r.text).items():
            setattr(r, name, value)
    fields = list(score_fields(rows[0].utterance, "").keys()) if rows else []
    CsResult.objects.bulk_update(rows, fields, batch_size=200)
    return len(rows)
