"""A fake Anthropic Messages API: a real HTTP server on 127.0.0.1 that speaks POST /v1/messages.

It checks a request the way the API does (the key in `x-api-key` or `Authorization: Bearer`, the
`anthropic-version` header, a JSON body with model, max_tokens, messages, and tools/tool_choice that agree)
and answers in the API's shapes: a message whose content holds one `tool_use` block for the forced tool,
or an error `{"type": "error", "error": {"type", "message"}}` with its status. Anything it does not expect
gets the API's 400/401/404 error, so a wrong request fails a test loudly.

Use from a test (the `llm_server` fixture is in tests/fixtures.py: one server per session, reset per test):

    from tests.llm_server import error, text_reply

    def test_it_labels(llm_server):                      # sets ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL
        llm_server.queue({"label": "candidate_right", "reasoning": "..."})   # the next reply's tool input
        llm_server.queue(error(429), error(500))         # scripted errors, answered in order
        llm_server.responder = lambda body: {...}        # answers when the queue is empty
        llm_server.requests                              # every request received (Recorded)

A queued item or a responder's answer is either a dict (the tool's input) or a `Reply` built with
`tool_reply`, `text_reply` or `error`. With neither queued items nor a responder, `judge_responder` answers:
a valid, deterministic reply to each of the judge's tools, so run tests work without scripting.

Usage is simulated unless a reply gives its own: about one token per four characters; a system block
marked with cache_control is written to the cache on its first request and read from it afterwards.
Retried statuses (429, 5xx) carry `retry-after-ms` (`server.retry_after_ms`, 10 by default): the SDK
honours it, so retry tests take milliseconds instead of its exponential backoff.
"""

import json
import re
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field

from tests.json_server import LocalHttpServer

TEST_KEY = "sk-ant-test-7c4e1f-DO-NOT-LEAK"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    400: "invalid request",
    401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    404: "Not found",
    429: "Number of request tokens has exceeded your per-minute rate limit.",
    500: "Internal server error",
    529: "Overloaded",
}


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict  # lowercased name -> value
    body: bytes
    json: object = None


@dataclass
class Reply:
    status: int
    body: dict
    headers: dict = field(default_factory=dict)
    # For a tool reply: the tool input, filled into a message once the request is known.
    tool_input: dict | None = None
    tool_name: str | None = None
    usage: dict | None = None


def tool_reply(tool_input: dict, *, name: str | None = None, usage: dict | None = None) -> Reply:
    """A message with one tool_use block; `name` defaults to the tool the request forced."""
    return Reply(200, {}, tool_input=tool_input, tool_name=name, usage=usage)


def text_reply(text: str) -> Reply:
    """A message with only a text block (stop_reason end_turn): the model did not call the tool."""
    return Reply(200, {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"})


def error(
    status: int, message: str | None = None, *, retry_after_ms: int | None = None, headers=None
) -> Reply:
    """An error in the API's shape. 429 and 5xx get `retry-after-ms` (the server's default unless given)."""
    error_type = _ERROR_TYPES.get(status, "api_error")
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message or _DEFAULT_MESSAGES.get(status, "error")},
        "request_id": f"req_{uuid.uuid4().hex[:24]}",
    }
    extra = dict(headers or {})
    if retry_after_ms is not None:
        extra["retry-after-ms"] = str(retry_after_ms)
    return Reply(status, body, extra)


