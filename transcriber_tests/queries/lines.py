"""The rules of lines that flags, controls, candidates and runs share: which transcriber a call ran on, why a
line cannot be flagged, which lines can be replayed, what a replay is billed for, and which lines a transcriber
has not been given yet. Read by the actions, the other queries, the queue's work and the API; writes nothing."""

from django.db.models import F, Q

from oncore import audio
from oncore.calls.models import Line
from oncore.calls.recording import why_not_recorded
from oncore.config import config
from oncore.transcribers.models import Transcriber

from .. import errors
from ..models import Bank, Transcription


def live_transcriber_of(call) -> Transcriber | None:
    """The transcriber the call ran on: the catalogue reference, or for older calls, found by its name (looked up
    once per call object, so a page of its lines asks once)."""
    if call.live_transcriber_id:
        return call.live_transcriber
    name = (call.live_transcriber_name or "").strip()
    if not name:
        return None
    if getattr(call, "_live_by_name", (None,))[0] != name:
        call._live_by_name = (name, transcriber_named(name))
    return call._live_by_name[1]


def transcriber_named(name: str) -> Transcriber | None:
    """The catalogue entry a call names its live transcriber by (display name, slug or model, any case; the
    oldest if several), or None: how replay and the cost of the calls find a live transcriber named on calls
    only."""
    name = (name or "").strip()
    if not name:
        return None
    return (
        Transcriber.objects.filter(
            Q(display_name__iexact=name) | Q(slug__iexact=name) | Q(model__iexact=name)
        )
        .order_by("id")
        .first()
    )


def clip_seconds(line) -> float:
    """Audio a candidate is billed for on one line: the line plus the margin on each side."""
    margin = config().clip_margin_s
    return max(0.0, (line.end_s - line.start_s) + 2 * margin)


def too_long(line) -> bool:
    """Whether a timed line is longer than ONCORE_MAX_LINE_S: it cannot be flagged, be a control or be replayed
    in a run."""
    return line.duration_s > config().max_line_s


def replayable(lines):
    """The lines of a queryset with audio timing and at most ONCORE_MAX_LINE_S long (see too_long)."""
    return lines.filter(
        start_s__isnull=False, end_s__isnull=False, end_s__lte=F("start_s") + config().max_line_s
    )


def why_not_flaggable(line, *, check_audio: bool = True) -> errors.ActionError | None:
    """The refusal do_flag_line would give for this line (other than an existing flag), or None."""
    call = line.call
    if line.speaker != Line.CALLER:
        return errors.LineNotCaller("Only caller lines can be flagged; this is an assistant line.")
    if not_recorded := why_not_recorded(call):  # what the assistant's recording setting says of the call
        return errors.LineNotRecorded(not_recorded)
    if live_transcriber_of(call) is None:
        return errors.LiveTranscriberUnknown(
            f"The transcriber call {call.pk} ran on is unknown"
            + (
                f" (no catalogue entry named {call.live_transcriber_name!r})"
                if call.live_transcriber_name
                else ""
            )
            + ", so there is nothing to compare against. Add it to the catalogue or set it on the call."
        )
    if not line.has_timing:
        return errors.LineHasNoTiming(
            "This line has no audio timing (start and end of the caller's speech), so its audio cannot be cut."
        )
    if too_long(line):
        return errors.LineTooLong(
            f"This line is {line.duration_s:.0f} s long; lines longer than {config().max_line_s:g} s "
            "cannot be flagged or replayed (its timing most likely spans several turns)."
        )
    if check_audio:
        try:
            info = audio.probe(audio.stored(call.recording), label=f"call {call.pk}")
        except audio.AudioError as exc:
            return errors.RecordingUnavailable(str(exc))
        if line.start_s >= info.duration_s:
            return errors.RecordingUnavailable(
                f"Line timing {line.start_s:.2f}–{line.end_s:.2f} s lies outside the recording of call {call.pk}, "
                f"which is {info.duration_s:.1f} s long."
            )
    return None


def bank_lines(bank: Bank):
    """Every line a bank scores: its flags' lines and their control lines."""
    return Line.objects.filter(Q(flag__bank=bank) | Q(control_uses__flag__bank=bank)).distinct()


def untranscribed(lines, transcriber: Transcriber) -> tuple[list, float]:
    """The lines the transcriber has not been given yet, and the audio seconds it would be billed for them."""
    done = set(
        Transcription.objects.filter(line__in=[ln.pk for ln in lines], transcriber=transcriber).values_list(
            "line_id", flat=True
        )
    )
    todo = [ln for ln in lines if ln.pk not in done]
    return todo, sum(clip_seconds(ln) for ln in todo)
