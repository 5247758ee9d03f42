"""A local streaming engine: faster-whisper over a growing buffer with the local-agreement policy, so a streaming
candidate runs offline (the demo, the tests, a server without vendor keys).

The policy is whisper_streaming's (ufal/whisper_streaming, "Turning Whisper into Real-Time Transcription
System", Macháček et al. 2023), LocalAgreement-2: the clip's 20 ms frames arrive paced in real time, as they would
from a call; whenever at least min_chunk_s of new audio has arrived (and the previous pass is done), Whisper
transcribes the whole buffer again, with word timestamps, and the words that two passes in a row agree on (their
longest common prefix, past what is already committed) are committed: never changed again. The words after
them are a tentative tail, shown as the partial. When the audio ends, a last pass over the buffer is taken whole:
committed words plus its tail are the final text. A buffer longer than trim_s is cut at the end of a segment
that is already committed, and the committed text before the cut is given to Whisper as its prompt (200
characters), as whisper_streaming's "segment" trimming does.

It runs on this server's CPU beside the queue's other work, so its time to final is this machine's: the time the
last pass takes after the clip's end (about 0.13 s per second of buffer for tiny.en int8 on two cores, see
docs/streaming.md), plus the margin of audio after the speech.

Model strings as the batch engine's (faster_whisper.py): tiny.en and base offline. Options: min_chunk_s
(default 1.0), trim_s (15), beam_size (5), cpu_threads (0 = the library's default), final_timeout_s (the last
pass's deadline after the end of the audio, default 30).
"""

import asyncio
import time

import numpy as np

from oncore.audio import AudioError, decode_wav_mono

from ... import vocabulary
from ...providers import STREAMING
from ..base import EngineResult, TranscriptionError, base_language, cost_for, option_float, vocabulary_terms
from ..faster_whisper import SAMPLE_RATE, load_model
from . import session

PROMPT_CHARS = 200
NGRAM = 5  # the longest repeat of the committed tail a new hypothesis may start with


