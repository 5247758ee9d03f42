"""Deepgram pre-recorded transcription.

Documented shape implemented (developers.deepgram.com, "Getting Started" for pre-recorded audio, local file):
    POST {base}/v1/listen?model=nova-3&smart_format=true[&language=en-US]
    Authorization: Token KEY
    Content-Type: audio/wav
    body: the audio bytes
    200 -> {"metadata": {...}, "results": {"channels": [{"alternatives": [{"transcript": "...", ...}]}]}}
    errors -> {"err_code": "...", "err_msg": "...", "request_id": "..."}
Options: base_url, timeout_s, connect_timeout_s, params (extra query parameters, e.g. {"numerals": "false"}).
"""

from .base import audio_seconds_of, read_key
from .vendor_http import VendorCall

VENDOR = "Deepgram"
BASE_URL = "https://api.deepgram.com"
TRANSCRIPT_PATH = "results.channels.0.alternatives.0.transcript"


class DeepgramEngine:
    def __init__(self, transcriber):
        self.transcriber = transcriber

    def transcribe(self, wav: bytes, language: str | None = None):
        seconds = audio_seconds_of(wav)
        key = read_key(self.transcriber, VENDOR)
        call = VendorCall(self.transcriber, VENDOR, BASE_URL, key)
        params = {"model": self.transcriber.model, "smart_format": "true"}
        params.update({str(k): str(v) for k, v in (self.transcriber.options or {}).get("params", {}).items()})
        if language:
            params["language"] = language.replace("_", "-")
        data = call.request(
            "POST",
            call.url("/v1/listen"),
            params=params,
            content=wav,
            headers={"Authorization": f"Token {key}", "Content-Type": "audio/wav"},
        )
        return call.result(call.transcript(data, TRANSCRIPT_PATH), seconds, data)
