"""Transcription engines, one module per provider, each registering its provider (oncore.transcribers.providers).

    engine = get_engine(transcriber)          # a catalogue Transcriber (or anything with the same fields)
    result = engine.transcribe(wav_bytes, language="en")   # EngineResult, or raises TranscriptionError

A streaming entry (mode "streaming") gets its provider's streaming engine (streaming/), whose transcribe also
takes speech_end_s (where the caller stops speaking in the clip) and whose result carries the stream's figures;
`engine.streaming` tells the two apart. Engine classes are imported on first use (the registry names them by
dotted path), so vendor calls never pay for loading the local models.
"""

from .. import providers
from .base import EngineResult, TranscriptionError, cost_for


def get_engine(transcriber):
    """The engine for a catalogue entry's provider and mode; an unknown provider, or a mode its provider has no
    engine for, is a non-retryable TranscriptionError."""
    mode = getattr(transcriber, "mode", providers.BATCH) or providers.BATCH
    provider = providers.get(transcriber.provider)
    if provider is None:
        raise TranscriptionError(
            f"{transcriber.display_name} uses provider {transcriber.provider!r}, which has no engine: "
            f"choose one of {', '.join(providers.names())}.",
            retryable=False,
        )
    if mode not in provider.modes:
        other = providers.BATCH if mode == providers.STREAMING else providers.STREAMING
        raise TranscriptionError(
            f"{transcriber.display_name} is a {mode} entry, but provider {transcriber.provider!r} has no "
            f"{mode} engine: choose one of {', '.join(providers.names(mode))}, or make the entry {other}.",
            retryable=False,
        )
    return provider.engine(mode)(transcriber)


__all__ = ["EngineResult", "TranscriptionError", "cost_for", "get_engine"]
