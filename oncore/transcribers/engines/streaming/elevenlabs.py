"""ElevenLabs realtime speech to text (Scribe v2 Realtime) over a WebSocket.

Documented shape implemented (elevenlabs.io/docs realtime speech-to-text API reference; messages as the
elevenlabs 2.78 SDK's speech_to_text.realtime client sends and reads them, captured in
tests/transcribers/captured/streaming/elevenlabs.json):
    GET {base}/v1/speech-to-text/realtime?model_id=scribe_v2_realtime&audio_format=pcm_8000
        &commit_strategy=manual[&language_code=en]&include_timestamps=false      (base wss://api.elevenlabs.io)
    xi-api-key: KEY
    server -> {"message_type": "session_started", "session_id": ..., "config": {...}}
    client -> {"message_type": "input_audio_chunk", "audio_base_64": ..., "commit": false, "sample_rate": 8000,
               "previous_text": null} every 20 ms (16-bit PCM at one of the rates it takes: 8, 16, 22.05, 24,
               44.1 or 48 kHz; the clip's own rate when it is one of them)
           -> the same with "audio_base_64": "" and "commit": true at the end of the audio (manual commit)
    server -> {"message_type": "partial_transcript", "text": ...} as the segment grows, then
              {"message_type": "committed_transcript", "text": ...} once committed
    errors -> {"message_type": "auth_error" | "quota_exceeded" | "rate_limited" | ..., "error": ...}: a key,
              quota, input or terms problem is not retried; rate limits, throttles, overflows and the
              transcriber's own errors are; or the handshake refused with an HTTP status.
Options: base_url, connect_timeout_s, final_timeout_s.
"""

import base64
import json

from ...providers import STREAMING
from ..base import TranscriptionError, base_language, vocabulary_terms
from .ws import WebSocketEngine, bool_text, query

NOT_RETRYABLE = {
    "auth_error",
    "quota_exceeded",
    "unaccepted_terms_error",
    "input_error",
    "session_time_limit_exceeded",
    "chunk_size_exceeded",
    "insufficient_audio_activity",
}
RETRYABLE = {
    "error",
    "commit_throttled",
    "transcriber_error",
    "rate_limited",
    "queue_overflow",
    "resource_exhausted",
}


class ElevenLabsRealtimeEngine(WebSocketEngine):
    vendor = "ElevenLabs"
    default_base_url = "wss://api.elevenlabs.io"
    sample_rates = (8000, 16000, 22050, 24000, 44100, 48000)

    def url(self, base_url, sample_rate, language):
        self.sample_rate = sample_rate
        params = [
            ("model_id", self.transcriber.model),
            ("audio_format", f"pcm_{sample_rate}"),
            ("commit_strategy", "manual"),
        ]
        if base_language(language):
            params.append(("language_code", base_language(language)))
        params.append(("include_timestamps", bool_text(False)))
        # The SDK's _build_websocket_url: one `keyterms` per term, after include_timestamps.
        params += [("keyterms", term) for term in vocabulary_terms(self.transcriber, STREAMING)]
        return query(f"{base_url}/v1/speech-to-text/realtime", params)

    def headers(self, key):
        return {"xi-api-key": key}

    async def greet(self, ws, sample_rate, language):
        while True:
            data = json.loads(await ws.recv())
            if data.get("message_type") == "session_started":
                return
            self._error(data)

    def _chunk(self, pcm: bytes, commit: bool) -> str:
        message = {
            "message_type": "input_audio_chunk",
            "audio_base_64": base64.b64encode(pcm).decode(),
            "commit": commit,
            "sample_rate": self.sample_rate,
        }
        if not commit:
            message["previous_text"] = None
        return json.dumps(message)

    def frame(self, pcm):
        return self._chunk(pcm, commit=False)

    def end_of_audio(self):
        return [self._chunk(b"", commit=True)]

    def handle(self, data, heard):
        kind = data.get("message_type")
        if kind == "partial_transcript":
            heard.partial(str(data.get("text") or ""))
        elif kind == "committed_transcript":
            heard.final(str(data.get("text") or ""))
            return self.ended
        else:
            self._error(data)
        return False

    def _error(self, data: dict) -> None:
        kind = data.get("message_type")
        if kind not in NOT_RETRYABLE and kind not in RETRYABLE:
            return  # session_started again, committed_transcript_with_timestamps, a type added later
        said = data.get("error") or data.get("message") or "no reason given"
        if kind == "auth_error":
            raise TranscriptionError(
                f"{self.vendor} rejected the key in {self.transcriber.api_key_env}: {said}", retryable=False
            )
        raise TranscriptionError(
            f"{self.vendor} reported {kind.replace('_', ' ')} in the stream: {said}",
            retryable=kind in RETRYABLE,
        )
