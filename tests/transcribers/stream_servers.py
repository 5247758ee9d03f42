"""Fake streaming vendors: real WebSocket servers on 127.0.0.1 (`websockets`, in a thread of their own) that
speak each vendor's documented live protocol, as the official SDKs exchange it (tests/transcribers/captured/
streaming/, made by scripts/capture_vendor_streams.py).

Each server checks what it is sent the way the vendor does (the handshake's path, key and query; the message
types, the audio's framing and size) and answers in the vendor's shapes: partial results while audio arrives
(one more word of `transcript` per `word_every_s` of audio), the final once the client says the audio is over.
Anything it does not expect closes the session with the vendor's error code, so a wrong engine fails loudly.

    with FakeDeepgramLive(transcript="table for two") as server:
        monkeypatch.setenv(server.key_env, server.key)
        entry = stream_entry(server)              # a duck-typed streaming catalogue entry pointed at the server
        server.scenario = "stall"                 # see SCENARIOS
        server.sessions[0].received               # every message of every session, in order

Scenarios (apply to every session the server gets):
    ok; revise (the first partial's first word is misheard, then corrected: one revision);
    silence (no partial, an empty final); 401, 403, 429 (Retry-After: 7), 500 (the handshake refused with the
    vendor's error body); no_greeting (the greeting never comes: AssemblyAI, OpenAI, ElevenLabs); error (the
    vendor's error message for a request it cannot take, mid-stream); server_error (the vendor's retryable error
    close, mid-stream); bad_key_close (AssemblyAI: a close with 1008 after the handshake); stall (takes all the
    audio, never sends the final); stop_reading (stops reading after a few frames and never answers);
    malformed (a message that is not JSON); close_early (a normal close while the audio is still coming);
    no_final (a normal close right after the end of audio, no final); echo_key (the error carries the key).
"""

import asyncio
import base64
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from types import SimpleNamespace
from urllib.parse import parse_qsl, urlsplit

from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Response

from .vendor_servers import TEST_KEY

TRANSCRIPT = "I'd like a table for two at seven, please."
SCENARIOS = (
    "ok",
    "revise",
    "silence",
    "401",
    "403",
    "429",
    "500",
    "no_greeting",
    "error",
    "server_error",
    "bad_key_close",
    "stall",
    "stop_reading",
    "malformed",
    "close_early",
    "no_final",
    "echo_key",
)
REASONS = {401: "Unauthorized", 403: "Forbidden", 429: "Too Many Requests", 500: "Internal Server Error"}


@dataclass
class Session:
    path: str
    query: dict
    query_pairs: list
    headers: dict  # lowercased names
    received: list = field(default_factory=list)  # ("binary", bytes) or ("text", parsed JSON)
    sent: list = field(default_factory=list)  # the JSON messages the server sent
    close: tuple | None = None  # (code, reason) the server closed with, if it did

    @property
    def audio(self) -> bytes:
        return b"".join(m for kind, m in self.received if kind == "binary") + b"".join(
            base64.b64decode(m.get(self.audio_field, "") or "")
            for kind, m in self.received
            if kind == "text" and self.audio_field in m
        )

    audio_field = ""


class StreamClosed(Exception):
    def __init__(self, code: int, reason: str):
        self.code, self.reason = code, reason


