"""Transcription engines, one module per provider.

    engine = get_engine(transcriber)          # a catalogue Transcriber (or anything with the same fields)
    result = engine.transcribe(wav_bytes, language="en")   # EngineResult, or raises TranscriptionError

A streaming entry (mode "streaming") gets its provider's streaming engine (streaming/), whose transcribe also
takes speech_end_s (where the caller stops speaking in the clip) and whose result carries the stream's figures;
`engine.streaming` tells the two apart. Provider modules are imported on first use, so vendor calls never pay for
loading the local models.
"""

from importlib import import_module

from .base import EngineResult, TranscriptionError, cost_for
from .streaming import STREAMING_ENGINES

ENGINES = {
    "faster_whisper": ("faster_whisper", "FasterWhisperEngine"),
    "pocketsphinx": ("pocketsphinx", "PocketSphinxEngine"),
    "deepgram": ("deepgram", "DeepgramEngine"),
    "openai": ("openai", "OpenAIEngine"),
    "elevenlabs": ("elevenlabs", "ElevenLabsEngine"),
    "assemblyai": ("assemblyai", "AssemblyAIEngine"),
    "generic": ("generic", "GenericEngine"),
}


def get_engine(transcriber):
    """The engine for a catalogue entry's provider and mode; an unknown provider, or a streaming entry of a
    provider without a streaming engine, is a non-retryable TranscriptionError."""
    if getattr(transcriber, "mode", "batch") == "streaming":
        try:
            module_name, class_name = STREAMING_ENGINES[transcriber.provider]
        except KeyError:
            raise TranscriptionError(
                f"{transcriber.display_name} is a streaming entry, but provider {transcriber.provider!r} has no "
                f"streaming engine: choose one of {', '.join(sorted(STREAMING_ENGINES))}, or make the entry batch.",
                retryable=False,
            ) from None
        module = import_module(f"{__name__}.streaming.{module_name}")
        return getattr(module, class_name)(transcriber)
    try:
        module_name, class_name = ENGINES[transcriber.provider]
    except KeyError:
        raise TranscriptionError(
            f"{transcriber.display_name} uses provider {transcriber.provider!r}, which has no engine: "
            f"choose one of {', '.join(sorted(ENGINES))}.",
            retryable=False,
        ) from None
    module = import_module(f"{__name__}.{module_name}")
    return getattr(module, class_name)(transcriber)


__all__ = ["ENGINES", "STREAMING_ENGINES", "EngineResult", "TranscriptionError", "cost_for", "get_engine"]
