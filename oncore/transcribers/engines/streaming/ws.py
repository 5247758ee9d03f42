"""The WebSocket session every vendor's streaming engine runs, through `websockets` (the maintained asyncio
client): connect, wait for the vendor's greeting, send the paced frames while reading its results, send its
end-of-audio message, read until its final, close. A vendor module says only what differs (WebSocketEngine's
hooks): its URL and headers, its greeting, how a frame and the end of audio are written, what its messages mean
and what its close codes mean.

Every attempt has deadlines: the handshake and greeting within connect_timeout_s (default 10), the final within
final_timeout_s (default 10) of the end of the audio, and the whole session within both plus the clip's duration.
A vendor that stalls (takes no more audio, or never sends its final) fails with a reason and is tried again.

Error mapping (what the queue's retry logic sees), as vendor_http maps HTTP:
- a handshake refused with an HTTP status: the statuses of vendor_http (401/403 name the key's variable and are
  not retried; 408/409/429/5xx are, after any Retry-After; other 4xx are not), with the vendor's own message;
- a connection that cannot be made, or a deadline passed: retried;
- an error message or close code from the vendor: as the vendor module maps it (its documented codes);
- a message that is not JSON, or a session closed before its final: said so (closed early is retried).
The key is removed from every message, as in vendor_http.
"""

import asyncio
import json
import time
from urllib.parse import urlencode, urlsplit

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import (
    ConnectionClosed,
    InvalidHandshake,
    InvalidStatus,
    InvalidURI,
)

from ..base import (
    EngineResult,
    TranscriptionError,
    audio_seconds_of,
    cost_for,
    needs_key,
    option_float,
    read_key,
)
from ..vendor_http import VendorCall, excerpt, scrub, ssl_context
from . import session

DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_FINAL_TIMEOUT_S = 10.0
CLOSE_WAIT_S = 2.0  # how long the closing handshake may take once the final is in


