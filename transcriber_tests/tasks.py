"""Thin django-q2 entry points of line transcriptions and the judge's picks. They take primary keys and are safe
to run twice. A transcription task cuts the line's clip, calls the engine and hands the outcome to jobs, which
owns the queue mechanics (claim, lease, backoff, chaining, recovery) and scores the line once it is final.
Full-call runs have their own entry points in runs/tasks.py."""

import logging
import time

from django.db import transaction

from oncore import audio, llm
from oncore.transcribers.engines import TranscriptionError, get_engine

from . import actions, events, jobs, picks
from .lines import too_long
from .models import Bank, Run, Transcription

log = logging.getLogger(__name__)


def transcribe(pk: int) -> str:
    """The queue task: the outcome of the dispatched row ("skipped" if another delivery has it)."""
    outcomes = _transcribe_from(pk)
    return outcomes[0] if outcomes else "skipped"


def _transcribe_from(pk: int) -> list[str]:
    """Transcribe a dispatched row, then the organization's next ready rows while the chain lasts (jobs.claimed_chain).
    The outcome of each row."""
    return [_transcribe_claimed(t) for t in jobs.claimed_chain(pk)]


def _transcribe_claimed(t: Transcription) -> str:
    pk = t.pk
    line = t.line
    try:
        if too_long(line):  # flagged before the limit was set: not replayed
            raise audio.AudioError(f"The line is {line.duration_s:.0f} s long, over ONCORE_MAX_LINE_S.")
        clips = audio.cut_line(
            audio.stored(line.call.recording), line.start_s, line.end_s, label=f"call {line.call_id}"
        )
        result = get_engine(t.transcriber).transcribe(clips.candidate_wav)
    except audio.AudioError as exc:
        outcome, written = "failed", _finish(t, status=Transcription.FAILED, error=str(exc))
    except TranscriptionError as exc:
        if exc.retryable and jobs.may_retry(t):
            outcome, written = "retry", jobs.retry_later(t, str(exc), exc.retry_after)
        else:
            outcome, written = "failed", _finish(t, status=Transcription.FAILED, error=str(exc))
    except Exception as exc:  # an engine bug must not leave the row running forever
        log.exception("transcription %s crashed", pk)
        outcome, written = (
            "failed",
            _finish(
                t, status=Transcription.FAILED, error=f"Unexpected error: {exc.__class__.__name__}: {exc}"
            ),
        )
    else:
        outcome, written = (
            "done",
            _finish(
                t,
                status=Transcription.DONE,
                text=result.text,
                error="",
                audio_seconds=result.audio_seconds,
                cost=result.cost,
                latency_s=result.latency_s,
            ),
        )
    if written and outcome != "retry":
        _after_final(t, outcome)
    return outcome


def _finish(t: Transcription, **fields) -> bool:
    """A final outcome, written with the scores of every item on the line in one transaction."""
    return jobs.finish(t, on_final=actions.score_transcription, claimed_at=None, **fields)


def _after_final(t: Transcription, outcome: str) -> None:
    """Follow-up work once a line's transcription is final, each queued as its own task."""
    # Done or failed, it may be the last candidate of an item: where candidates matched but wrote the line
    # differently, the judge picks one (never a score).
    picks.ask_later([t.line_id])
    events.scores_written(t.organization_id, [t.line_id])
    if Run.objects.filter(organization_id=t.organization_id, status=Run.TRANSCRIBING).exists():
        # A full-call run waiting for this line compares as soon as its last line is in.
        transaction.on_commit(
            lambda: jobs.enqueue("transcriber_tests.runs.tasks.transcription_finished", t.pk)
        )


def pick_line(line_id: int) -> int:
    return picks.maybe_pick_line(line_id)


def fill_picks(bank_id: int) -> str:
    bank = Bank.objects.filter(pk=bank_id).first()
    if bank is None:
        return "no bank"
    result = picks.fill_picks(bank)
    return f"{result.picked} picked, {result.failed} failed, of {result.items} items"


def pump_all() -> int:
    """The minutely schedule ("oncore-pump"): dispatch ready rows and recover abandoned ones, then queue the
    catch-up of judge picks left unasked and the check of banks' leaders for webhooks."""
    dispatched = _pump()
    if llm.judge_configured():
        jobs.enqueue("transcriber_tests.tasks.catch_up_picks")
    jobs.enqueue("transcriber_tests.tasks.check_leaders")
    return dispatched


def announce_scores(line_ids) -> int:
    return events.announce_scores(line_ids)


def check_leaders() -> int:
    return events.check_leaders()


def _pump() -> int:
    with transaction.atomic():
        return jobs.pump_all()


def catch_up_picks() -> int:
    return picks.catch_up()


def drain(max_seconds: float = 600.0) -> int:
    """Run every dispatched transcription in this process until nothing is ready. For `manage.py run_queue`,
    demos and tests; workers do the same job in production. Returns how many transcription attempts ran."""
    deadline = time.monotonic() + max_seconds
    ran = 0
    while time.monotonic() < deadline:
        _pump()
        ids = list(
            Transcription.objects.filter(status=Transcription.RUNNING, claimed_at__isnull=True)
            .order_by("id")
            .values_list("id", flat=True)
        )
        if not ids:
            break
        for pk in ids:
            ran += len(_transcribe_from(pk))
    return ran
