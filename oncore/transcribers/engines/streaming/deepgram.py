"""Deepgram live transcription: /v1/listen over a WebSocket.

Documented shape implemented (developers.deepgram.com "Live audio" API reference; messages as deepgram-sdk 7.17's
listen.v1 socket client sends and reads them, captured in tests/transcribers/captured/streaming/deepgram.json):
    GET {base}/v1/listen?model=nova-3&encoding=linear16&sample_rate=8000&channels=1&interim_results=true
        &smart_format=true[&language=en-US]        (upgraded to a WebSocket; base wss://api.deepgram.com)
    Authorization: Token KEY
    client -> binary frames of 16-bit little-endian PCM (20 ms each here, at the clip's own rate)
           -> {"type": "Finalize"} (flush what is pending as final), then {"type": "CloseStream"}
    server -> {"type": "Results", "is_final": false, "channel": {"alternatives": [{"transcript": ...}]}, ...}
              (interim results of the segment being spoken), then the segment with "is_final": true
              ("from_finalize": true when the Finalize flushed it), {"type": "SpeechStarted"},
              {"type": "UtteranceEnd"}; after CloseStream {"type": "Metadata", ...} and a normal close.
    errors -> the handshake refused with an HTTP status (401 for a bad key, with {"err_msg": ...}); in a session,
              a close frame: 1008 DATA-0000 (the audio cannot be decoded: not retried), 1011 NET-0000/NET-0001
              and other server errors (retried).
Options: base_url, connect_timeout_s, final_timeout_s, params (extra query parameters, encoded as the batch
engine encodes them, e.g. {"endpointing": 300, "keyterm": ["Siobhan"]}).
"""

import json

from ...providers import STREAMING
from ..base import TranscriptionError, option_params, vocabulary_terms
from ..deepgram import query_params
from .ws import WebSocketEngine, query


class DeepgramLiveEngine(WebSocketEngine):
    vendor = "Deepgram"
    default_base_url = "wss://api.deepgram.com"

    def url(self, base_url, sample_rate, language):
        extra = option_params(self.options)
        params = {
            "model": self.transcriber.model,
            "encoding": "linear16",
            "sample_rate": sample_rate,
            "channels": 1,
            "interim_results": True,
            "smart_format": True,
            **extra,
        }
        terms = vocabulary_terms(self.transcriber, STREAMING)
        if (
            terms
        ):  # one `keyterm` per term, as the batch engine and deepgram-sdk's listen.v1 connect send them
            params["keyterm"] = terms
        if language:
            params["language"] = language.replace("_", "-")
        return query(f"{base_url}/v1/listen", query_params(params))

    def headers(self, key):
        return {"Authorization": f"Token {key}"}

    def end_of_audio(self):
        return [json.dumps({"type": "Finalize"}), json.dumps({"type": "CloseStream"})]

    def handle(self, data, heard):
        kind = data.get("type")
        if kind == "Results":
            alternatives = (data.get("channel") or {}).get("alternatives") or [{}]
            text = str(alternatives[0].get("transcript") or "")
            (heard.final if data.get("is_final") else heard.partial)(text)
            return False
        if kind == "Metadata":
            return self.ended
        if kind == "Error":
            said = data.get("description") or data.get("message") or data.get("variant") or "no reason given"
            raise TranscriptionError(f"{self.vendor} reported an error in the stream: {said}", retryable=True)
        return False  # SpeechStarted, UtteranceEnd

    def close_error(self, code, reason):
        if code == 1008:
            return TranscriptionError(
                f"{self.vendor} could not decode the audio ({code}: {reason or 'DATA-0000'}): the clip is sent "
                "as 16-bit PCM at its own rate; check the recording.",
                retryable=False,
            )
        return super().close_error(code, reason)