class WebSocketEngine:
    """A vendor's streaming engine. Subclasses set the class attributes and the hooks marked below."""

    streaming = True
    vendor = "Vendor"
    default_base_url = ""
    frame_ms = session.FRAME_MS
    sample_rates: tuple[int, ...] | None = None  # the rates the vendor takes (None: any)

    def __init__(self, transcriber):
        self.transcriber = transcriber
        self.options = transcriber.options or {}

    # ---- hooks

    def url(self, base_url: str, sample_rate: int, language: str | None) -> str:
        raise NotImplementedError

    def headers(self, key: str | None) -> dict:
        raise NotImplementedError

    async def greet(self, ws, sample_rate: int, language: str | None) -> None:
        """What happens between the handshake and the first frame (a greeting to wait for, a configuration to
        send); the default is nothing."""

    def frame(self, pcm: bytes):
        """One frame as the vendor takes it: the bytes themselves by default."""
        return pcm

    def end_of_audio(self) -> list:
        """The messages that say the audio is over and ask for the final."""
        raise NotImplementedError

    def handle(self, data: dict, heard: session.Heard) -> bool:
        """Read one message from the vendor into `heard`; True once the session is complete. Raise
        TranscriptionError for an error message."""
        raise NotImplementedError

    def close_error(self, code: int | None, reason: str) -> TranscriptionError:
        """What an abnormal close means (the vendor's documented close codes)."""
        return TranscriptionError(
            f"{self.vendor} closed the session ({code}{': ' + reason if reason else ''}): it will be tried again.",
            retryable=True,
        )

    def complete_on_close(self, heard: session.Heard) -> bool:
        """Whether a normal close after the end of audio completes the session (the vendor's way of ending)."""
        return False

    def billed_seconds(self, audio_seconds: float, figures: session.StreamFigures) -> float:
        return audio_seconds

    # ---- the session

    def transcribe(
        self, wav: bytes, language: str | None = None, *, speech_end_s=None, speech_start_s=None, speed=None
    ):
        seconds = audio_seconds_of(wav)
        self.ended = False  # set once the audio is out and the end-of-audio messages go
        self.key = read_key(self.transcriber, self.vendor) if needs_key(self.transcriber) else None
        call = VendorCall(self.transcriber, self.vendor, self.default_base_url, self.key)
        self.connect_timeout_s = option_float(self.options, "connect_timeout_s", DEFAULT_CONNECT_TIMEOUT_S)
        self.final_timeout_s = option_float(self.options, "final_timeout_s", DEFAULT_FINAL_TIMEOUT_S)
        pcm, rate = session.clip_pcm(wav, self.sample_rates, self.vendor)
        frames = session.split_frames(pcm, rate, self.frame_ms)
        speed = float(speed or session.SPEED)
        end = session.speech_end_within(speech_end_s, seconds)
        start = session.speech_start_within(speech_start_s, seconds)
        url = self.url(ws_scheme(call.base_url), rate, language)
        try:
            heard, pacer, opened_at, ended_at = session.run_session(
                self._run(url, frames, rate, language, speed, seconds)
            )
        except TranscriptionError as exc:
            raise TranscriptionError(
                scrub(exc.message, self.key), retryable=exc.retryable, retry_after=exc.retry_after
            ) from exc
        figures = session.figures(
            heard,
            pacer,
            speech_end_s=end,
            speech_start_s=start,
            sample_rate=rate,
            opened_at=opened_at,
            ended_at=ended_at,
        )
        return EngineResult(
            text=heard.text,
            audio_seconds=seconds,
            cost=cost_for(self.billed_seconds(seconds, figures), self.transcriber.price_per_minute),
            latency_s=figures.time_to_final_s,
            raw={
                "engine": f"{self.transcriber.provider} streaming",
                "finals": heard.finals,
                **figures.as_dict(),
            },
            stream=figures,
        )

    async def _run(self, url, frames, rate, language, speed, seconds):
        opened_at = time.perf_counter()
        budget = 2 * self.connect_timeout_s + seconds / speed + self.final_timeout_s + 1.0
        progress = {"sent": 0, "audio_done": False}
        try:
            async with asyncio.timeout(budget):
                ws = await self._connect(url)
                failed = True
                try:
                    try:
                        await asyncio.wait_for(self.greet(ws, rate, language), self.connect_timeout_s)
                    except TimeoutError:
                        raise TranscriptionError(
                            f"{self.vendor} opened the connection but did not start the session within "
                            f"{self.connect_timeout_s:g} s: it will be tried again.",
                            retryable=True,
                        ) from None
                    except ConnectionClosed as exc:
                        raise self._closed(exc) from None
                    heard, pacer = await self._stream(ws, frames, speed, progress)
                    failed = False
                finally:
                    await self._close(ws, CLOSE_WAIT_S / 4 if failed else CLOSE_WAIT_S)
        except TimeoutError:
            if progress["audio_done"]:
                raise TranscriptionError(
                    f"{self.vendor} sent no final transcript within {self.final_timeout_s:g} s of the end of the "
                    "audio: it will be tried again; raise the final_timeout_s option if it is slow, not stalled.",
                    retryable=True,
                ) from None
            raise TranscriptionError(
                f"{self.vendor} stopped taking audio: {progress['sent']} of {len(frames)} frames were sent in "
                f"{budget:.1f} s: it will be tried again.",
                retryable=True,
            ) from None
        return heard, pacer, opened_at, time.perf_counter()

    async def _connect(self, url: str):
        host = urlsplit(url).netloc
        try:
            return await connect(
                url,
                additional_headers=self.headers(self.key),
                open_timeout=self.connect_timeout_s,
                ssl=ssl_context() if url.startswith("wss://") else None,
                compression=None,
                max_size=2**22,
            )
        except InvalidStatus as exc:
            raise self._refused(exc) from None
        except InvalidURI:
            raise TranscriptionError(
                f"{self.vendor}'s streaming URL {url.split('?')[0]!r} is not a ws:// or wss:// URL: fix the "
                "base_url option.",
                retryable=False,
            ) from None
        except TimeoutError:
            raise TranscriptionError(
                f"{self.vendor} did not open the streaming connection within {self.connect_timeout_s:g} s "
                f"({host}): it will be tried again.",
                retryable=True,
            ) from None
        except (OSError, InvalidHandshake) as exc:
            raise TranscriptionError(
                f"Could not open a streaming connection to {self.vendor} at {host} ({type(exc).__name__}): check "
                "the network and the base_url option; it will be tried again.",
                retryable=True,
            ) from None

    def _refused(self, exc: InvalidStatus) -> TranscriptionError:
        """A handshake refused with an HTTP status, mapped as vendor_http maps the same status."""
        response = exc.response
        refused = httpx.Response(
            response.status_code,
            headers=list(response.headers.raw_items()),
            content=bytes(response.body or b""),
        )
        refused.read()
        try:
            VendorCall(self.transcriber, self.vendor, self.default_base_url, self.key).check_status(
                refused, " (opening the stream)"
            )
        except TranscriptionError as error:
            return error
        return TranscriptionError(
            f"{self.vendor} did not accept the streaming connection (HTTP {response.status_code}).",
            retryable=False,
        )

    def _closed(self, exc: ConnectionClosed) -> TranscriptionError:
        close = exc.rcvd
        return self.close_error(close.code if close else None, (close.reason if close else "") or "")

    async def _stream(self, ws, frames, speed, progress):
        pacer = session.Pacer(self.frame_ms / 1000, speed)
        heard = session.Heard(time.perf_counter())

        async def send(frame):
            await ws.send(self.frame(frame))
            progress["sent"] += 1

        async def sender():
            await pacer.run(frames, send)
            progress["audio_done"] = self.ended = True
            for message in self.end_of_audio():
                await ws.send(message)

        receiver = asyncio.create_task(self._receive(ws, heard, progress))
        sending = asyncio.create_task(sender())
        try:
            await asyncio.wait({sending, receiver}, return_when=asyncio.FIRST_COMPLETED)
            if not sending.done():  # the vendor ended the session while the audio was still going out
                await self._ended_early(receiver)
            try:
                sending.result()
            except ConnectionClosed:
                await self._ended_early(receiver)
            try:
                await asyncio.wait_for(asyncio.shield(receiver), self.final_timeout_s)
            except TimeoutError:
                raise TranscriptionError(
                    f"{self.vendor} sent no final transcript within {self.final_timeout_s:g} s of the end of the "
                    f"audio ({heard.partials} partial results before): it will be tried again; raise the "
                    "final_timeout_s option if it is slow, not stalled.",
                    retryable=True,
                ) from None
            receiver.result()
        finally:
            for task in (sending, receiver):
                task.cancel()
            await asyncio.gather(sending, receiver, return_exceptions=True)
        heard.t0 = pacer.t0
        return heard, pacer

    async def _ended_early(self, receiver):
        """The vendor ended the session before the audio was sent: its reason, or a session closed early."""
        try:
            await asyncio.wait_for(asyncio.shield(receiver), CLOSE_WAIT_S)
            receiver.result()
        except TranscriptionError:
            raise
        except TimeoutError:
            pass
        raise TranscriptionError(
            f"{self.vendor} ended the session before the audio was sent: it will be tried again.",
            retryable=True,
        )

    async def _receive(self, ws, heard, progress) -> None:
        try:
            async for message in ws:
                if isinstance(message, bytes):
                    continue  # no vendor here sends audio back to a transcription session
                try:
                    data = json.loads(message)
                except ValueError:
                    raise TranscriptionError(
                        f"{self.vendor} sent a streaming message that is not JSON: {excerpt(message, self.key)}.",
                        retryable=False,
                    ) from None
                if not isinstance(data, dict):
                    raise TranscriptionError(
                        f"{self.vendor} sent a streaming message that is not a JSON object: "
                        f"{excerpt(message, self.key)}.",
                        retryable=False,
                    )
                if self.handle(data, heard):
                    heard.done()
                    return
        except ConnectionClosed as exc:
            raise self._closed(exc) from None
        close_code, reason = ws.close_code, ws.close_reason or ""
        if progress["audio_done"] and self.complete_on_close(heard):
            heard.done()
            return
        said = f" ({close_code}{': ' + reason if reason else ''})" if close_code else ""
        raise TranscriptionError(
            f"{self.vendor} closed the session{said} before its final transcript: it will be tried again.",
            retryable=True,
        )

    async def _close(self, ws, wait_s: float) -> None:
        """Close the connection; one the vendor does not close within wait_s (it stalled) is dropped."""
        try:
            await asyncio.wait_for(ws.close(), wait_s)
        except (TimeoutError, ConnectionClosed, OSError):
            ws.transport.abort()


def ws_scheme(base_url: str) -> str:
    """A base_url given in the batch engines' spelling (https://, http://) as the WebSocket URL it stands for."""
    for http, ws in (("https://", "wss://"), ("http://", "ws://")):
        if base_url.startswith(http):
            return ws + base_url[len(http) :]
    return base_url


def query(url: str, params: list[tuple[str, str]]) -> str:
    return f"{url}?{urlencode(params)}" if params else url


def bool_text(value) -> str:
    return "true" if value else "false"


__all__ = ["WebSocketEngine", "bool_text", "query"]
