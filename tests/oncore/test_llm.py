"""The one Anthropic client, through the real SDK against a local Messages API server."""

import logging
import socket
from decimal import Decimal

import pytest
from django.core.exceptions import ImproperlyConfigured

from oncore import llm
from tests.llm_server import FakeAnthropic, Reply, error, text_reply, tool_reply

TOOL = {
    "name": "record_answer",
    "description": "Record the answer.",
    "input_schema": {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    },
}
SYSTEM = "You judge transcripts. " * 20


@pytest.fixture
def server(llm_server):
    """The fake Messages API, answering record_answer with "yes" unless a test queues something else."""
    llm_server.responder = lambda body: {"answer": "yes"}
    return llm_server


def ask(prompt="Is 'Siobhan' a name?"):
    return llm.call_tool(system=SYSTEM, prompt=prompt, tool=TOOL)


def test_it_returns_the_forced_tools_input_with_tokens_and_cost(server):
    server.queue(
        tool_reply(
            {"answer": "yes"},
            usage={
                "input_tokens": 1000,
                "output_tokens": 200,
                "cache_creation_input_tokens": 3000,
                "cache_read_input_tokens": 0,
            },
        )
    )
    call = ask()
    assert call.name == "record_answer"
    assert call.input == {"answer": "yes"}
    assert (call.input_tokens, call.output_tokens, call.cache_write_tokens, call.cache_read_tokens) == (
        1000,
        200,
        3000,
        0,
    )
    # $3/M in, $15/M out, cache writes at 1.25x input: 0.003 + 0.01125 + 0.003
    assert call.cost == Decimal("0.017250")
    assert call.model == llm.DEFAULT_MODEL


def test_it_marks_the_fixed_system_part_for_caching_and_forces_the_tool(server):
    ask("first line")
    second = ask("second line")
    body = server.requests[0].json
    assert body["system"] == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    assert body["tool_choice"] == {"type": "tool", "name": "record_answer"}
    assert body["tools"] == [TOOL]
    assert body["messages"] == [{"role": "user", "content": "first line"}]
    assert body["model"] == llm.DEFAULT_MODEL
    assert server.requests[0].headers["anthropic-version"]
    # the second call re-sends the same system part, so the API reads it from the cache
    assert second.cache_read_tokens > 0 and second.cache_write_tokens == 0


def test_it_sends_the_key_only_in_the_auth_header(server):
    ask()
    recorded = server.requests[0]
    auth_headers = {"x-api-key", "authorization"}
    assert any(server.key in value for name, value in recorded.headers.items() if name in auth_headers)
    assert not any(
        server.key in value for name, value in recorded.headers.items() if name not in auth_headers
    )
    assert server.key.encode() not in recorded.body
    assert recorded.path == "/v1/messages"


def test_it_uses_the_model_from_settings(server, settings):
    settings.ANTHROPIC_MODEL = "claude-haiku-4-5"
    call = ask()
    assert server.requests[0].json["model"] == "claude-haiku-4-5"
    assert call.model == "claude-haiku-4-5"


def test_it_retries_a_rate_limit_waiting_what_the_server_asks(server, caplog):
    server.queue(error(429, retry_after_ms=10), {"answer": "after the wait"})
    with caplog.at_level(logging.INFO, logger="anthropic"):
        call = ask()
    assert call.input == {"answer": "after the wait"}
    assert [r.headers["x-stainless-retry-count"] for r in server.requests] == ["0", "1"]
    assert "in 0.010000 seconds" in caplog.text  # the SDK waited the 10 ms the 429 asked for


def test_it_retries_a_server_error_then_succeeds(server):
    server.queue(error(500), error(529), {"answer": "recovered"})
    assert ask().input == {"answer": "recovered"}
    assert len(server.requests) == 3


def test_it_gives_up_on_a_server_error_that_persists_as_retryable(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "2")
    server.responder = lambda body: error(500, "Internal server error")
    with pytest.raises(llm.LLMError) as caught:
        ask()
    assert caught.value.retryable is True
    assert caught.value.status == 500
    assert str(caught.value) == "the judge's service failed (500), even after retrying; try again later"
    assert len(server.requests) == 3  # the first try and two retries


def test_it_gives_up_on_a_rate_limit_that_persists_as_retryable(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "1")
    server.responder = lambda body: error(429)
    with pytest.raises(llm.LLMError) as caught:
        ask()
    assert caught.value.retryable is True
    assert "rate limit" in str(caught.value) and "try again later" in str(caught.value)
    assert "ANTHROPIC" not in str(caught.value)