class FakeStreamVendor:
    """The plumbing of a fake: a WebSocket server in a thread, the handshake's checks, the scripted words."""

    vendor = "Vendor"
    provider = ""
    model = ""
    key_env = ""
    path = "/"
    audio_field = ""
    word_every_s = 0.05

    def __init__(self, transcript: str = TRANSCRIPT, scenario: str = "ok"):
        assert scenario in SCENARIOS, scenario
        self.transcript = transcript
        self.scenario = scenario
        self.key = TEST_KEY
        self.sessions: list[Session] = []
        self.handshakes: list[Session] = []
        self._loop = None

    # ---- the server

    def start(self):
        ready = threading.Event()

        def run():
            self._loop = asyncio.new_event_loop()

            async def main():
                async with serve(
                    self._handle,
                    "127.0.0.1",
                    0,
                    process_request=self._check_handshake,
                    max_size=2**22,
                    close_timeout=0.5,
                ) as server:
                    self._server = server
                    self.port = server.sockets[0].getsockname()[1]
                    ready.set()
                    await self._stopped.wait()

            self._stopped = asyncio.Event()
            self._loop.run_until_complete(main())
            self._loop.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        assert ready.wait(10), "the fake streaming vendor did not start"
        return self

    def stop(self):
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._stopped.set)
            self._thread.join(10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def base_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    # ---- the handshake

    def authorized(self, headers: dict) -> bool:
        raise NotImplementedError

    def error_body(self, status: int) -> dict:
        return {"error": {"message": f"{REASONS.get(status, 'Error')} (fake)"}}

    def check_query(self, query: dict) -> str | None:
        """Why the vendor would refuse these query parameters (None: it takes them)."""
        return None

    def _check_handshake(self, connection, request):
        parts = urlsplit(request.path)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        headers = {k.lower(): v for k, v in request.headers.raw_items()}
        record = Session(parts.path, dict(pairs), pairs, headers)
        record.audio_field = self.audio_field
        self.handshakes.append(record)
        status = None
        if self.scenario in ("401", "403", "429", "500"):
            status = int(self.scenario)
        elif parts.path != self.path:
            status = 404
        elif not self.authorized(headers):
            status = 401
        elif self.check_query(record.query):
            status = 400
        if status is None:
            self.sessions.append(record)
            return None
        body = self.error_body(status)
        if status == 400:
            body = self.error_body(400) | {"detail": self.check_query(record.query)}
        if status == 401:
            body = self.error_body(401) | {
                "echo": headers.get("authorization", headers.get("xi-api-key", ""))
            }
        extra = [("Content-Type", "application/json")] + ([("Retry-After", "7")] if status == 429 else [])
        data = json.dumps(body).encode()
        return Response(
            status, REASONS.get(status, "Error"), Headers(extra + [("Content-Length", str(len(data)))]), data
        )

    # ---- a session

    async def _handle(self, ws):
        record = self.sessions[-1]
        try:
            await self.session(ws, record)
        except StreamClosed as closed:
            record.close = (closed.code, closed.reason)
            await ws.close(closed.code, closed.reason)
        except ConnectionClosed:
            pass

    async def session(self, ws, record: Session) -> None:
        raise NotImplementedError

    async def send(self, ws, record: Session, data: dict) -> None:
        record.sent.append(data)
        await ws.send(json.dumps(data))

    async def receive(self, ws, record: Session):
        """The next message, recorded: ("binary", bytes) or ("text", dict); a text that is not JSON closes."""
        message = await ws.recv()
        if isinstance(message, bytes):
            record.received.append(("binary", message))
            return "binary", message
        try:
            data = json.loads(message)
        except ValueError:
            raise StreamClosed(1007, "invalid JSON") from None
        record.received.append(("text", data))
        return "text", data

    def words_for(self, audio_s: float, revise: bool = True) -> str:
        """The partial hypothesis after audio_s of audio: one more word per word_every_s."""
        words = self.transcript.split()
        shown = words[: min(len(words), int(audio_s / self.word_every_s))]
        if revise and self.scenario == "revise" and len(shown) == 1:
            shown = ["Eye'd"]
        return " ".join(shown)

    @property
    def final_text(self) -> str:
        return "" if self.scenario == "silence" else self.transcript

    async def hold(self, ws) -> None:
        """Stall: read nothing more and answer nothing while the connection stays open (what arrives queues up
        until the connection's buffers are full, then the client's sends wait)."""
        closed = asyncio.ensure_future(ws.wait_closed())
        stopping = asyncio.ensure_future(self._stopped.wait())
        await asyncio.wait({closed, stopping}, return_when=asyncio.FIRST_COMPLETED)
        for waiting in (closed, stopping):
            waiting.cancel()


def stream_entry(server, **options):
    """A duck-typed streaming catalogue entry pointed at a fake server."""
    return SimpleNamespace(
        provider=server.provider,
        model=server.model,
        mode="streaming",
        display_name=f"{server.vendor} (fake streaming)",
        api_key_env=server.key_env,
        price_per_minute="0.006",
        options={"base_url": server.base_url, "connect_timeout_s": 2, "final_timeout_s": 1.5, **options},
    )


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id() -> str:
    return str(uuid.uuid4())
