"""The HTTP plumbing every vendor engine shares: timeouts, error mapping, transcript lookup, key scrubbing.

Error mapping (what the caller's retry logic sees):
- 401/403: not retryable; the message names the key's environment variable and says to check the key.
- 408/409/429 and 5xx, what the vendors' official SDKs retry: retryable; retry_after from the
  retry-after-ms header (milliseconds), else Retry-After (seconds or an HTTP date), as the SDKs read them.
- other 4xx (400, 402, 404, 413, 422 ...): not retryable, with the vendor's own error message.
- timeouts and connection errors: retryable.
- a body that is not JSON, or JSON without a transcript where the vendor documents one: not retryable,
  with a short excerpt of the body.
The key is removed from every message, excerpt and raw response, even when a vendor echoes it back.
"""

import email.utils
import json
import ssl
import threading
import time
from datetime import UTC, datetime
from decimal import Decimal
from urllib.parse import urlsplit

import certifi
import httpx

from .base import EngineResult, TranscriptionError, cost_for, option_float

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_CONNECT_TIMEOUT_S = 10.0
EXCERPT_CHARS = 200
RETRYABLE_STATUSES = {408, 409, 429}  # and every 5xx: what openai, deepgram-sdk and elevenlabs retry
KEY_MASK = "[key removed]"

_ssl_context = None
_ssl_lock = threading.Lock()


def ssl_context() -> ssl.SSLContext:
    """One verifying TLS context per process: building one per client costs ~0.1 s of CPU."""
    global _ssl_context
    with _ssl_lock:
        if _ssl_context is None:
            _ssl_context = ssl.create_default_context(cafile=certifi.where())
        return _ssl_context


def scrub(text: str, key: str | None) -> str:
    if key and text:
        return text.replace(key, KEY_MASK)
    return text


def scrub_raw(value, key: str | None):
    """A copy of a JSON value with the key removed from every string in it (keys of objects included)."""
    if not key:
        return value
    if isinstance(value, str):
        return scrub(value, key)
    if isinstance(value, dict):
        return {scrub(str(k), key): scrub_raw(v, key) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_raw(v, key) for v in value]
    return value


def excerpt(text: str, key: str | None) -> str:
    text = scrub(" ".join((text or "").split()), key)
    if len(text) > EXCERPT_CHARS:
        text = text[:EXCERPT_CHARS] + "…"
    return repr(text) if text else "an empty body"


