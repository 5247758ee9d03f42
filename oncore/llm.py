"""The one module that talks to Anthropic: structured output through tool use, retries, tokens and cost.

Settings (a Django setting of the same name wins over the environment variable):
    ANTHROPIC_MODEL                   model id (default DEFAULT_MODEL)
    ANTHROPIC_BASE_URL                API address; unset means Anthropic's own (tests point it at 127.0.0.1)
    ANTHROPIC_MAX_RETRIES             retries of 408/409/429/5xx and connection errors (default 3)
    ANTHROPIC_TIMEOUT_S               seconds to wait for one attempt (default 60)
    ANTHROPIC_PRICE_INPUT_PER_MTOK    dollars per million input tokens (default 3, Sonnet)
    ANTHROPIC_PRICE_OUTPUT_PER_MTOK   dollars per million output tokens (default 15, Sonnet)
The key comes only from the ANTHROPIC_API_KEY environment variable; it is never stored, logged or put in a
message. Without it the judge is "not configured" and call_tool raises JudgeNotConfigured.

Retries are the SDK's: it retries 408, 409, 429, 5xx and connection errors `max_retries` times, waiting what
the server asks (`retry-after-ms`, then `retry-after`) or else 0.5 s doubling up to 8 s, with jitter.
LLMError is raised once those retries are spent; `retryable` says whether trying again later may help.

No sampling parameter is sent: the SDK (2.x) sends API version 2026-10-21, which rejects temperature, top_p
and top_k on every Claude model (400), and the SDK no longer takes them. Steadiness comes from the prompts
(a fixed procedure, worked examples, the reasoning before the answer) and is measured, not assumed
(scripts/measure_judge.py: order-swap consistency). An answer that arrives but cannot be used (no tool call, a
value the caller refuses) is a different failure: `ask_tool` asks once more, saying what was wrong, before it
gives up.
"""

import hashlib
import json
import logging
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from oncore.env import env_float, env_int, env_str

log = logging.getLogger(__name__)

DEFAULT_MODEL = "claude-sonnet-4-6"  # $3 / $15 per million tokens, the default prices below
KEY_ENV = "ANTHROPIC_API_KEY"
# What organization admins read (on the run page and over the API): nothing of the server's settings; the
# detail goes to the log.
NOT_CONFIGURED = "the judge is not configured on this server"
MISCONFIGURED = "the judge is not configured correctly on this server"
CACHE_WRITE_FACTOR = Decimal("1.25")  # a cache write costs 1.25x an input token
CACHE_READ_FACTOR = Decimal("0.1")  # a cache read costs 0.1x an input token
CHARS_PER_TOKEN = 4
COST_PLACES = Decimal("0.000001")
# Statuses the SDK retries itself; after its retries they are still worth trying later.
_RETRYABLE_STATUSES = {408, 409, 429}


class JudgeNotConfigured(Exception):
    def __init__(self, message: str = NOT_CONFIGURED):
        super().__init__(message)
        self.message = message


