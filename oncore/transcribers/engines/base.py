"""What every transcription engine returns and raises, and the helpers they share.

An engine is built from a catalogue entry (duck-typed: `.provider`, `.model`, `.options`, `.api_key_env`,
`.price_per_minute`, `.display_name`, and `.mode` for streaming entries) and has `transcribe(wav, language=None)
-> EngineResult` (a streaming engine's also takes `speech_end_s` and
`speech_start_s`).
Keys are read from the environment variable the entry names, at call time, and never leave the engine:
not in messages, not in `raw`, not in logs.
"""

import os
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from oncore.audio import AudioError, wav_info

from .. import providers, vocabulary

COST_PLACES = Decimal("0.000001")


@dataclass(frozen=True)
class EngineResult:
    text: str
    audio_seconds: float
    cost: Decimal
    latency_s: float
    raw: dict  # the vendor's JSON response, or a small dict for local engines; never holds a key
    # A streaming replay's figures (streaming.session.StreamFigures: time to first partial and to final, partials,
    # revisions, pacing); None for a batch one. A streaming result's latency_s is its time to final.
    stream: object = None


class TranscriptionError(Exception):
    """A transcription that did not happen, with a message that says what to do.

    retryable: whether the same request may succeed later (rate limits, 5xx, timeouts).
    retry_after: seconds the vendor asked us to wait (Retry-After header), when it said so.
    """

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


def cost_for(audio_seconds: float, price_per_minute) -> Decimal:
    """Audio minutes x list price per minute, in USD, to 6 decimal places."""
    minutes = Decimal(str(audio_seconds)) / Decimal(60)
    return (minutes * Decimal(str(price_per_minute or 0))).quantize(COST_PLACES, rounding=ROUND_HALF_UP)


def audio_seconds_of(wav: bytes) -> float:
    """Duration of a WAV clip; unreadable audio is a non-retryable TranscriptionError."""
    try:
        return wav_info(wav).duration_s
    except AudioError as exc:
        raise TranscriptionError(f"{exc} Nothing was sent to the transcriber.", retryable=False) from exc


def needs_key(transcriber) -> bool:
    """Whether the entry's requests carry a key: always for a provider registered with a key variable (the
    vendors), otherwise only when the entry names one (a generic endpoint)."""
    provider = providers.get(transcriber.provider)
    return bool(provider and provider.keyed) or bool((getattr(transcriber, "api_key_env", "") or "").strip())


def key_problem(transcriber, vendor: str | None = None) -> str:
    """Why the catalogue entry cannot send a request for want of its key on this server ("" when the key is set or
    none is needed): what read_key refuses with, and what the candidate estimate and the results cards show."""
    if not needs_key(transcriber):
        return ""
    env = (getattr(transcriber, "api_key_env", "") or "").strip()
    vendor = vendor or providers.label(transcriber.provider)
    if not env:
        return (
            f"{transcriber.display_name} has no key variable: set api_key_env on the catalogue entry "
            f"to the name of the environment variable that holds the {vendor} key."
        )
    if not os.environ.get(env, "").strip():
        return (
            f"{env} is not set on this server: set it to your {vendor} API key "
            f"(needed by {transcriber.display_name})."
        )
    return ""


def read_key(transcriber, vendor: str) -> str:
    """The vendor key from the environment variable the catalogue entry names."""
    problem = key_problem(transcriber, vendor)
    if problem:
        raise TranscriptionError(problem, retryable=False)
    return os.environ[transcriber.api_key_env.strip()].strip()


def base_language(language: str | None) -> str | None:
    """'en-US' / 'en_us' / 'EN' -> 'en'; None or '' -> None."""
    if not language:
        return None
    return language.replace("_", "-").split("-")[0].strip().lower() or None


def option_params(options: dict) -> dict:
    """The catalogue entry's extra query parameters (option `params`), an object; {} when there are none."""
    extra = (options or {}).get("params") or {}
    if not isinstance(extra, dict):
        raise TranscriptionError(
            f"The transcriber option 'params' must be an object of query parameters, not {extra!r}: "
            "fix the catalogue entry.",
            retryable=False,
        )
    return extra


def option_float(options: dict, name: str, default: float) -> float:
    value = (options or {}).get(name, default)
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TranscriptionError(
            f"The transcriber option {name!r} must be a number of seconds, not {value!r}: fix the catalogue entry.",
            retryable=False,
        ) from None
    if value <= 0:
        raise TranscriptionError(
            f"The transcriber option {name!r} must be above 0, not {value!r}: fix the catalogue entry.",
            retryable=False,
        )
    return value


def vocabulary_terms(transcriber, mode: str = providers.BATCH) -> list[str]:
    """The vocabulary the entry sends ([] for none), checked against its provider's limits: a list the vendor
    would refuse (or silently cut) is a non-retryable TranscriptionError naming the limit."""
    terms = vocabulary.terms_of(transcriber)
    if not terms:
        return []
    problems = vocabulary.problems(transcriber.provider, mode, transcriber.model, terms)
    if problems:
        raise TranscriptionError(" ".join(problems), retryable=False)
    return terms
