"""What every streaming engine shares: the clip as 16-bit PCM frames, the pacing that sends them as a live call
would, the record of what the transcriber said and when, and the figures a streaming replay measures.

Clock: every time is time.perf_counter() seconds. The session's start (t0) is the moment the transcriber is ready
for audio (after its handshake and greeting): frame i carries the audio from i × frame to (i + 1) × frame and is
sent once that audio has been spoken, at t0 + (i + 1) × frame / speed. So the audio at clip position p is heard
by the transcriber at t0 + p / speed, as on a live call; the start of the caller's speech (the line's start within
its clip, `speech_start_s`) at t0 + speech_start_s / speed, and its end (`speech_end_s`) at t0 + speech_end_s / speed.

Figures (StreamFigures), each measured, never estimated:
- first_partial_s: from t0 to the first text the transcriber sent (a partial, or a final if it sent no partial);
- time_to_first_partial_s: the head latency, from the start of the caller's speech to the first text sent after
  it (text sent earlier came from the clip's margin before the line); None when no text came after it;
- time_to_final_s: from the end of the caller's speech to the final text: the last final segment that carried
  text, or, when the whole line gave no text, the transcriber's word that the session is done;
- partials, revisions: the partial results that carried text, and how many of them (and of the finals) changed
  a word an earlier partial of the same segment had shown (a transcript only ever extended has none);
- final_segments, finals_revised: the final segments that carried text, and how many of them differ from the last
  partial shown for their segment (a screen showing the partial would have shown something else);
- frames, frames_off_schedule, worst_offset_ms: the frames sent, those sent more than ±5 ms from their schedule,
  and the largest offset: the pacing's accuracy on this machine.
`speed` is 1 (real time) for every replay; tests that are not about pacing set SPEED higher to run quickly.

Each session's pacing and time to final are logged (INFO, logger oncore.transcribers.streaming, one line:
PACING_LOG), so a drain of the queue can read how exactly this machine paced its frames (bench/queue_drain.py).
"""

import asyncio
import logging
import math
import re
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from oncore.audio import AudioError, decode_wav_mono, wav_info

from ..base import TranscriptionError

FRAME_MS = 20
ON_SCHEDULE_MS = 5.0  # a frame sent within this of its schedule is on time
PACING_LOG = (
    "streaming session paced: frames=%d off_schedule=%d worst_offset_ms=%.3f time_to_final_s=%.4f speed=%g"
)
log = logging.getLogger("oncore.transcribers.streaming")
SPEED = 1.0  # real time; only tests change it (see the module's docstring)
_WORD = re.compile(r"[\w']+")


