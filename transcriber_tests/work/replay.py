"""The transcription workflow: what happens to one claimed line transcription (jobs.claim gives it). The line's
clip is cut from the recording and sent to the transcriber's engine; the outcome is written while the claim holds
(jobs.finish), with the scores of every item on the line once it is final; a retryable failure is queued again
after its backoff (jobs.retry_later); then the follow-up work is queued: the judge's picks, the flag.scored
webhook, and the full-call run waiting for the line. The queue task (tasks.transcribe) calls `transcribe_chain`."""

import logging
import re

from oncore import audio
from oncore.transcribers.engines import TranscriptionError, get_engine
from oncore.transcribers.models import Transcriber

from .. import handles
from ..actions import scores
from ..models import Run, Transcription
from ..queries import boxes, snapshots
from ..queries.lines import too_long
from . import jobs

log = logging.getLogger(__name__)


def transcribe_chain(pk: int) -> list[str]:
    """Transcribe a dispatched row, then the organization's next ready rows while the chain lasts
    (jobs.claimed_chain). The outcome of each row: "done", "failed" or "retry"."""
    outcomes, calls = [], set()
    for t in jobs.claimed_chain(pk):
        outcomes.append(transcribe_claimed(t))
        calls.add(t.line.call_id)
    if outcomes:  # the banks its scores changed are rebuilt now where a rebuild is due (queries/snapshots.py)
        snapshots.dispatch_due()
        boxes.build(calls)  # and the flag boxes of the calls they were on (queries/boxes.py)
    return outcomes


def transcribe_claimed(t: Transcription) -> str:
    """Transcribe one claimed row and write its outcome; "done", "failed" or "retry"."""
    line = t.line
    try:
        if too_long(line):  # flagged before the limit was set: not replayed
            raise audio.AudioError(f"The line is {line.duration_s:.0f} s long, over ONCORE_MAX_LINE_S.")
        clips = audio.cut_line(
            audio.stored(line.call.recording), line.start_s, line.end_s, label=f"call {line.call_id}"
        )
        result = _replay(t, line, clips)
    except audio.AudioError as exc:
        outcome, written = "failed", _failed(t, str(exc))
    except TranscriptionError as exc:
        if exc.retryable and jobs.may_retry(t):
            outcome, written = "retry", jobs.retry_later(t, str(exc), exc.retry_after)
        elif exc.retryable:  # its last attempt: whatever the engine said, it is not tried again
            outcome, written = "failed", _failed(t, last_attempt_error(str(exc), t.attempts))
        else:
            outcome, written = "failed", _failed(t, str(exc))
    except Exception as exc:  # an engine bug must not leave the row running forever
        log.exception("transcription %s crashed", t.pk)
        outcome, written = "failed", _failed(t, f"Unexpected error: {exc.__class__.__name__}: {exc}")
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
                **_stream_fields(result.stream),
            ),
        )
    if written and outcome != "retry":
        _after_final(t)
    return outcome


def _replay(t: Transcription, line, clips):
    """The clip through the transcriber's engine: in one request (batch), or as a live call (streaming), told
    where the caller's speech starts within the clip (its time to first partial counts from there) and where it
    ends (its time to final counts from there)."""
    engine = get_engine(t.transcriber)
    if t.transcriber.mode != Transcriber.STREAMING:
        return engine.transcribe(clips.candidate_wav)
    return engine.transcribe(
        clips.candidate_wav,
        speech_start_s=max(0.0, line.start_s - clips.start_s),
        speech_end_s=max(0.0, line.end_s - clips.start_s),
    )


# What an engine's retryable error says of the retry to come ("...: it will be tried again."), left out once no
# retry is coming.
RETRY_PROMISE = re.compile(r"[:;,]?\s*it will be tried again", re.IGNORECASE)


def last_attempt_error(message: str, attempts: int) -> str:
    """A retryable error's message on its last attempt: the engine's promise of a retry left out, and said how
    many attempts were made ("... Failed on each of its 3 attempts: not tried again.")."""
    said = RETRY_PROMISE.sub("", message).strip()
    if said and not said.endswith((".", "!", "?")):
        said += "."
    tries = f"each of its {attempts} attempts" if attempts > 1 else "its only attempt"
    return f"{said} Failed on {tries}: not tried again.".strip()


def _failed(t: Transcription, error: str) -> bool:
    """A final failure, kept with the mode the line was replayed in (a streaming candidate's stays streaming)."""
    mode = Transcription.STREAMING if t.transcriber.mode == Transcriber.STREAMING else Transcription.BATCH
    return _finish(t, status=Transcription.FAILED, error=error, mode=mode)


def _stream_fields(figures) -> dict:
    """A streaming replay's figures as the row keeps them (mode batch and none for a batch replay)."""
    if figures is None:
        return {"mode": Transcription.BATCH}
    return {
        "mode": Transcription.STREAMING,
        "first_partial_s": figures.first_partial_s,
        "time_to_first_partial_s": figures.time_to_first_partial_s,
        "partials": figures.partials,
        "partial_revisions": figures.revisions,
        "final_segments": figures.final_segments,
        "finals_revised": figures.finals_revised,
        "frames_sent": figures.frames,
        "frames_off_schedule": figures.frames_off_schedule,
    }


def _finish(t: Transcription, **fields) -> bool:
    """A final outcome, written with the scores of every item on the line in one transaction."""
    return jobs.finish(t, on_final=scores.score_transcription, **fields)


def _after_final(t: Transcription) -> None:
    """Follow-up work once a line's transcription is final, each queued as its own task."""
    # Done or failed, it may be the last candidate of an item: where candidates matched but wrote the line
    # differently, the judge picks one (never a score).
    scores.ask_picks([t.line_id])
    scores.scores_written(t.organization_id, [t.line_id])
    if Run.objects.filter(organization_id=t.organization_id, status=Run.TRANSCRIBING).exists():
        # A full-call run waiting for this line compares as soon as its last line is in.
        handles.TRANSCRIPTION_FINISHED.later(t.pk)