def estimate(text: str) -> int:
    return max(1, (len(text) + 3) // 4) if text else 0


def forced_tool(body: dict) -> dict:
    """The tool definition the request forced with tool_choice (or its only tool)."""
    tools = body.get("tools") or []
    choice = body.get("tool_choice") or {}
    for tool in tools:
        if choice.get("type") == "tool" and tool.get("name") == choice.get("name"):
            return tool
    return tools[0] if tools else {}


def prompt_text(body: dict) -> str:
    """The text of the request's user messages, joined."""
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(block.get("text", "") for block in content or [] if isinstance(block, dict))
    return "\n".join(parts)


def judge_responder(body: dict) -> dict:
    """A valid, deterministic answer to each of the judge's tools (see transcriber_tests.judge).

    pick: the first version offered; labels: "same_meaning" for every line asked; patterns: one pattern holding
    every line; verdict: a fixed sentence."""
    tool = forced_tool(body)
    name = tool.get("name", "")
    properties = tool.get("input_schema", {}).get("properties", {})
    if name == "record_pick":
        return {
            "reasoning": "It keeps the caller's wording.",
            "candidate": properties["candidate"]["enum"][0],
        }
    if name == "record_labels":
        ids = re.findall(r'<line id="([^"]+)">', prompt_text(body))
        return {
            "labels": [
                {"line": i, "reasoning": "Both say the same thing.", "label": "same_meaning"} for i in ids
            ]
        }
    if name == "record_patterns":
        ids = re.findall(r'<line id="([^"]+)">', prompt_text(body))
        if not ids:
            return {"patterns": []}
        return {
            "patterns": [
                {
                    "name": "other differences",
                    "description": "Lines the candidate wrote differently from the caller.",
                    "line_ids": ids,
                }
            ]
        }
    if name == "record_verdict":
        return {"verdict": "The candidate would fix some lines and break others."}
    raise AssertionError(f"judge_responder does not know the tool {name!r}")


class FakeAnthropic(LocalHttpServer):
    protocol_version = "HTTP/1.1"

    def __init__(self, key: str = TEST_KEY):
        self.key = key
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        """Forget every request, script and cached prompt (the session's server, between tests)."""
        self.retry_after_ms = 10
        self.responder = None
        self.requests: list[Recorded] = []
        self._script: deque = deque()
        self._cached_systems: set[str] = set()

    # -- scripting ------------------------------------------------------------------------------------
    def queue(self, *items):
        """Answer the next requests, in order, with these items (dicts are tool inputs, or Replies)."""
        with self._lock:
            self._script.extend(items)

    @property
    def bodies(self) -> list:
        return [recorded.json for recorded in self.requests]

    # -- the server ------------------------------------------------------------------------------------
    def answer(self, method, path, headers, body):
        recorded = Recorded(method, path, headers, body)
        try:
            recorded.json = json.loads(body) if body else None
        except ValueError:
            recorded.json = None
        with self._lock:
            self.requests.append(recorded)
        status, payload, extra = self.respond(recorded)
        extra = {"request-id": payload.get("request_id") or f"req_{uuid.uuid4().hex[:24]}", **extra}
        return status, "application/json", json.dumps(payload).encode(), extra

    # -- the API --------------------------------------------------------------------------------------
    def respond(self, recorded: Recorded) -> tuple[int, dict, dict]:
        refusal = self._check(recorded)
        if refusal is not None:
            return self._finish(refusal, recorded.json)
        with self._lock:
            item = self._script.popleft() if self._script else None
        if item is None:
            try:
                item = (self.responder or judge_responder)(recorded.json)
            except Exception as exc:  # a broken responder fails the test at once, without SDK retries
                item = error(
                    400, f"the test's responder failed: {exc!r}", headers={"x-should-retry": "false"}
                )
        if isinstance(item, dict):
            item = tool_reply(item)
        return self._finish(item, recorded.json)

    def _check(self, recorded: Recorded) -> Reply | None:
        headers = recorded.headers
        if recorded.method != "POST" or recorded.path.split("?")[0] != "/v1/messages":
            return error(404, f"{recorded.method} {recorded.path} is not served here")
        bearer = headers.get("authorization", "")
        given = headers.get("x-api-key") or (bearer[7:] if bearer.startswith("Bearer ") else None)
        if not given:
            return error(401, "x-api-key header is required")
        if given != self.key:
            return error(401, "invalid x-api-key")
        if not headers.get("anthropic-version"):
            return error(400, "anthropic-version: header is required")
        if not headers.get("content-type", "").startswith("application/json"):
            return error(400, "content-type must be application/json")
        body = recorded.json
        if not isinstance(body, dict):
            return error(400, "the request body is not a JSON object")
        problem = _body_problem(body)
        return error(400, problem) if problem else None

    def _finish(self, reply: Reply, body) -> tuple[int, dict, dict]:
        headers = dict(reply.headers)
        if (reply.status == 429 or reply.status >= 500) and "retry-after-ms" not in headers:
            headers["retry-after-ms"] = str(self.retry_after_ms)
        if reply.status != 200:
            return reply.status, reply.body, headers
        message = {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [],
            "stop_reason": "tool_use",
            "stop_sequence": None,
        }
        if reply.tool_input is not None:
            message["content"] = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{uuid.uuid4().hex[:24]}",
                    "name": reply.tool_name or forced_tool(body).get("name"),
                    "input": reply.tool_input,
                }
            ]
        else:
            message.update(reply.body)
        message["usage"] = reply.usage or self._usage(body, message["content"])
        return 200, message, headers

    def _usage(self, body: dict, content: list) -> dict:
        cached, rest = "", ""
        system = body.get("system")
        for block in [{"text": system}] if isinstance(system, str) else system or []:
            if block.get("cache_control"):
                cached += block.get("text", "")
            else:
                rest += block.get("text", "")
        rest += json.dumps(body.get("tools") or []) + prompt_text(body)
        written = read = 0
        if cached:
            with self._lock:
                if cached in self._cached_systems:
                    read = estimate(cached)
                else:
                    self._cached_systems.add(cached)
                    written = estimate(cached)
        return {
            "input_tokens": estimate(rest),
            "output_tokens": estimate(json.dumps(content)),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }


SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k")  # refused by API version 2026-10-21, on every model


def _body_problem(body: dict) -> str | None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    for name in SAMPLING_PARAMETERS:
        if name in body:
            return f"{name}: Extra inputs are not permitted"
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        return "max_tokens: Field required (a positive integer)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    if messages[0].get("role") != "user":
        return 'messages: first message must use the "user" role'
    if any(m.get("role") not in ("user", "assistant") for m in messages):
        return 'messages: roles must be "user" or "assistant"'
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        if not isinstance(system, list) or any(b.get("type") != "text" for b in system):
            return "system: must be a string or a list of text blocks"
        for block in system:
            control = block.get("cache_control")
            if control is not None and control.get("type") != "ephemeral":
                return "system.cache_control.type: Input should be 'ephemeral'"
    tools = body.get("tools") or []
    for tool in tools:
        if not tool.get("name") or (tool.get("input_schema") or {}).get("type") != "object":
            return "tools: each tool needs a name and an input_schema of type object"
    choice = body.get("tool_choice")
    if choice is not None:
        if choice.get("type") == "tool" and choice.get("name") not in {t["name"] for t in tools}:
            return f"tool_choice: tool {choice.get('name')!r} is not among the tools"
        if choice.get("type") not in ("auto", "any", "tool", "none"):
            return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"
    return None