class Agreement:
    """LocalAgreement-2 over timed words (start, end, text) in seconds from the clip's start."""

    def __init__(self):
        self.committed: list[tuple[float, float, str]] = []
        self.tentative: list[tuple[float, float, str]] = []
        self.last_end = 0.0

    def insert(self, hypothesis: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
        """Take one pass's words; commit what it agrees on with the previous pass. Returns the words committed."""
        new = [w for w in hypothesis if w[0] > self.last_end - 0.1]
        if new and self.committed and abs(new[0][0] - self.last_end) < 1:
            # Whisper often hears again the last committed words at the start of a pass: drop such a repeat.
            for n in range(1, min(len(self.committed), len(new), NGRAM) + 1):
                if [w[2] for w in self.committed[-n:]] == [w[2] for w in new[:n]]:
                    new = new[n:]
                    break
        agreed = []
        while new and self.tentative and new[0][2] == self.tentative[0][2]:
            agreed.append(new.pop(0))
            self.tentative.pop(0)
        if agreed:
            self.committed += agreed
            self.last_end = agreed[-1][1]
        self.tentative = new
        return agreed

    def finish(self) -> None:
        """The audio is over: the last pass's tentative words are final."""
        self.committed += self.tentative
        self.tentative = []

    @staticmethod
    def text(timed) -> str:
        return "".join(w[2] for w in timed).strip()

    @property
    def shown(self) -> str:
        return self.text(self.committed + self.tentative)


class WhisperStreamingEngine:
    streaming = True

    def __init__(self, transcriber):
        self.transcriber = transcriber
        self.model = (transcriber.model or "").strip()
        if not self.model:
            raise TranscriptionError(
                f"{transcriber.display_name} names no Whisper model: set model to tiny.en or base.",
                retryable=False,
            )
        options = transcriber.options or {}
        self.min_chunk_s = option_float(options, "min_chunk_s", 1.0)
        self.trim_s = option_float(options, "trim_s", 15.0)
        self.final_timeout_s = option_float(options, "final_timeout_s", 30.0)
        self.beam_size = int(options.get("beam_size", 5))
        self.cpu_threads = int(options.get("cpu_threads", 0))
        # A vocabulary candidate's terms, as the batch engine sends them: faster-whisper's hotwords, every pass.
        self.hotwords = vocabulary.prompt_text(vocabulary_terms(transcriber, STREAMING)) or None

    def transcribe(
        self, wav: bytes, language: str | None = None, *, speech_end_s=None, speech_start_s=None, speed=None
    ):
        try:
            audio = decode_wav_mono(wav, target_rate=SAMPLE_RATE)
        except AudioError as exc:
            raise TranscriptionError(f"{exc} Whisper did not run.", retryable=False) from exc
        seconds = len(audio) / SAMPLE_RATE
        self.whisper = load_model(self.model, self.cpu_threads)
        self.language = "en" if self.model.endswith(".en") else base_language(language)
        pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype("<i2").tobytes()
        frames = session.split_frames(pcm, SAMPLE_RATE, session.FRAME_MS)
        speed = float(speed or session.SPEED)
        opened_at = time.perf_counter()
        heard, pacer, passes = session.run_session(self._run(frames, speed))
        figures = session.figures(
            heard,
            pacer,
            speech_end_s=session.speech_end_within(speech_end_s, seconds),
            speech_start_s=session.speech_start_within(speech_start_s, seconds),
            sample_rate=SAMPLE_RATE,
            opened_at=opened_at,
            ended_at=time.perf_counter(),
        )
        return EngineResult(
            text=heard.text,
            audio_seconds=seconds,
            cost=cost_for(seconds, self.transcriber.price_per_minute),
            latency_s=figures.time_to_final_s,
            raw={
                "engine": "faster-whisper streaming",
                "model": self.model,
                "passes": passes,
                **figures.as_dict(),
            },
            stream=figures,
        )

    async def _run(self, frames, speed):
        pacer = session.Pacer(session.FRAME_MS / 1000, speed)
        heard = session.Heard(time.perf_counter())
        received: list[bytes] = []
        audio_done = asyncio.Event()
        arrived = asyncio.Event()

        async def take(frame):
            received.append(frame)
            arrived.set()

        async def sender():
            await pacer.run(frames, take)
            audio_done.set()
            arrived.set()

        sending = asyncio.create_task(sender())
        try:
            passes = await self._listen(received, audio_done, arrived, heard, speed)
            await sending
        finally:
            sending.cancel()
        heard.t0 = pacer.t0
        return heard, pacer, passes

    async def _listen(self, received, audio_done, arrived, heard, speed) -> int:
        """Passes over the growing buffer while the audio arrives, then the last one; how many passes."""
        loop = asyncio.get_running_loop()
        agreement = Agreement()
        state = {"offset_s": 0.0, "prompt": ""}  # where the buffer starts in the clip; the prompt before it
        passes = seen = 0  # passes made; bytes of received audio transcribed so far
        while True:
            done = audio_done.is_set()
            total = sum(len(f) for f in received)
            if not done and (total - seen) / 2 / SAMPLE_RATE < self.min_chunk_s:
                arrived.clear()
                await arrived.wait()
                continue
            if total > seen:
                pcm, seen = b"".join(received), total
                work = loop.run_in_executor(None, self._pass, pcm, state)
                try:
                    timed, segment_ends = await (
                        asyncio.wait_for(work, self.final_timeout_s) if done else work
                    )
                except TimeoutError:
                    raise TranscriptionError(
                        f"Whisper's last pass took more than {self.final_timeout_s:g} s after the end of the audio "
                        "(the server is overloaded): it will be tried again.",
                        retryable=True,
                    ) from None
                passes += 1
                agreement.insert(timed)
                self._trim(agreement, segment_ends, state)
                if not done:
                    heard.partial(agreement.shown)
                    continue
            agreement.finish()  # the audio is over and all of it was transcribed
            heard.final(agreement.text(agreement.committed))
            heard.done()
            return passes

    def _pass(self, pcm: bytes, state: dict):
        """One Whisper pass over the buffer (the audio after state's offset): its timed words, in clip seconds,
        and the ends of its segments."""
        start = int(state["offset_s"] * SAMPLE_RATE)
        audio = np.frombuffer(pcm, dtype="<i2")[start:].astype(np.float32) / 32767
        try:
            segments, _ = self.whisper.transcribe(
                audio,
                language=self.language,
                beam_size=self.beam_size,
                temperature=0.0,
                word_timestamps=True,
                condition_on_previous_text=True,
                initial_prompt=state["prompt"] or None,
                hotwords=self.hotwords,
            )
            segments = list(segments)
        except Exception as exc:
            raise TranscriptionError(
                f"faster-whisper failed on the stream with model {self.model!r}: {type(exc).__name__}: {exc}",
                retryable=False,
            ) from exc
        offset = state["offset_s"]
        timed = [
            (w.start + offset, w.end + offset, w.word)
            for s in segments
            if s.no_speech_prob <= 0.9
            for w in (s.words or [])
        ]
        return timed, [s.end + offset for s in segments]

    def _trim(self, agreement: Agreement, segment_ends: list[float], state: dict) -> None:
        """Cut a buffer longer than trim_s at the end of a segment already committed."""
        buffered = (segment_ends[-1] if segment_ends else 0.0) - state["offset_s"]
        if buffered <= self.trim_s or not agreement.committed or len(segment_ends) < 2:
            return
        cut = max((e for e in segment_ends[:-1] if e <= agreement.last_end), default=None)
        if cut is None or cut <= state["offset_s"]:
            return
        state["offset_s"] = cut
        before = agreement.text([w for w in agreement.committed if w[1] <= cut])
        state["prompt"] = before[-PROMPT_CHARS:]
