"""The four fake streaming vendors (see stream_servers.py for the scenarios and how to use them): Deepgram live,
AssemblyAI Universal-Streaming v3, an OpenAI realtime transcription session and ElevenLabs Scribe Realtime, each
in its documented shapes (the ones the official SDKs exchange, tests/transcribers/captured/streaming/)."""

import base64

from .stream_servers import FakeStreamVendor, StreamClosed, new_id, now_ms


class FakeDeepgramLive(FakeStreamVendor):
    vendor = "Deepgram"
    provider = "deepgram"
    model = "nova-3"
    key_env = "DEEPGRAM_API_KEY"
    path = "/v1/listen"

    def authorized(self, headers):
        return headers.get("authorization") == f"Token {self.key}"

    def error_body(self, status):
        return {
            "err_code": "INVALID_AUTH" if status == 401 else "ERROR",
            "err_msg": f"Fake error {status}.",
            "request_id": new_id(),
        }

    def check_query(self, query):
        if query.get("encoding") != "linear16" or not query.get("sample_rate", "").isdigit():
            return "raw audio needs encoding=linear16 and a sample_rate"
        if not query.get("model"):
            return "no model"
        return None

    def results(self, text: str, final: bool, audio_s: float) -> dict:
        words = text.split()
        step = audio_s / max(len(words), 1)
        return {
            "type": "Results",
            "channel_index": [0, 1],
            "duration": round(audio_s, 3),
            "start": 0.0,
            "is_final": final,
            "speech_final": final,
            "channel": {
                "alternatives": [
                    {
                        "transcript": text,
                        "confidence": 0.97,
                        "words": [
                            {
                                "word": w.lower().strip(",.?"),
                                "start": round(i * step, 3),
                                "end": round((i + 1) * step, 3),
                                "confidence": 0.97,
                                "punctuated_word": w,
                            }
                            for i, w in enumerate(words)
                        ],
                    }
                ]
            },
            "metadata": {
                "request_id": new_id(),
                "model_info": {"name": "2-general-nova", "version": "2024-01-09.29447", "arch": "nova-3"},
                "model_uuid": new_id(),
            },
            "from_finalize": final,
        }

    async def session(self, ws, record):
        rate = int(record.query["sample_rate"])
        audio_bytes, frames, shown = 0, 0, ""
        while True:
            kind, message = await self.receive(ws, record)
            if kind == "binary":
                frames += 1
                audio_bytes += len(message)
                if self.scenario == "stop_reading" and frames >= 3:
                    return await self.hold(ws)
                if frames == 3 and self.scenario == "error":
                    raise StreamClosed(1008, "DATA-0000: The payload cannot be decoded as audio.")
                if frames == 3 and self.scenario == "server_error":
                    raise StreamClosed(1011, "NET-0000: The service experienced an internal error.")
                if frames == 3 and self.scenario == "close_early":
                    raise StreamClosed(1000, "")
                if frames == 2 and self.scenario == "malformed":
                    await ws.send("Results: not JSON")
                text = self.words_for(audio_bytes / 2 / rate)
                if text != shown and self.scenario != "silence":
                    shown = text
                    await self.send(ws, record, self.results(text, False, audio_bytes / 2 / rate))
                continue
            kind = message.get("type")
            if kind == "KeepAlive":
                continue
            if kind == "Finalize":
                if self.scenario in ("stall", "no_final"):
                    if self.scenario == "no_final":
                        raise StreamClosed(1000, "")
                    return await self.hold(ws)
                if self.scenario == "echo_key":
                    await self.send(ws, record, {"type": "Error", "description": f"bad token {self.key}"})
                    continue
                await self.send(ws, record, self.results(self.final_text, True, audio_bytes / 2 / rate))
            elif kind == "CloseStream":
                await self.send(
                    ws,
                    record,
                    {
                        "type": "Metadata",
                        "transaction_key": "deprecated",
                        "request_id": new_id(),
                        "sha256": "0" * 64,
                        "created": "2026-12-01T00:00:00.000Z",
                        "duration": round(audio_bytes / 2 / rate, 3),
                        "channels": 1,
                    },
                )
                raise StreamClosed(1000, "")
            else:
                raise StreamClosed(1008, f"unknown message type {kind!r}")