def run_session(coroutine):
    """Run a session's coroutine to its end from synchronous code: in this thread, or, where this thread already
    runs an event loop (a caller inside async code, a browser driver's loop), in a thread of its own, so the
    session's pacing never shares a loop with other work."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome = {}

    def run():
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # handed back to the caller below
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="streaming-session")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@dataclass(frozen=True)
class StreamFigures:
    first_partial_s: float | None
    time_to_final_s: float
    partials: int
    revisions: int
    frames: int
    frames_off_schedule: int
    worst_offset_ms: float
    frame_ms: int
    sample_rate: int
    speech_end_s: float
    connect_s: float  # from opening the connection to the transcriber being ready for audio
    session_s: float  # from opening the connection to the end of the session
    final_segments: int = 0  # final segments that carried text
    finals_revised: int = 0  # of those, the ones that differ from the last partial shown for their segment
    speed: float = 1.0  # the pacing's speed: clip seconds per second (1 for every replay; tests go faster)
    speech_start_s: float = 0.0  # where the caller's speech starts in the clip
    time_to_first_partial_s: float | None = None  # from that start to the first text sent after it

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def clip_pcm(
    wav: bytes, rates: tuple[int, ...] | None = None, vendor: str = "The transcriber"
) -> tuple[bytes, int]:
    """The clip as 16-bit little-endian mono PCM, and its sample rate: the clip's own rate when the transcriber
    takes it (`rates` None: any rate), else the lowest rate it takes above the clip's (or its highest)."""
    try:
        native = wav_info(wav).sample_rate
        rate = native if rates is None or native in rates else _nearest(native, rates)
        samples = decode_wav_mono(wav, target_rate=rate)
    except AudioError as exc:
        raise TranscriptionError(f"{exc} Nothing was sent to {vendor}.", retryable=False) from exc
    return (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes(), rate


def _nearest(native: int, rates: tuple[int, ...]) -> int:
    above = [r for r in sorted(rates) if r >= native]
    return above[0] if above else max(rates)


def split_frames(pcm: bytes, sample_rate: int, frame_ms: int) -> list[bytes]:
    """PCM cut into frames of frame_ms; the last one is filled with silence to the full length (AssemblyAI
    refuses a chunk under 50 ms), at most one frame of silence after the clip."""
    size = 2 * int(sample_rate * frame_ms / 1000)
    frames = [pcm[i : i + size] for i in range(0, len(pcm), size)]
    if frames and len(frames[-1]) < size:
        frames[-1] = frames[-1].ljust(size, b"\x00")
    return frames


def words(text: str) -> list[str]:
    return _WORD.findall((text or "").lower())


class Heard:
    """What a transcriber sent in one session, timed from t0: partial hypotheses of the segment being spoken,
    and final segments it will not change. The line's text is its final segments, joined."""

    def __init__(self, t0: float):
        self.t0 = t0
        self.finals: list[str] = []
        self.partials = 0
        self.revisions = 0
        self.finals_revised = 0
        self.first_text_at: float | None = None
        self.text_at: list[float] = []  # when each partial or final that carried text came
        self.final_at: float | None = None
        self.done_at: float | None = None
        self._shown: list[str] = []  # the words the current segment's last partial showed

    def _changed(self, new: list[str]) -> bool:
        return bool(self._shown) and new[: len(self._shown)] != self._shown

    def partial(self, text: str) -> None:
        now = time.perf_counter()
        new = words(text)
        if not new:
            return
        if self._changed(new):
            self.revisions += 1
        self._shown = new
        self.partials += 1
        self._text_came(now)

    def final(self, text: str) -> None:
        now = time.perf_counter()
        new = words(text)
        if self._changed(new):
            self.revisions += 1
        if new and self._shown and new != self._shown:
            self.finals_revised += 1
        self._shown = []
        text = (text or "").strip()
        if text:
            self.finals.append(text)
            self.final_at = now
            self._text_came(now)

    def _text_came(self, now: float) -> None:
        self.text_at.append(now)
        if self.first_text_at is None:
            self.first_text_at = now

    def first_text_from(self, moment: float) -> float | None:
        """When the first text at or after `moment` came; None if none did."""
        return next((at for at in self.text_at if at >= moment), None)

    def done(self) -> None:
        """The transcriber said the session is over (or the local engine finished)."""
        if self.done_at is None:
            self.done_at = time.perf_counter()

    @property
    def text(self) -> str:
        return " ".join(self.finals)

    @property
    def shown(self) -> str:
        """The partial hypothesis of the segment being spoken (what a screen would show beside the finals)."""
        return " ".join(self._shown)


@dataclass
class Pacer:
    """Sends frames on their schedule (see the module's docstring) and keeps each one's offset from it."""

    frame_s: float
    speed: float = 1.0
    offsets_ms: list[float] = field(default_factory=list)
    t0: float = 0.0

    def due(self, index: int) -> float:
        return self.t0 + (index + 1) * self.frame_s / self.speed

    async def run(self, frames, send) -> None:
        """Send every frame with `send` (a coroutine function) at its time; t0 is now."""
        self.t0 = time.perf_counter()
        for index, frame in enumerate(frames):
            wait = self.due(index) - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            self.offsets_ms.append((time.perf_counter() - self.due(index)) * 1000)
            await send(frame)

    @property
    def off_schedule(self) -> int:
        return sum(1 for o in self.offsets_ms if abs(o) > ON_SCHEDULE_MS)

    @property
    def worst_ms(self) -> float:
        return max((abs(o) for o in self.offsets_ms), default=0.0)


def figures(
    heard: Heard,
    pacer: Pacer,
    *,
    speech_end_s: float,
    sample_rate: int,
    opened_at: float,
    ended_at: float,
    speech_start_s: float = 0.0,
) -> StreamFigures:
    speech_start_s = min(speech_start_s, speech_end_s)
    speech_start_at = pacer.t0 + speech_start_s / pacer.speed
    speech_end_at = pacer.t0 + speech_end_s / pacer.speed
    head_at = heard.first_text_from(speech_start_at)
    final_at = heard.final_at if heard.final_at is not None else heard.done_at
    if final_at is None:  # the engines end a session only once it is done: a bug if this is reached
        raise TranscriptionError("The session ended without a final transcript or an end.", retryable=True)
    log.info(
        PACING_LOG,
        len(pacer.offsets_ms),
        pacer.off_schedule,
        pacer.worst_ms,
        final_at - speech_end_at,
        pacer.speed,
    )
    return StreamFigures(
        first_partial_s=None if heard.first_text_at is None else round(heard.first_text_at - pacer.t0, 4),
        time_to_final_s=round(final_at - speech_end_at, 4),
        partials=heard.partials,
        revisions=heard.revisions,
        frames=len(pacer.offsets_ms),
        frames_off_schedule=pacer.off_schedule,
        worst_offset_ms=round(pacer.worst_ms, 3),
        frame_ms=round(pacer.frame_s * 1000),
        sample_rate=sample_rate,
        speech_end_s=round(speech_end_s, 4),
        connect_s=round(pacer.t0 - opened_at, 4),
        session_s=round(ended_at - opened_at, 4),
        final_segments=len(heard.finals),
        finals_revised=heard.finals_revised,
        speed=pacer.speed,
        speech_start_s=round(speech_start_s, 4),
        time_to_first_partial_s=None if head_at is None else round(head_at - speech_start_at, 4),
    )


def speech_end_within(speech_end_s: float | None, audio_seconds: float) -> float:
    """Where the caller stops speaking in the clip: the line's end within it (the margin after it is silence or
    the other party), held inside the clip; the clip's end when not given."""
    if speech_end_s is None or not math.isfinite(speech_end_s):
        return audio_seconds
    return min(max(float(speech_end_s), 0.0), audio_seconds)


def speech_start_within(speech_start_s: float | None, audio_seconds: float) -> float:
    """Where the caller starts speaking in the clip: the line's start within it (the margin before it is silence or
    the other party), held inside the clip; the clip's start when not given."""
    if speech_start_s is None or not math.isfinite(speech_start_s):
        return 0.0
    return min(max(float(speech_start_s), 0.0), audio_seconds)
