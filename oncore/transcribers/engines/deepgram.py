"""Deepgram pre-recorded transcription.

Documented shape implemented (developers.deepgram.com, "Getting Started" for pre-recorded audio, local file):
    POST {base}/v1/listen?model=nova-3&smart_format=true[&language=en-US]
    Authorization: Token KEY
    Content-Type: application/octet-stream (as deepgram-sdk sends it; Deepgram reads the format from the bytes)
    body: the audio bytes
    200 -> {"metadata": {...}, "results": {"channels": [{"alternatives": [{"transcript": "...", ...}]}]}}
    errors -> {"err_code": "...", "err_msg": "...", "request_id": "..."}
A vocabulary candidate's terms (vocabulary.py) go in `keyterm`, one per term, as deepgram-sdk sends a list.
Options: base_url, timeout_s, connect_timeout_s, params (extra query parameters, encoded as deepgram-sdk encodes
them: true/false for booleans, one repeated key per item of a list, e.g. {"numerals": false, "keyterm": ["Siobhan",
"O'Brien"]} -> numerals=false&keyterm=Siobhan&keyterm=O%27Brien; null leaves a parameter out).
"""

from ..options import HTTP_OPTIONS, PARAMS_OPTION, STREAM_OPTIONS
from ..providers import BATCH, STREAMING, Mode, Provider, register
from .base import audio_seconds_of, option_params, read_key, vocabulary_terms
from .vendor_http import VendorCall

VENDOR = "Deepgram"
BASE_URL = "https://api.deepgram.com"
TRANSCRIPT_PATH = "results.channels.0.alternatives.0.transcript"


def query_value(value) -> str:
    """One query value as deepgram-sdk writes it: booleans lower case, everything else as text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def query_params(params: dict) -> list[tuple[str, str]]:
    """(name, value) pairs in deepgram-sdk's encoding: a list becomes one pair per item; None is left out."""
    pairs = []
    for name, value in params.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            if item is not None:
                pairs.append((str(name), query_value(item)))
    return pairs


class DeepgramEngine:
    def __init__(self, transcriber):
        self.transcriber = transcriber

    def transcribe(self, wav: bytes, language: str | None = None):
        seconds = audio_seconds_of(wav)
        key = read_key(self.transcriber, VENDOR)
        call = VendorCall(self.transcriber, VENDOR, BASE_URL, key)
        extra = option_params(self.transcriber.options)
        params = {"model": self.transcriber.model, "smart_format": True, **extra}
        terms = vocabulary_terms(self.transcriber, BATCH)
        if terms:  # deepgram-sdk sends a list as one `keyterm` per item: keyterm=Siobhan&keyterm=O%27Brien
            params["keyterm"] = terms
        if language:
            params["language"] = language.replace("_", "-")
        data = call.request(
            "POST",
            call.url("/v1/listen"),
            params=query_params(params),
            content=wav,
            headers={"Authorization": f"Token {key}", "Content-Type": "application/octet-stream"},
        )
        return call.result(call.transcript(data, TRANSCRIPT_PATH), seconds, data)


register(
    Provider(
        name="deepgram",
        label=VENDOR,
        key_env="DEEPGRAM_API_KEY",
        modes={
            BATCH: Mode(f"{__name__}.DeepgramEngine", (*HTTP_OPTIONS, PARAMS_OPTION)),
            STREAMING: Mode(
                "oncore.transcribers.engines.streaming.deepgram.DeepgramLiveEngine",
                (*STREAM_OPTIONS, PARAMS_OPTION),
            ),
        },
    )
)