class FakeAssemblyAIStreaming(FakeStreamVendor):
    vendor = "AssemblyAI"
    provider = "assemblyai"
    model = "u3-rt-pro"
    key_env = "ASSEMBLYAI_API_KEY"
    path = "/v3/ws"

    def authorized(self, headers):
        return headers.get("authorization") == self.key

    def error_body(self, status):
        return {"error": f"Fake error {status}"}

    def check_query(self, query):
        if not query.get("sample_rate", "").isdigit():
            return "sample_rate is required"
        if query.get("encoding", "pcm_s16le") != "pcm_s16le":
            return "this fake takes pcm_s16le"
        return None

    def turn(self, order: int, text: str, end: bool) -> dict:
        return {
            "type": "Turn",
            "turn_order": order,
            "turn_is_formatted": end,
            "end_of_turn": end,
            "transcript": text,
            "end_of_turn_confidence": 0.9 if end else 0.1,
            "words": [
                {"start": i * 100, "end": i * 100 + 90, "confidence": 0.95, "text": w, "word_is_final": end}
                for i, w in enumerate(text.split())
            ],
        }

    async def session(self, ws, record):
        if self.scenario == "bad_key_close":
            raise StreamClosed(1008, "Unauthorized connection: Invalid API key")
        if self.scenario == "no_greeting":
            return await self.hold(ws)
        await self.send(ws, record, {"type": "Begin", "id": new_id(), "expires_at": now_ms() // 1000 + 3600})
        rate = int(record.query["sample_rate"])
        audio_bytes, frames, shown = 0, 0, ""
        while True:
            kind, message = await self.receive(ws, record)
            if kind == "binary":
                frames += 1
                seconds = len(message) / 2 / rate
                if not 0.05 - 1e-6 <= seconds <= 1.0:
                    raise StreamClosed(3007, f"Input duration violation: {seconds * 1000:.0f} ms")
                audio_bytes += len(message)
                if self.scenario == "stop_reading" and frames >= 3:
                    return await self.hold(ws)
                if frames == 3 and self.scenario == "error":
                    await self.send(
                        ws, record, {"type": "Error", "error": "Input validation error", "error_code": 3006}
                    )
                    raise StreamClosed(3006, "Input validation error")
                if frames == 3 and self.scenario == "server_error":
                    raise StreamClosed(3005, "Server error")
                if frames == 3 and self.scenario == "close_early":
                    raise StreamClosed(1000, "")
                if frames == 2 and self.scenario == "malformed":
                    await ws.send("<html>bad gateway</html>")
                text = self.words_for(audio_bytes / 2 / rate)
                if text != shown and self.scenario != "silence":
                    shown = text
                    await self.send(ws, record, self.turn(0, text, False))
                continue
            kind = message.get("type")
            if kind in ("KeepAlive", "UpdateConfiguration"):
                continue
            if kind in ("Terminate", "ForceEndpoint"):
                if self.scenario == "stall":
                    return await self.hold(ws)
                if self.scenario == "no_final":
                    raise StreamClosed(1000, "")
                if self.scenario == "echo_key":
                    await self.send(ws, record, {"type": "Error", "error": f"key {self.key} is not valid"})
                    raise StreamClosed(3006, "Input validation error")
                await self.send(ws, record, self.turn(0, self.final_text, True))
                if kind == "Terminate":
                    seconds = audio_bytes / 2 / rate
                    await self.send(
                        ws,
                        record,
                        {
                            "type": "Termination",
                            "audio_duration_seconds": int(seconds),
                            "session_duration_seconds": int(seconds) + 1,
                        },
                    )
                    raise StreamClosed(1000, "")
            else:
                raise StreamClosed(4101, f"Endpoint received a message with an invalid schema: {kind!r}")


class FakeOpenAIRealtime(FakeStreamVendor):
    vendor = "OpenAI"
    provider = "openai"
    model = "gpt-live-transcribe"
    key_env = "OPENAI_API_KEY"
    path = "/v1/realtime"
    audio_field = "audio"
    rate = 24000

    def authorized(self, headers):
        return headers.get("authorization") == f"Bearer {self.key}"

    def error_body(self, status):
        kind = "invalid_request_error" if status < 500 else "server_error"
        return {"error": {"message": f"Fake error {status}.", "type": kind, "code": None, "param": None}}

    def check_query(self, query):
        return (
            None
            if query.get("intent") == "transcription"
            else "a transcription session needs intent=transcription"
        )

    def error(self, kind: str, message: str, code=None) -> dict:
        return {
            "type": "error",
            "event_id": new_id(),
            "error": {"type": kind, "code": code, "message": message, "param": None, "event_id": None},
        }

    def session_body(self, transcription=None) -> dict:
        return {
            "type": "transcription",
            "id": f"sess_{new_id()[:12]}",
            "object": "realtime.transcription_session",
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": self.rate},
                    "transcription": transcription,
                    "turn_detection": None,
                    "noise_reduction": None,
                }
            },
            "include": None,
        }

    async def session(self, ws, record):
        if self.scenario == "no_greeting":
            return await self.hold(ws)
        await self.send(
            ws, record, {"type": "session.created", "event_id": new_id(), "session": self.session_body()}
        )
        configured, item, audio_bytes, frames, shown = False, f"item_{new_id()[:12]}", 0, 0, ""
        while True:
            kind, message = await self.receive(ws, record)
            if kind == "binary":
                raise StreamClosed(1003, "binary messages are not supported")
            kind = message.get("type")
            if kind == "session.update":
                session = message.get("session") or {}
                audio_in = (session.get("audio") or {}).get("input") or {}
                fmt, transcription = audio_in.get("format") or {}, audio_in.get("transcription") or {}
                if session.get("type") != "transcription" or fmt != {"type": "audio/pcm", "rate": self.rate}:
                    await self.send(
                        ws,
                        record,
                        self.error(
                            "invalid_request_error",
                            "this fake takes a transcription session of audio/pcm at 24000 Hz",
                        ),
                    )
                    continue
                if not transcription.get("model"):
                    await self.send(
                        ws, record, self.error("invalid_request_error", "Missing transcription model.")
                    )
                    continue
                configured = True
                await self.send(
                    ws,
                    record,
                    {
                        "type": "session.updated",
                        "event_id": new_id(),
                        "session": self.session_body(transcription),
                    },
                )
            elif kind == "input_audio_buffer.append":
                if not configured:
                    await self.send(ws, record, self.error("invalid_request_error", "session.update first"))
                    continue
                frames += 1
                audio_bytes += len(base64.b64decode(message.get("audio") or ""))
                if self.scenario == "stop_reading" and frames >= 3:
                    return await self.hold(ws)
                if frames == 3 and self.scenario == "error":
                    await self.send(
                        ws, record, self.error("invalid_request_error", "Invalid audio.", "invalid_value")
                    )
                    continue
                if frames == 3 and self.scenario == "server_error":
                    await self.send(ws, record, self.error("server_error", "The server had an error."))
                    raise StreamClosed(1011, "server_error")
                if frames == 3 and self.scenario == "close_early":
                    raise StreamClosed(1000, "")
                if frames == 2 and self.scenario == "malformed":
                    await ws.send("not json")
                text = self.words_for(audio_bytes / 2 / self.rate, revise=False)  # deltas only ever extend
                if text != shown and self.scenario != "silence":
                    await self.send(ws, record, self.delta(item, text[len(shown) :]))
                    shown = text
            elif kind == "input_audio_buffer.commit":
                if self.scenario == "stall":
                    return await self.hold(ws)
                if self.scenario == "no_final":
                    raise StreamClosed(1000, "")
                if self.scenario == "echo_key":
                    await self.send(ws, record, self.error("invalid_request_error", f"bad key {self.key}"))
                    continue
                await self.send(
                    ws,
                    record,
                    {
                        "type": "input_audio_buffer.committed",
                        "event_id": new_id(),
                        "previous_item_id": None,
                        "item_id": item,
                    },
                )
                rest = self.final_text[len(shown) :] if self.final_text.startswith(shown) else ""
                if rest:
                    await self.send(ws, record, self.delta(item, rest))
                await self.send(
                    ws,
                    record,
                    {
                        "type": "conversation.item.input_audio_transcription.completed",
                        "event_id": new_id(),
                        "item_id": item,
                        "content_index": 0,
                        "transcript": self.final_text,
                        "usage": {"type": "duration", "seconds": round(audio_bytes / 2 / self.rate, 3)},
                    },
                )
            else:
                await self.send(
                    ws, record, self.error("invalid_request_error", f"Unknown event type {kind!r}.")
                )

    def delta(self, item: str, text: str) -> dict:
        return {
            "type": "conversation.item.input_audio_transcription.delta",
            "event_id": new_id(),
            "item_id": item,
            "content_index": 0,
            "delta": text,
        }


