"""Transcription engines, one module per provider.

    engine = get_engine(transcriber)          # a catalogue Transcriber (or anything with the same fields)
    result = engine.transcribe(wav_bytes, language="en")   # EngineResult, or raises TranscriptionError

Provider modules are imported on first use, so vendor calls never pay for loading the local models.
"""

from importlib import import_module

from .base import EngineResult, TranscriptionError, cost_for

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
    """The engine for a catalogue entry's provider; an unknown provider is a non-retryable TranscriptionError."""
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


__all__ = ["ENGINES", "EngineResult", "TranscriptionError", "cost_for", "get_engine"]
