"""Thin django-q2 entry points. They take primary keys, call actions, and are safe to run twice."""

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from oncore import audio, llm
from oncore.transcribers.engines import TranscriptionError, get_engine

from . import actions, jobs, picks
from .models import Run, Transcription

log = logging.getLogger(__name__)


def _claim(pk: int) -> Transcription | None:
    """Claim a dispatched row. A second delivery of the same task finds it claimed (or finished) and stops;
    a delivery after a worker died finds the claim older than the lease and takes it over."""
    now = timezone.now()
    stale = now - timedelta(seconds=jobs.lease_seconds())
    claimed = (
        Transcription.objects.filter(pk=pk, status=Transcription.RUNNING)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale))
        .update(claimed_at=now, attempts=F("attempts") + 1, updated_at=now)
    )
    if not claimed:
        return None
    return _load(pk)


def _load(pk: int) -> Transcription:
    return Transcription.objects.select_related("line__call", "transcriber").get(pk=pk)


def _claim_next(organization_id: int) -> Transcription | None:
    """Dispatch and claim the organization's next ready row in one step, for a task that has just finished one:
    the slot it holds passes to that row without a round trip through the broker (unless a pump took it)."""
    if jobs.free_slots(organization_id) <= 0:
        return None
    now = timezone.now()
    for pk in jobs.ready_rows(organization_id, now)[:4]:
        if Transcription.objects.filter(pk=pk, status=Transcription.QUEUED).update(
            status=Transcription.RUNNING, claimed_at=now, attempts=F("attempts") + 1, updated_at=now
        ):
            return _load(pk)
    return None


def _finish(t: Transcription, **fields) -> bool:
    """Write the outcome only while this worker still holds the claim. If the database connection was lost
    meanwhile (a restart), it is opened again and the write tried once more, so a vendor's answer already paid
    for is kept; the conditional update makes the second try harmless if the first one did land."""
    fields["updated_at"] = timezone.now()
    try:
        return _write_outcome(t, fields)
    except (OperationalError, InterfaceError):
        log.warning("transcription %s: the database connection was lost; writing its outcome again", t.pk)
        close_old_connections()
        return _write_outcome(t, fields)


def _write_outcome(t: Transcription, fields: dict) -> bool:
    with transaction.atomic():
        written = Transcription.objects.filter(pk=t.pk, status=Transcription.RUNNING, claimed_at=t.claimed_at).update(
            **fields
        )
        if written and fields.get("status") in (Transcription.DONE, Transcription.FAILED):
            t.refresh_from_db()
            actions.score_transcription(t)
    return bool(written)


def transcribe(pk: int) -> str:
    """The queue task: the outcome of the dispatched row ("skipped" if another delivery has it)."""
    outcomes = _transcribe_from(pk)
    return outcomes[0] if outcomes else "skipped"


def _transcribe_from(pk: int) -> list[str]:
    """Transcribe a dispatched row; then, while the task is younger than ONCORE_TASK_CHAIN_S, go on with the
    organization's next ready rows (one at a time, so its concurrency holds). The outcome of each row."""
    t = _claim(pk)
    if t is None:
        return []
    organization_id = t.organization_id
    chain_until = time.monotonic() + settings.ONCORE["TASK_CHAIN_S"]
    outcomes = [_transcribe_claimed(t)]
    while time.monotonic() < chain_until and (t := _claim_next(organization_id)) is not None:
        outcomes.append(_transcribe_claimed(t))
    with transaction.atomic():
        jobs.pump(organization_id)
    return outcomes


def _transcribe_claimed(t: Transcription) -> str:
    pk = t.pk
    line = t.line
    try:
        clips = audio.cut_line(line.call.recording.path, line.start_s, line.end_s, label=f"call {line.call_id}")
        result = get_engine(t.transcriber).transcribe(clips.candidate_wav)
    except audio.AudioError as exc:
        outcome, written = "failed", _finish(t, status=Transcription.FAILED, error=str(exc), claimed_at=None)
    except TranscriptionError as exc:
        if exc.retryable and t.attempts < settings.ONCORE["MAX_TRANSCRIPTION_ATTEMPTS"]:
            backoff = settings.ONCORE["RETRY_BACKOFF_S"] * 2 ** (t.attempts - 1)
            delay = max(backoff, exc.retry_after or 0)
            outcome, written = "retry", _finish(t, status=Transcription.QUEUED, error=str(exc), claimed_at=None,
                                                not_before=timezone.now() + timedelta(seconds=delay))
        else:
            outcome, written = "failed", _finish(t, status=Transcription.FAILED, error=str(exc), claimed_at=None)
    except Exception as exc:  # an engine bug must not leave the row running forever
        log.exception("transcription %s crashed", pk)
        outcome, written = "failed", _finish(
            t, status=Transcription.FAILED, error=f"Unexpected error: {exc.__class__.__name__}: {exc}",
            claimed_at=None,
        )
    else:
        outcome, written = "done", _finish(t, status=Transcription.DONE, text=result.text, error="",
                                           claimed_at=None, audio_seconds=result.audio_seconds, cost=result.cost,
                                           latency_s=result.latency_s)
    if written and outcome != "retry":
        _after_final(t, outcome)
    return outcome


def _after_final(t: Transcription, outcome: str) -> None:
    """Follow-up work once a line's transcription is final, each queued as its own task."""
    if outcome == "done" and llm.judge_configured():
        # Where candidates matched but wrote the line differently, the judge picks one (never a score).
        transaction.on_commit(lambda: jobs.enqueue("transcriber_tests.tasks.pick_line", t.line_id))
    if Run.objects.filter(organization_id=t.organization_id, status=Run.TRANSCRIBING).exists():
        # A full-call run waiting for this line compares as soon as its last line is in.
        transaction.on_commit(lambda: jobs.enqueue("transcriber_tests.run_tasks.transcription_finished", t.pk))


def pick_line(line_id: int) -> int:
    return picks.maybe_pick_line(line_id)


def pump_all() -> int:
    with transaction.atomic():
        return jobs.pump_all()


def drain(max_seconds: float = 600.0) -> int:
    """Run every dispatched transcription in this process until nothing is ready. For `manage.py run_queue`,
    demos and tests; workers do the same job in production. Returns how many transcription attempts ran."""
    deadline = time.monotonic() + max_seconds
    ran = 0
    while time.monotonic() < deadline:
        pump_all()
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