class FakeElevenLabsRealtime(FakeStreamVendor):
    vendor = "ElevenLabs"
    provider = "elevenlabs"
    model = "scribe_v2_realtime"
    key_env = "ELEVENLABS_API_KEY"
    path = "/v1/speech-to-text/realtime"
    audio_field = "audio_base_64"
    RATES = {8000, 16000, 22050, 24000, 44100, 48000}

    def authorized(self, headers):
        return headers.get("xi-api-key") == self.key

    def error_body(self, status):
        return {"detail": {"status": "error", "message": f"Fake error {status}."}}

    def check_query(self, query):
        fmt = query.get("audio_format", "")
        if not (fmt.startswith("pcm_") and fmt[4:].isdigit() and int(fmt[4:]) in self.RATES):
            return f"unsupported audio_format {fmt!r}"
        if not query.get("model_id"):
            return "model_id is required"
        return None

    async def session(self, ws, record):
        if self.scenario == "no_greeting":
            return await self.hold(ws)
        rate = int(record.query["audio_format"][4:])
        await self.send(
            ws,
            record,
            {
                "message_type": "session_started",
                "session_id": new_id(),
                "config": {
                    "sample_rate": rate,
                    "audio_format": record.query["audio_format"],
                    "language_code": None,
                    "commit_strategy": record.query.get("commit_strategy", "manual"),
                    "model_id": record.query["model_id"],
                    "include_timestamps": record.query.get("include_timestamps") == "true",
                },
            },
        )
        audio_bytes, frames, shown = 0, 0, ""
        while True:
            kind, message = await self.receive(ws, record)
            if kind == "binary" or message.get("message_type") != "input_audio_chunk":
                await self.send(
                    ws, record, {"message_type": "input_error", "error": "Expected input_audio_chunk."}
                )
                raise StreamClosed(1008, "input_error")
            if message.get("sample_rate") != rate:
                await self.send(ws, record, {"message_type": "input_error", "error": "sample_rate mismatch"})
                raise StreamClosed(1008, "input_error")
            if message.get("commit"):
                if self.scenario == "stall":
                    return await self.hold(ws)
                if self.scenario == "no_final":
                    raise StreamClosed(1000, "")
                if self.scenario == "echo_key":
                    await self.send(
                        ws, record, {"message_type": "auth_error", "error": f"invalid key {self.key}"}
                    )
                    raise StreamClosed(1008, "auth_error")
                await self.send(ws, record, {"message_type": "committed_transcript", "text": self.final_text})
                continue
            frames += 1
            audio_bytes += len(base64.b64decode(message.get("audio_base_64") or ""))
            if self.scenario == "stop_reading" and frames >= 3:
                return await self.hold(ws)
            if frames == 3 and self.scenario == "error":
                await self.send(ws, record, {"message_type": "input_error", "error": "Invalid audio chunk."})
                raise StreamClosed(1008, "input_error")
            if frames == 3 and self.scenario == "server_error":
                await self.send(
                    ws, record, {"message_type": "transcriber_error", "error": "Transcriber failed."}
                )
                raise StreamClosed(1011, "transcriber_error")
            if frames == 3 and self.scenario == "close_early":
                raise StreamClosed(1000, "")
            if frames == 2 and self.scenario == "malformed":
                await ws.send("{partial")
            text = self.words_for(audio_bytes / 2 / rate)
            if text != shown and self.scenario != "silence":
                shown = text
                await self.send(ws, record, {"message_type": "partial_transcript", "text": text})


STREAM_VENDORS = [FakeDeepgramLive, FakeAssemblyAIStreaming, FakeOpenAIRealtime, FakeElevenLabsRealtime]