def test_it_reports_a_rejected_key_without_retrying_or_showing_it(server, monkeypatch, caplog):
    wrong_key = "sk-ant-wrong-5d2a9e-SECRET"
    monkeypatch.setenv("ANTHROPIC_API_KEY", wrong_key)
    with caplog.at_level(logging.WARNING, logger="oncore.llm"), pytest.raises(llm.LLMError) as caught:
        ask()
    assert "check ANTHROPIC_API_KEY" in caplog.text and wrong_key not in caplog.text  # the operator's detail
    assert caught.value.retryable is False
    assert caught.value.status == 401
    assert (
        str(caught.value)
        == "the judge is not configured correctly on this server (the judge's service answered 401)"
    )
    assert wrong_key not in str(caught.value) and wrong_key not in repr(caught.value)
    assert len(server.requests) == 1


def test_it_is_not_configured_without_a_key(server, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert llm.judge_configured() is False
    with pytest.raises(llm.JudgeNotConfigured, match="^the judge is not configured on this server$"):
        ask()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "   ")
    assert llm.judge_configured() is False
    assert server.requests == []


def test_it_is_configured_with_a_key(server):
    assert llm.judge_configured() is True


def test_it_rejects_an_answer_without_the_tool_call(server):
    server.queue(text_reply("I think the answer is yes."))
    with pytest.raises(llm.LLMError) as caught:
        ask()
    assert caught.value.retryable is False
    assert "without calling the record_answer tool" in str(caught.value)


def test_it_rejects_a_call_to_another_tool(server):
    server.queue(tool_reply({"answer": "yes"}, name="some_other_tool"))
    with pytest.raises(llm.LLMError, match="without calling the record_answer tool"):
        ask()


def test_it_rejects_a_tool_call_missing_a_required_field(server):
    server.queue({"note": "no answer field"})
    with pytest.raises(llm.LLMError, match="lacks answer"):
        ask()


def test_it_rejects_an_answer_cut_off_at_max_tokens(server):
    cut = {"type": "tool_use", "id": "toolu_1", "name": "record_answer", "input": {"answer": "ye"}}
    server.queue(Reply(200, {"content": [cut], "stop_reason": "max_tokens"}))
    with pytest.raises(llm.LLMError, match="cut off at max_tokens=1024"):
        ask()


def test_it_reports_an_unreachable_api_as_retryable_without_naming_it(monkeypatch, caplog):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-unused")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "0")
    with caplog.at_level(logging.WARNING, logger="oncore.llm"), pytest.raises(llm.LLMError) as caught:
        ask()
    assert caught.value.retryable is True
    assert str(caught.value) == "the judge could not be reached, even after retrying"
    assert f"127.0.0.1:{port}" in caplog.text  # where it tried: in the server's log only


def test_it_prices_cache_reads_and_writes_from_the_input_price():
    # 1M fresh input at $3, 1M cache writes at $3.75, 1M cache reads at $0.30, 1M output at $15
    assert llm.cost(
        1_000_000, 1_000_000, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000
    ) == Decimal("22.050000")


def test_it_reads_prices_from_the_environment(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_PRICE_INPUT_PER_MTOK", "1")
    monkeypatch.setenv("ANTHROPIC_PRICE_OUTPUT_PER_MTOK", "5")
    assert llm.estimate_cost(2_000_000, 1_000_000) == Decimal("7.000000")


def test_it_fails_loudly_on_a_bad_price(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_PRICE_OUTPUT_PER_MTOK", "fifteen")
    with pytest.raises(ImproperlyConfigured, match="ANTHROPIC_PRICE_OUTPUT_PER_MTOK"):
        llm.estimate_cost(10, 10)


def test_it_estimates_about_four_characters_per_token():
    assert llm.estimate_tokens("") == 0
    assert llm.estimate_tokens("a table for two") == 4  # 15 characters, rounded up
    assert llm.estimate_tokens("x" * 4000) == 1000
    assert llm.estimate_cost(1_000_000, 100_000) == Decimal("4.500000")


def test_it_answers_from_a_standalone_server(monkeypatch):
    """The server works outside the fixture too, for tests that manage its lifetime themselves."""
    with FakeAnthropic(key="sk-ant-own-key") as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", server.key)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        server.responder = lambda body: {"answer": body["messages"][0]["content"].upper()}
        assert ask("shout").input == {"answer": "SHOUT"}


def test_it_sends_no_sampling_parameter_which_the_api_version_refuses(server):
    llm.call_tool(system="Fixed part.", prompt="Label it.", tool=TOOL)
    body = server.bodies[0]
    assert not {"temperature", "top_p", "top_k"} & set(body)
    assert server.requests[0].headers["anthropic-version"] == "2026-10-21"