class LLMError(Exception):
    def __init__(self, message: str, *, retryable: bool, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status


class InvalidAnswer(Exception):
    """Raised by an `ask_tool` parser: the tool was called, but its answer cannot be used (say why)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict
    input_tokens: int  # input tokens billed at the full price (not read from or written to the cache)
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: Decimal  # dollars
    model: str


# -- settings ---------------------------------------------------------------------------------------------
def _setting(name: str, default):
    value = getattr(settings, name, None)
    return default() if value is None else value


def model() -> str:
    return _setting(
        "ANTHROPIC_MODEL", lambda: env_str("ANTHROPIC_MODEL", DEFAULT_MODEL).strip() or DEFAULT_MODEL
    )


def base_url() -> str | None:
    return _setting("ANTHROPIC_BASE_URL", lambda: env_str("ANTHROPIC_BASE_URL", "").strip()) or None


def max_retries() -> int:
    return int(_setting("ANTHROPIC_MAX_RETRIES", lambda: env_int("ANTHROPIC_MAX_RETRIES", 3, minimum=0)))


def timeout_s() -> float:
    return float(_setting("ANTHROPIC_TIMEOUT_S", lambda: env_float("ANTHROPIC_TIMEOUT_S", 60.0, minimum=1.0)))


def _price(name: str, default: str) -> Decimal:
    raw = str(_setting(name, lambda: env_str(name, default).strip() or default))
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number of dollars per million tokens.") from None
    if not value.is_finite() or value < 0:
        raise ImproperlyConfigured(f"{name}={raw!r} must be zero or more dollars per million tokens.")
    return value


def input_price() -> Decimal:
    return _price("ANTHROPIC_PRICE_INPUT_PER_MTOK", "3")


def output_price() -> Decimal:
    return _price("ANTHROPIC_PRICE_OUTPUT_PER_MTOK", "15")


def _api_key() -> str:
    return env_str(KEY_ENV, "").strip()


def judge_configured() -> bool:
    """True when an Anthropic key is set; without one, nothing the judge would add is shown or invented."""
    return bool(_api_key())


# -- estimates and cost -----------------------------------------------------------------------------------
def estimate_tokens(text: str) -> int:
    """About one token per four characters of English text, rounded up: good enough for a cost estimate
    shown before a run, never for billing (calls record the API's own counts)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_cost(input_tokens: int, output_tokens: int) -> Decimal:
    """Dollars for that many tokens at full price (no cache discount: an estimate errs high)."""
    return cost(input_tokens, output_tokens)


def cost(
    input_tokens: int, output_tokens: int, cache_read_tokens: int = 0, cache_write_tokens: int = 0
) -> Decimal:
    price_in, price_out = input_price(), output_price()
    dollars = (
        input_tokens * price_in
        + cache_write_tokens * price_in * CACHE_WRITE_FACTOR
        + cache_read_tokens * price_in * CACHE_READ_FACTOR
        + output_tokens * price_out
    ) / Decimal(1_000_000)
    return dollars.quantize(COST_PLACES)


# -- the call ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def _client(api_key: str, url: str | None, retries: int, timeout: float):
    import anthropic  # here, not at the top: the SDK costs seconds to import, and most requests never judge

    return anthropic.Anthropic(api_key=api_key, base_url=url, max_retries=retries, timeout=timeout)


def call_tool(*, system: str, prompt: str, tool: dict, max_tokens: int = 1024) -> ToolCall:
    """Ask the model to answer by calling `tool` (forced with tool_choice) and return the tool's input.

    `system` is the fixed part of the prompt, sent as one system block marked for prompt caching; `prompt`
    is the part that changes from call to call. Raises JudgeNotConfigured without a key, LLMError when the
    API fails after its retries or answers without calling the tool."""
    api_key = _api_key()
    if not api_key:
        raise JudgeNotConfigured()
    name = tool["name"]
    retries, timeout, url, model_id = max_retries(), timeout_s(), base_url(), model()
    client = _client(api_key, url, retries, timeout)
    import anthropic  # imported by _client already: only its error classes are read here

    try:
        response = client.messages.create(
            model=model_id,
            max_tokens=max_tokens,
            system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            messages=[{"role": "user", "content": prompt}],
            tools=[tool],
            tool_choice={"type": "tool", "name": name},
        )
    except anthropic.APIStatusError as exc:
        raise _status_error(exc, api_key, retries, model_id) from None
    except anthropic.APITimeoutError:
        log.warning("The Anthropic API did not answer within %g s, %d retries included.", timeout, retries)
        raise LLMError("the judge did not answer in time, even after retrying", retryable=True) from None
    except anthropic.APIConnectionError:
        log.warning(
            "Could not reach the Anthropic API at %s (%d retries).", url or "its default address", retries
        )
        raise LLMError("the judge could not be reached, even after retrying", retryable=True) from None
    except anthropic.AnthropicError as exc:
        log.warning("The Anthropic call failed: %s", _scrub(str(exc), api_key))
        raise LLMError("the judge's call failed", retryable=False) from None

    if response.stop_reason == "max_tokens":
        raise LLMError(
            f"the answer was cut off at max_tokens={max_tokens} before the {name} tool call was complete",
            retryable=False,
        )
    calls = [block for block in response.content if block.type == "tool_use" and block.name == name]
    if not calls or not isinstance(calls[0].input, dict):
        raise LLMError(
            f"the model answered without calling the {name} tool (stop_reason {response.stop_reason!r}); "
            "nothing was recorded",
            retryable=False,
        )
    answer = dict(calls[0].input)
    missing = [key for key in tool.get("input_schema", {}).get("required", []) if key not in answer]
    if missing:
        raise LLMError(f"the {name} tool call lacks {', '.join(missing)}", retryable=False)

    usage = response.usage
    tokens_in, tokens_out = usage.input_tokens or 0, usage.output_tokens or 0
    read, written = usage.cache_read_input_tokens or 0, usage.cache_creation_input_tokens or 0
    return ToolCall(
        name=name,
        input=answer,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cache_read_tokens=read,
        cache_write_tokens=written,
        cost=cost(tokens_in, tokens_out, read, written),
        model=response.model or model_id,
    )


def retry_note(problem: str, tool_name: str) -> str:
    """What is added to a prompt asked once more after an unusable answer."""
    return (
        f"\n\n<previous_answer_problem>Your previous answer could not be used: {problem}. Answer again by "
        f"calling {tool_name}.</previous_answer_problem>"
    )


def combined(calls: list[ToolCall]) -> ToolCall | None:
    """One ToolCall standing for several (an answer asked once more): the last answer, every token and cost."""
    if not calls:
        return None
    last = calls[-1]
    return ToolCall(
        name=last.name,
        input=last.input,
        input_tokens=sum(c.input_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        cache_read_tokens=sum(c.cache_read_tokens for c in calls),
        cache_write_tokens=sum(c.cache_write_tokens for c in calls),
        cost=sum((c.cost for c in calls), Decimal(0)),
        model=last.model,
    )


def ask_tool(*, system: str, prompt: str, tool: dict, parse, max_tokens: int = 1024):
    """call_tool, then `parse(answer)` -> value. An unusable answer (parse raises InvalidAnswer, or the model
    did not call the tool properly) is asked once more with what was wrong; a second one raises LLMError
    (not retryable). API failures raise at once, as from call_tool. Returns (value, every ToolCall made)."""
    calls, note, problem = [], "", ""
    for _attempt in range(2):
        try:
            call = call_tool(system=system, prompt=prompt + note, tool=tool, max_tokens=max_tokens)
        except LLMError as exc:
            if exc.retryable:
                raise
            problem = exc.message
        else:
            calls.append(call)
            try:
                return parse(call.input), calls
            except InvalidAnswer as exc:
                problem = exc.message
        note = retry_note(problem, tool["name"])
    raise LLMError(f"the answer was invalid twice: {problem}", retryable=False)


def fingerprint(texts: list[str], tools: list[dict]) -> str:
    """A short hash of prompt texts and tool schemas: tests tie it to a prompt version, so a prompt cannot
    change without a new version (answers made under two prompts must never share one)."""
    payload = json.dumps({"texts": texts, "tools": tools}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _scrub(text: str, api_key: str) -> str:
    return text.replace(api_key, "[redacted]") if api_key else text


def _status_error(exc, api_key: str, retries: int, model_id: str) -> LLMError:
    """The error of an API answer: the message says what happened in words that reveal nothing of the server's
    settings (it is shown to organization admins and over the API); the detail goes to the log."""
    status = exc.status_code
    detail = _scrub(exc.api_message or exc.message or "", api_key)
    kind = f"{status} {exc.type}" if exc.type else str(status)
    hint = {
        401: "check ANTHROPIC_API_KEY",
        403: f"check that the key in ANTHROPIC_API_KEY may use {model_id}",
        404: f"is ANTHROPIC_MODEL={model_id!r} a model id?",
    }.get(status, f"{retries} retries")
    log.warning("The Anthropic API answered %s (%s): %s", kind, hint, detail)
    if status in (401, 403, 404):
        return LLMError(
            f"{MISCONFIGURED} (the judge's service answered {status})", retryable=False, status=status
        )
    if status == 429:
        return LLMError(
            "the judge's rate limit was still reached after retrying; try again later",
            retryable=True,
            status=status,
        )
    if status >= 500 or status in _RETRYABLE_STATUSES:
        return LLMError(
            f"the judge's service failed ({status}), even after retrying; try again later",
            retryable=True,
            status=status,
        )
    return LLMError(f"the judge's service rejected the request ({status})", retryable=False, status=status)
