"""ElevenLabs speech to text (Scribe).

Documented shape implemented (elevenlabs.io/docs API reference, "Speech to Text" / "Create transcript"):
    POST {base}/v1/speech-to-text
    xi-api-key: KEY
    multipart/form-data: file (the WAV), model_id (scribe_v2; scribe_v1 was removed in July 2026), language_code
        (optional),
        tag_audio_events=false (default here: "(laughter)"-style tags are not words the caller said)
    200 -> {"language_code": "en", "language_probability": 0.98, "text": "...", "words": [...]}
    errors -> {"detail": {"status": "...", "message": "..."}}, or FastAPI-style {"detail": [{"msg": ...}]} on 422
Options: base_url, timeout_s, connect_timeout_s, tag_audio_events (true to keep the event tags).
A vocabulary candidate's terms (vocabulary.py) go in the form field `keyterms`, a JSON list, as the SDK sends them.
"""

import json
from dataclasses import replace

from ..options import HTTP_OPTIONS, STREAM_OPTIONS, Option
from ..providers import BATCH, STREAMING, Mode, Provider, register
from .base import audio_seconds_of, base_language, cost_for, read_key, vocabulary_terms
from .vendor_http import VendorCall

VENDOR = "ElevenLabs"
# "When more than 100 keyterms are provided, a minimum billable duration of 20 seconds applies per request" (the SDK's
# speech_to_text.convert docstring).
MANY_KEYTERMS, MIN_BILLED_S = 100, 20.0
BASE_URL = "https://api.elevenlabs.io"


class ElevenLabsEngine:
    def __init__(self, transcriber):
        self.transcriber = transcriber

    def transcribe(self, wav: bytes, language: str | None = None):
        seconds = audio_seconds_of(wav)
        key = read_key(self.transcriber, VENDOR)
        call = VendorCall(self.transcriber, VENDOR, BASE_URL, key)
        tag_events = bool((self.transcriber.options or {}).get("tag_audio_events", False))
        fields = {"model_id": self.transcriber.model, "tag_audio_events": "true" if tag_events else "false"}
        if base_language(language):
            fields["language_code"] = base_language(language)
        terms = vocabulary_terms(self.transcriber, BATCH)
        if terms:  # the SDK's raw client sends the list as one form field: "keyterms": json.dumps(keyterms)
            fields["keyterms"] = json.dumps(terms)
        data = call.request(
            "POST",
            call.url("/v1/speech-to-text"),
            data=fields,
            files={"file": ("audio.wav", wav, "audio/wav")},
            headers={"xi-api-key": key},
        )
        result = call.result(call.transcript(data, "text"), seconds, data)
        if len(terms) > MANY_KEYTERMS:  # the SDK's docstring: then at least 20 s is billed per request
            result = replace(
                result, cost=cost_for(max(seconds, MIN_BILLED_S), self.transcriber.price_per_minute)
            )
        return result


register(
    Provider(
        name="elevenlabs",
        label=VENDOR,
        key_env="ELEVENLABS_API_KEY",
        modes={
            BATCH: Mode(
                f"{__name__}.ElevenLabsEngine",
                (
                    *HTTP_OPTIONS,
                    Option(
                        "tag_audio_events", "boolean", "keep the event tags, e.g. (laughter) (default false)"
                    ),
                ),
            ),
            STREAMING: Mode(
                "oncore.transcribers.engines.streaming.elevenlabs.ElevenLabsRealtimeEngine", STREAM_OPTIONS
            ),
        },
    )
)
