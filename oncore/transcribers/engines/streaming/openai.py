"""OpenAI realtime transcription: a transcription session over the Realtime API's WebSocket.

Documented shape implemented (developers.openai.com "Realtime transcription" guide and the Realtime API's client
and server events; messages as the openai 3.57 SDK's realtime client sends them, captured in
tests/transcribers/captured/streaming/openai.json):
    GET {base}/realtime?intent=transcription      (base wss://api.openai.com/v1; no model in the URL)
    Authorization: Bearer KEY
    server -> {"type": "session.created", ...}
    client -> {"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
                  "format": {"type": "audio/pcm", "rate": 24000}, "transcription": {"model": ..., "language": ..},
                  "turn_detection": null}}}}          (the live models take no server VAD: the client commits)
    server -> {"type": "session.updated", ...}
    client -> {"type": "input_audio_buffer.append", "audio": base64 of 16-bit PCM at 24 kHz} every 20 ms
           -> {"type": "input_audio_buffer.commit"} at the end of the audio
    server -> {"type": "conversation.item.input_audio_transcription.delta", "item_id": ..., "delta": ...} as
              speech arrives; {"type": "input_audio_buffer.committed", "item_id": ...}; then
              {"type": "conversation.item.input_audio_transcription.completed", "item_id": ..., "transcript": ...}
    errors -> {"type": "error", "error": {"type", "code", "message", ...}} (invalid_request_error is the request's
              fault and not retried; server errors and rate limits are), a transcription's
              {"type": "conversation.item.input_audio_transcription.failed", "error": {...}}, or the handshake
              refused with 401 for a bad key.
Deltas only ever extend the transcript, so an OpenAI stream has no revisions. Options: base_url (with or without
the /v1), connect_timeout_s, final_timeout_s, prompt, keywords (a list of words to guide the model).
"""

import base64
import json

from ...providers import STREAMING
from ..base import TranscriptionError, base_language
from ..openai import prompt_with_vocabulary
from .ws import WebSocketEngine, query

RETRYABLE_ERRORS = {"server_error", "rate_limit_exceeded", "rate_limit_error"}


class OpenAIRealtimeEngine(WebSocketEngine):
    vendor = "OpenAI"
    default_base_url = "wss://api.openai.com/v1"
    sample_rates = (24000,)

    def url(self, base_url, sample_rate, language):
        base = base_url.rstrip("/")
        if not base.endswith("/v1"):
            base += "/v1"
        return query(f"{base}/realtime", [("intent", "transcription")])

    def headers(self, key):
        return {"Authorization": f"Bearer {key}"}

    async def greet(self, ws, sample_rate, language):
        self.items: dict[str, str] = {}
        self.committed: str | None = None
        await self._expect(ws, "session.created")
        transcription = {"model": self.transcriber.model}
        if base_language(language):
            transcription["language"] = base_language(language)
        prompt = prompt_with_vocabulary(self.transcriber, STREAMING)  # the prompt option, then a vocabulary
        if prompt:
            transcription["prompt"] = prompt
        if self.options.get("keywords"):
            transcription["keywords"] = [str(k) for k in self.options["keywords"]]
        update = {
            "type": "session.update",
            "session": {
                "type": "transcription",
                "audio": {
                    "input": {
                        "format": {"type": "audio/pcm", "rate": sample_rate},
                        "transcription": transcription,
                        "turn_detection": None,
                    }
                },
            },
        }
        await ws.send(json.dumps(update))
        await self._expect(ws, "session.updated")

    async def _expect(self, ws, kind: str) -> None:
        while True:
            data = json.loads(await ws.recv())
            if data.get("type") == kind:
                return
            self._error(data)

    def frame(self, pcm):
        return json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm).decode()})

    def end_of_audio(self):
        return [json.dumps({"type": "input_audio_buffer.commit"})]

    def handle(self, data, heard):
        kind = data.get("type")
        item = data.get("item_id")
        if kind == "conversation.item.input_audio_transcription.delta":
            self.items[item] = self.items.get(item, "") + str(data.get("delta") or "")
            heard.partial(self.items[item])
        elif kind == "input_audio_buffer.committed":
            self.committed = item
        elif kind == "conversation.item.input_audio_transcription.completed":
            heard.final(str(data.get("transcript") or ""))
            return self.ended and item == self.committed
        elif kind == "conversation.item.input_audio_transcription.failed":
            error = data.get("error") or {}
            raise TranscriptionError(
                f"{self.vendor} could not transcribe the audio: {error.get('message') or 'no reason given'}",
                retryable=error.get("type") in RETRYABLE_ERRORS or error.get("code") in RETRYABLE_ERRORS,
            )
        else:
            self._error(data)
        return False

    def _error(self, data: dict) -> None:
        if data.get("type") != "error":
            return
        error = data.get("error") or {}
        kind, code = error.get("type"), error.get("code")
        said = error.get("message") or code or "no reason given"
        if code == "invalid_api_key":
            raise TranscriptionError(
                f"{self.vendor} rejected the key in {self.transcriber.api_key_env}: {said}", retryable=False
            )
        raise TranscriptionError(
            f"{self.vendor} reported an error in the session ({kind or 'error'}): {said}",
            retryable=kind in RETRYABLE_ERRORS or code in RETRYABLE_ERRORS,
        )

    def close_error(self, code, reason):
        if "invalid_api_key" in (reason or ""):
            return TranscriptionError(
                f"{self.vendor} rejected the key in {self.transcriber.api_key_env} ({code}: {reason}).",
                retryable=False,
            )
        return super().close_error(code, reason)
