"""PocketSphinx (local, offline): the en-us acoustic and language model shipped in the pocketsphinx wheel.

Weak on conversational and telephone speech; it is in the catalogue as a contrast, not a contender.
One decoder per process, created on first use; decoders are not thread-safe, so calls are serialized.
"""

import threading
import time

import numpy as np

from oncore.audio import AudioError, decode_wav_mono

from ..providers import BATCH, Mode, Provider, register
from .base import EngineResult, TranscriptionError, cost_for

SAMPLE_RATE = 16000
SHIPPED_MODELS = {"en-us", ""}

_decoder = None
_lock = threading.Lock()


def _get_decoder():
    global _decoder
    if _decoder is None:
        from pocketsphinx import Decoder

        _decoder = Decoder(samprate=SAMPLE_RATE, loglevel="FATAL")
    return _decoder


class PocketSphinxEngine:
    def __init__(self, transcriber):
        if (transcriber.model or "").strip().lower() not in SHIPPED_MODELS:
            raise TranscriptionError(
                f"PocketSphinx has only the en-us model offline, not {transcriber.model!r}: "
                "set the catalogue entry's model to en-us.",
                retryable=False,
            )
        self.transcriber = transcriber

    def transcribe(self, wav: bytes, language: str | None = None):
        started = time.perf_counter()
        try:
            audio = decode_wav_mono(wav, target_rate=SAMPLE_RATE)
        except AudioError as exc:
            raise TranscriptionError(f"{exc} PocketSphinx did not run.", retryable=False) from exc
        pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype(np.int16).tobytes()
        with _lock:
            decoder = _get_decoder()
            decoder.start_utt()
            decoder.process_raw(pcm, no_search=False, full_utt=True)
            decoder.end_utt()
            hypothesis = decoder.hyp()
        text = hypothesis.hypstr.strip() if hypothesis is not None else ""
        seconds = len(audio) / SAMPLE_RATE
        return EngineResult(
            text=text,
            audio_seconds=seconds,
            cost=cost_for(seconds, self.transcriber.price_per_minute),
            latency_s=time.perf_counter() - started,
            raw={"engine": "pocketsphinx", "model": "en-us", "text": text},
        )


register(
    Provider(
        name="pocketsphinx",
        label="PocketSphinx (local)",
        local=True,
        models=("en-us",),
        modes={BATCH: Mode(f"{__name__}.PocketSphinxEngine")},
    )
)