def retry_after_of(headers) -> float | None:
    """Seconds a response asks to wait: retry-after-ms first, then Retry-After, as the vendors' SDKs read them."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date. None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def vendor_message(response: httpx.Response) -> str | None:
    """The error message in the shapes vendors use: Deepgram err_msg, OpenAI error.message, AssemblyAI error,
    ElevenLabs detail.message / detail[] (validation errors), or a plain message."""
    try:
        data = response.json()
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str) and error:
        return error
    if data.get("err_msg"):
        return str(data["err_msg"])
    detail = data.get("detail")
    if isinstance(detail, dict) and detail.get("message"):
        return str(detail["message"])
    if isinstance(detail, str) and detail:
        return detail
    if isinstance(detail, list) and detail:
        parts = [str(item.get("msg", item)) if isinstance(item, dict) else str(item) for item in detail[:3]]
        return "; ".join(parts)
    if data.get("message"):
        return str(data["message"])
    return None


def dig(data, path: str):
    """data at a dotted path ("results.channels.0.alternatives.0.transcript"); KeyError when absent."""
    node = data
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(path)
    return node


class VendorCall:
    """One engine call's HTTP context: vendor name, key and where it came from, base URL and timeouts."""

    def __init__(self, transcriber, vendor: str, default_base_url: str, key: str | None):
        options = transcriber.options or {}
        self.vendor = vendor
        self.key = key
        self.key_env = (getattr(transcriber, "api_key_env", "") or "").strip()
        self.price_per_minute = transcriber.price_per_minute
        self.base_url = str(options.get("base_url") or default_base_url).rstrip("/")
        self.timeout_s = option_float(options, "timeout_s", DEFAULT_TIMEOUT_S)
        connect_s = option_float(options, "connect_timeout_s", DEFAULT_CONNECT_TIMEOUT_S)
        self.timeout = httpx.Timeout(self.timeout_s, connect=min(connect_s, self.timeout_s))
        self.started = time.perf_counter()

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def request(self, method: str, url: str, *, step: str = "", **kwargs) -> dict:
        """Send one request and return its JSON object, or raise a mapped TranscriptionError."""
        where = f" ({step})" if step else ""
        try:
            with httpx.Client(timeout=self.timeout, verify=ssl_context(), follow_redirects=False) as client:
                response = client.request(method, url, **kwargs)
        except httpx.TimeoutException as exc:
            raise TranscriptionError(
                f"{self.vendor} did not answer within {self.timeout_s:g} s{where}: it will be tried again; "
                "raise the timeout_s option if long clips keep timing out.",
                retryable=True,
            ) from exc
        except httpx.TransportError as exc:
            host = urlsplit(url).netloc
            raise TranscriptionError(
                f"Could not reach {self.vendor} at {host}{where} ({type(exc).__name__}): check the network "
                "and the base_url option; it will be tried again.",
                retryable=True,
            ) from exc
        self.check_status(response, where)
        try:
            data = response.json()
        except ValueError:
            raise TranscriptionError(
                f"{self.vendor} returned a response that is not JSON{where} (HTTP {response.status_code}, "
                f"{response.headers.get('content-type', 'no content type')}): {excerpt(response.text, self.key)}.",
                retryable=False,
            ) from None
        if not isinstance(data, dict):
            raise TranscriptionError(
                f"{self.vendor} returned JSON that is not an object{where}: {excerpt(response.text, self.key)}.",
                retryable=False,
            )
        return data

    def check_status(self, response: httpx.Response, where: str) -> None:
        status = response.status_code
        if status < 400:
            return
        said = vendor_message(response)
        said = scrub(said, self.key) if said else None
        detail = f": {said}" if said else f": {excerpt(response.text, self.key)}"
        key_place = f"the key in {self.key_env}" if self.key_env else "the request (no key is configured)"
        if status == 401:
            raise TranscriptionError(
                f"{self.vendor} rejected {key_place} (401){where}: check the key{detail}", retryable=False
            )
        if status == 403:
            raise TranscriptionError(
                f"{self.vendor} refused {key_place} (403){where}: check the key and what it is allowed to use"
                f"{detail}",
                retryable=False,
            )
        retry_after = retry_after_of(response.headers)
        if status == 429:
            wait = (
                f"retry after {retry_after:g} s"
                if retry_after is not None
                else "it will be tried again later"
            )
            raise TranscriptionError(
                f"{self.vendor} is rate limiting requests (429){where}: {wait}{detail}",
                retryable=True,
                retry_after=retry_after,
            )
        if status >= 500 or status in RETRYABLE_STATUSES:
            kind = "a server error" if status >= 500 else "a temporary error"
            raise TranscriptionError(
                f"{self.vendor} failed with {kind} ({status}){where}: it will be tried again{detail}",
                retryable=True,
                retry_after=retry_after,
            )
        raise TranscriptionError(
            f"{self.vendor} rejected the request ({status}){where}{detail}", retryable=False
        )

    def transcript(self, data: dict, path: str) -> str:
        """The transcript at `path` in the vendor's response; a missing one is not retryable."""
        try:
            text = dig(data, path)
        except KeyError:
            text = None
        if not isinstance(text, str):
            body = json.dumps(scrub_raw(data, self.key))
            raise TranscriptionError(
                f"{self.vendor} returned a response without a transcript at {path}: {excerpt(body, self.key)}.",
                retryable=False,
            )
        return text.strip()

    def result(self, text: str, audio_seconds: float, data: dict) -> EngineResult:
        return EngineResult(
            text=text,
            audio_seconds=audio_seconds,
            cost=cost_for(audio_seconds, self.price_per_minute or Decimal(0)),
            latency_s=time.perf_counter() - self.started,
            raw=scrub_raw(data, self.key),
        )
