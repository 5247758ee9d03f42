"""Run a catalogue transcriber over a code-switched dataset, score every utterance, then judge it.

    run = create_run(dataset, transcriber, language_hint=False)   # or start_run: then the queue runs it
    progress = execute_run(run.pk, concurrency=2)   # transcribes and scores; resumable
    judged = judge.judge_run(run.pk)                # semantic WER and answer error rate (needs the judge)

The work list is one CsResult per clip; benchmark.executor claims, sends, retries and records them, as for
the entity benchmark: two executors never send a clip twice, a done clip is never sent again, and a stopped
run continues where it stopped.

Language hint: with `language_hint=True` each clip is sent with its language: English for the monolingual
English condition, the matrix language for the other two (a code-switched clip is mostly the matrix
language). Without it the engine gets language=None and detects the language itself. English-only models
(Whisper tiny.en) always transcribe as English whatever the hint.

Scores are written with the hypothesis (`score_fields`): word errors after the OnCore normalization, errors
per language (substitutions and deletions charged to the language of the reference word; insertions left
out) and where the errors fall (matrix, embedded, language-independent words), using the clip's stored tags.
"""

from dataclasses import asdict

from oncore import queue
from transcriber_tests.lib.scoring import NORMALIZER_VERSION

from .. import executor
from ..executor import DEFAULT_CONCURRENCY, RunRefused
from ..models import CsResult, CsRun, CsUtterance
from .metrics import error_location, per_language_errors, word_errors


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


def _done_fields(r: CsResult, result) -> dict:
    return {
        "detected_language": str((result.raw or {}).get("language") or "")[:20],
        **score_fields(r.utterance, result.text),
    }


WORK = executor.Work(
    name="cs-run",
    run_model=CsRun,
    item_model=CsResult,
    source="utterance",
    counts=("utterances_total", "utterances_done", "utterances_failed"),
    language=lambda run, r: hint_for(r.utterance) if run.language_hint else None,
    done_fields=_done_fields,
    # tasks.run_codeswitch(run_id), bound by benchmark/apps.py: it imports this module.
    task=queue.Task("transcribes and scores a code-switching run's clips", group="benchmark"),
)


# ---------------------------------------------------------------- creating and finding runs


def create_run(dataset, transcriber, *, language_hint: bool, concurrency: int = DEFAULT_CONCURRENCY):
    return executor.create_run(WORK, dataset, transcriber, concurrency, language_hint=language_hint)


def resumable_run(dataset, transcriber, *, language_hint: bool) -> CsRun | None:
    """The latest unfinished run of this transcriber, with this hint setting, on this dataset."""
    return (
        CsRun.objects.filter(dataset=dataset, transcriber=transcriber, language_hint=language_hint)
        .exclude(status=CsRun.DONE)
        .first()
    )


def retry_failed(run) -> int:
    """Queue a run's failed clips again, with fresh attempts; returns how many."""
    return executor.retry_failed(WORK, run)


def execute_run(
    run_id: int,
    *,
    concurrency: int | None = None,
    max_utterances: int | None = None,
    time_budget_s: float | None = None,
    progress=None,
) -> executor.Progress:
    """Transcribe and score the run's queued clips (see executor.execute)."""
    run = CsRun.objects.select_related("transcriber").get(pk=run_id)
    if run.transcriber is None:
        raise RunRefused(f"The transcriber of run {run_id} was deleted from the catalogue.")
    return executor.execute(
        run,
        WORK,
        concurrency=concurrency,
        max_items=max_utterances,
        time_budget_s=time_budget_s,
        progress=progress,
    )


def start_run(dataset, transcriber, *, language_hint: bool, concurrency: int = DEFAULT_CONCURRENCY) -> CsRun:
    """create_run, handed to the queue (benchmark.codeswitch.tasks) once the transaction commits
    (executor.start_run). The judge is not asked from the queue: `codeswitch_run --judge-only` asks it, where it
    is configured."""
    return executor.start_run(WORK, dataset, transcriber, concurrency, language_hint=language_hint)


def rescore(run) -> int:
    """Score a run's done clips again (after a normalizer change, say); returns how many."""
    rows = list(CsResult.objects.filter(run=run, status=CsResult.DONE).select_related("utterance"))
    for r in rows:
        for name, value in score_fields(r.utterance, r.text).items():
            setattr(r, name, value)
    fields = list(score_fields(rows[0].utterance, "").keys()) if rows else []
    CsResult.objects.bulk_update(rows, fields, batch_size=200)
    return len(rows)
