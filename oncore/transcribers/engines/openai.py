"""OpenAI audio transcriptions (gpt-transcribe; whisper-1 and the gpt-4o transcribe models until their shutdown).

Documented shape implemented (platform.openai.com API reference, "Create transcription"):
    POST {base}/audio/transcriptions, where base ends in /v1 as the SDK's base_url does
    (https://api.openai.com/v1); a base_url without the /v1 (https://api.openai.com) gets it added
    Authorization: Bearer KEY
    multipart/form-data: file (the WAV), model, response_format=json, language (ISO-639-1, optional)
    200 -> {"text": "..."} (gpt-4o models may add "usage"/"logprobs")
    errors -> {"error": {"message": "...", "type": "...", "code": ...}}
Options: base_url (either spelling), timeout_s, connect_timeout_s, prompt (optional text to guide the model).
A vocabulary candidate's terms (vocabulary.py) follow the prompt option's text in `prompt`, comma separated.
"""

from .. import vocabulary
from ..options import HTTP_OPTIONS, STREAM_OPTIONS, Option
from ..providers import BATCH, STREAMING, Mode, Provider, register
from .base import audio_seconds_of, base_language, read_key, vocabulary_terms
from .vendor_http import VendorCall

VENDOR = "OpenAI"
BASE_URL = "https://api.openai.com/v1"


def transcriptions_path(base_url: str) -> str:
    """The SDK's base_url already ends in /v1; an older spelling without it gets /v1 added."""
    return "/audio/transcriptions" if base_url.rstrip("/").endswith("/v1") else "/v1/audio/transcriptions"


def prompt_with_vocabulary(transcriber, mode: str) -> str:
    """The `prompt` the entry sends: its option's text, then a vocabulary candidate's terms as a list of spellings
    (the SDK sends the prompt as one text field; Whisper reads its last 224 tokens, checked in vocabulary.py)."""
    parts = [str((transcriber.options or {}).get("prompt") or "").strip()]
    parts.append(vocabulary.prompt_text(vocabulary_terms(transcriber, mode)))
    return " ".join(p for p in parts if p)


class OpenAIEngine:
    def __init__(self, transcriber):
        self.transcriber = transcriber

    def transcribe(self, wav: bytes, language: str | None = None):
        seconds = audio_seconds_of(wav)
        key = read_key(self.transcriber, VENDOR)
        call = VendorCall(self.transcriber, VENDOR, BASE_URL, key)
        fields = {"model": self.transcriber.model, "response_format": "json"}
        if base_language(language):
            fields["language"] = base_language(language)
        prompt = prompt_with_vocabulary(self.transcriber, BATCH)
        if prompt:
            fields["prompt"] = prompt
        data = call.request(
            "POST",
            call.url(transcriptions_path(call.base_url)),
            data=fields,
            files={"file": ("audio.wav", wav, "audio/wav")},
            headers={"Authorization": f"Bearer {key}"},
        )
        return call.result(call.transcript(data, "text"), seconds, data)


register(
    Provider(
        name="openai",
        label=VENDOR,
        key_env="OPENAI_API_KEY",
        modes={
            BATCH: Mode(
                f"{__name__}.OpenAIEngine",
                (*HTTP_OPTIONS, Option("prompt", "string", "text to guide the model (names, spellings)")),
            ),
            STREAMING: Mode(
                "oncore.transcribers.engines.streaming.openai.OpenAIRealtimeEngine",
                (
                    *STREAM_OPTIONS,
                    Option("prompt", "string", "text to guide the model"),
                    Option("keywords", "list of strings", "words to guide the model"),
                ),
            ),
        },
    )
)
