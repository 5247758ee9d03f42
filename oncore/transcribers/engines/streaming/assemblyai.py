"""AssemblyAI Universal-Streaming (API v3): turns over a WebSocket.

Documented shape implemented (assemblyai.com/docs streaming API reference; messages as the assemblyai 1.8 SDK's
streaming.v3 client sends and reads them, captured in tests/transcribers/captured/streaming/assemblyai.json):
    GET {base}/v3/ws?sample_rate=8000&encoding=pcm_s16le&speech_model=u3-rt-pro   (base wss://streaming.assemblyai.com)
        [&format_turns=true for the universal-streaming models, whose turns come unformatted first]
    Authorization: KEY, AssemblyAI-Version: 2025-05-12 (the SDK's headers)
    server -> {"type": "Begin", "id": ..., "expires_at": ...} once the session is open
    client -> binary frames of 16-bit PCM, 50 ms each (AssemblyAI takes chunks of 50 to 1000 ms)
           -> {"type": "Terminate"} at the end of the audio
    server -> {"type": "Turn", "turn_order": n, "end_of_turn": false, "transcript": ...} as the turn grows, then
              the turn with "end_of_turn": true (and "turn_is_formatted": true once formatted), and
              {"type": "Termination", "audio_duration_seconds": ..., "session_duration_seconds": ...} before it
              closes.
    errors -> {"type": "Error", "error": ..., "error_code": ...} or a close code from the SDK's list
              (RealTimeErrorCodes): 1008 (an unauthorized key), 3006/3007/4000-4034/4100/4101 are the request's
              fault (not retried); 3005, 3009, 4102, 1011, 1013 are the server's or a limit's (retried).
AssemblyAI bills a streaming session by how long it was open, not by the audio sent: the cost is the session's
duration times the price. Options: base_url, connect_timeout_s, final_timeout_s, params (extra query parameters;
lists and objects JSON-encoded as the SDK does, e.g. {"keyterms_prompt": ["Siobhan"]}).
"""

import json

from ...providers import STREAMING
from ..base import TranscriptionError, option_params, vocabulary_terms
from .ws import WebSocketEngine, bool_text, query

# The SDK's RealTimeErrorCodes that a second attempt cannot fix.
NOT_RETRYABLE = {
    1008,
    3006,
    3007,
    3008,
    4000,
    4001,
    4002,
    4003,
    4004,
    4008,
    4010,
    4029,
    4030,
    4031,
    4032,
    4033,
}
NOT_RETRYABLE |= {4034, 4100, 4101, 4103}
CODES = {
    1008: "unauthorized connection",
    1013: "temporary server condition",
    3005: "server error",
    3006: "input validation error",
    3007: "audio chunk duration violation",
    3008: "session expired: maximum session duration exceeded",
    3009: "too many concurrent sessions",
    4001: "not authorized",
    4002: "insufficient funds",
    4003: "a paid-only feature",
    4029: "audio sent too fast",
    4031: "session idle for too long",
    4032: "audio duration is too short",
    4033: "audio duration is too long",
    4100: "invalid JSON",
    4101: "a message with an invalid schema",
    4102: "the account's allowed number of streams is exceeded",
}


class AssemblyAIStreamingEngine(WebSocketEngine):
    vendor = "AssemblyAI"
    default_base_url = "wss://streaming.assemblyai.com"
    frame_ms = 50

    @property
    def format_turns(self) -> bool:
        return self.transcriber.model.startswith("universal-streaming")

    def url(self, base_url, sample_rate, language):
        extra = dict(option_params(self.options))
        terms = vocabulary_terms(self.transcriber, STREAMING)
        if terms:  # StreamingParameters(keyterms_prompt=[...]): the SDK's _build_uri JSON-encodes the list
            extra["keyterms_prompt"] = terms
        params = [("sample_rate", str(sample_rate)), ("encoding", "pcm_s16le")]
        params.append(("speech_model", self.transcriber.model))
        if self.format_turns:
            params.append(("format_turns", "true"))
        for name, value in extra.items():
            if isinstance(value, bool):
                value = bool_text(value)
            elif isinstance(value, list | dict):
                value = json.dumps(value)
            params.append((str(name), str(value)))
        return query(f"{base_url}/v3/ws", params)

    def headers(self, key):
        return {"Authorization": key, "AssemblyAI-Version": "2025-05-12"}

    async def greet(self, ws, sample_rate, language):
        while True:
            data = json.loads(await ws.recv())
            if data.get("type") == "Begin":
                return
            self._error(data)

    def end_of_audio(self):
        return [json.dumps({"type": "Terminate"})]

    def handle(self, data, heard):
        kind = data.get("type")
        if kind == "Turn":
            text = str(data.get("transcript") or "")
            final = data.get("end_of_turn") and (data.get("turn_is_formatted") or not self.format_turns)
            (heard.final if final else heard.partial)(text)
            return False
        if kind == "Termination":
            return True
        self._error(data)
        return False  # SpeechStarted, Heartbeat, Warning, Silence

    def _error(self, data: dict) -> None:
        if data.get("type") == "Error" or ("error" in data and "type" not in data):
            code = data.get("error_code")
            raise TranscriptionError(
                f"{self.vendor} reported an error in the stream{f' ({code})' if code else ''}: "
                f"{data.get('error') or 'no reason given'}",
                retryable=code not in NOT_RETRYABLE,
            )

    def close_error(self, code, reason):
        meaning = CODES.get(code, "")
        said = "; ".join(part for part in (meaning, reason) if part) or "no reason given"
        if code in (1008, 4001):
            return TranscriptionError(
                f"{self.vendor} refused the key in {self.transcriber.api_key_env} ({code}: {said}).",
                retryable=False,
            )
        if code in NOT_RETRYABLE:
            return TranscriptionError(f"{self.vendor} closed the session ({code}: {said}).", retryable=False)
        return TranscriptionError(
            f"{self.vendor} closed the session ({code}: {said}): it will be tried again.", retryable=True
        )

    def billed_seconds(self, audio_seconds, figures):
        return max(audio_seconds, figures.session_s)
