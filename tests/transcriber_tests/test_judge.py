"""The judge's prompts and calls, through the real SDK against the local Messages API server."""

import re

import pytest

from oncore import llm
from tests.llm_server import prompt_text
from transcriber_tests import judge

INSTRUCTIONS = "You take bookings for Bistro Verde. Record the guest's full name, party size and time."
CONTEXT = [
    ("assistant", "Bistro Verde, how can I help?"),
    ("caller", "I'd like a table for four at eight thirty."),
    ("assistant", "Lovely. And the name for the booking?"),
]


def versions_in(body) -> dict:
    """letter -> text of the versions a pick request shows the judge."""
    return dict(re.findall(r'<version id="([A-Z])">([^<]*)</version>', prompt_text(body)))


def test_it_picks_the_version_that_fits_the_business_best(llm_server):
    def prefer_the_hyphen(body):
        letter = next(letter for letter, text in versions_in(body).items() if "Mary-Kate" in text)
        return {"candidate": letter, "reasoning": "The guest list spells the name with a hyphen."}

    llm_server.responder = prefer_the_hyphen
    pick = judge.pick_best_version(
        instructions=INSTRUCTIONS,
        context_lines=CONTEXT,
        expected="It's Mary-Kate O'Brien.",
        versions={"deepgram-nova-3": "it's mary kate o'brien", "whisper-base": "It's Mary-Kate O'Brien."},
    )
    assert pick.candidate == "whisper-base"
    assert pick.reasoning == "The guest list spells the name with a hyphen."
    assert pick.call.input_tokens > 0 and pick.call.cost > 0

    body = llm_server.requests[0].json
    prompt = prompt_text(body)
    assert "deepgram" not in prompt and "whisper" not in prompt  # the judge does not know who wrote which
    assert "It's Mary-Kate O'Brien." in prompt and "And the name for the booking?" in prompt
    assert INSTRUCTIONS in body["system"][0]["text"]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["tool_choice"] == {"type": "tool", "name": judge.PICK_TOOL_NAME}


def test_it_refuses_a_pick_naming_an_unknown_version(llm_server):
    llm_server.queue({"candidate": "Z", "reasoning": "Made up."})
    with pytest.raises(llm.LLMError, match="not one of the versions offered") as caught:
        judge.pick_best_version(
            instructions=INSTRUCTIONS,
            context_lines=CONTEXT,
            expected="Siobhan",
            versions={"a": "Siobhan", "b": "siobhan."},
        )
    assert caught.value.retryable is False


def test_it_needs_two_versions_to_pick():
    with pytest.raises(ValueError, match="at least two versions"):
        judge.pick_best_version(instructions="", context_lines=[], expected="x", versions={"only": "x"})


def test_it_labels_lines_from_what_the_judge_answers(llm_server):
    def candidate_right_on_names(body):
        candidate = re.search(r"<candidate_transcript>(.*)</candidate_transcript>", prompt_text(body)).group(
            1
        )
        if "Siobhan" in candidate:
            return {"label": "candidate_right", "reasoning": "The assistant confirmed Siobhan."}
        return {"label": "live_right", "reasoning": "The candidate lost the time."}

    llm_server.responder = candidate_right_on_names
    fixed = judge.label_line(
        instructions=INSTRUCTIONS,
        context_lines=CONTEXT,
        live_text="It's shin wong.",
        candidate_text="It's Siobhan.",
    )
    broken = judge.label_line(
        instructions=INSTRUCTIONS, context_lines=CONTEXT, live_text="At 8:30.", candidate_text="At eight."
    )
    assert (fixed.label, fixed.reasoning) == ("candidate_right", "The assistant confirmed Siobhan.")
    assert broken.label == "live_right"
    first, second = llm_server.bodies
    assert "<live_transcript>It's shin wong.</live_transcript>" in prompt_text(first)
    # every line of a run sends the same fixed part, so the API caches it after the first
    assert first["system"] == second["system"]
    assert broken.call.cache_read_tokens > 0 and fixed.call.cache_write_tokens > 0


def test_it_refuses_an_unknown_label(llm_server):
    llm_server.queue({"label": "mostly_right", "reasoning": "?"})
    with pytest.raises(llm.LLMError, match="mostly_right"):
        judge.label_line(instructions=INSTRUCTIONS, context_lines=CONTEXT, live_text="a", candidate_text="b")


BREAKS = [
    {"line_id": 11, "live_text": "Siobhan Kelly", "candidate_text": "Siobhan"},
    {"line_id": 12, "live_text": "Mary-Kate O'Brien", "candidate_text": "Mary-Kate", "context": CONTEXT},
    {"line_id": 13, "live_text": "at 8:30", "candidate_text": "at eight thirty"},
    {"line_id": 14, "live_text": "two kids", "candidate_text": "to kids"},
]


def test_it_groups_broken_lines_into_patterns_largest_first(llm_server):
    llm_server.queue(
        {
            "patterns": [
                {"name": "Writes times as words", "description": "Digits become words.", "line_ids": ["13"]},
                {
                    "name": "drops surnames",
                    "description": "The surname is lost.",
                    "line_ids": ["11", "12", "12"],
                },
            ]
        }
    )
    patterns = judge.group_patterns(lines=BREAKS)
    assert [(p.name, p.line_ids, p.count) for p in patterns] == [
        ("drops surnames", [11, 12], 2),
        ("writes times as words", [13], 1),
        ("other", [14], 1),  # the line the judge left out is not lost
    ]
    assert patterns[0].description == "The surname is lost."
    assert patterns.call.output_tokens > 0
    prompt = prompt_text(llm_server.requests[0].json)
    assert '<line id="12">' in prompt and "<candidate>at eight thirty</candidate>" in prompt
    assert "Bistro Verde, how can I help?" in prompt  # the context given with line 12


def test_it_refuses_patterns_naming_lines_not_given(llm_server):
    llm_server.queue({"patterns": [{"name": "drops surnames", "description": "-", "line_ids": ["11", "99"]}]})
    with pytest.raises(llm.LLMError, match="lines that were not given: 99"):
        judge.group_patterns(lines=BREAKS)


def test_it_groups_nothing_without_asking(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    patterns = judge.group_patterns(lines=[])
    assert list(patterns) == [] and patterns.call is None


def test_it_writes_a_verdict_from_the_counts_and_patterns(llm_server):
    llm_server.queue({"verdict": "  The candidate would fix 12 names but drop 2 surnames.  "})
    patterns = [judge.Pattern("drops surnames", "The surname is lost.", [11, 12])]
    examples = [{"live_text": "Siobhan Kelly", "candidate_text": "Siobhan", "label": "live_right"}]
    verdict = judge.write_verdict(fixes=12, breaks=2, patterns=patterns, examples=examples)
    assert verdict.text == "The candidate would fix 12 names but drop 2 surnames."
    prompt = prompt_text(llm_server.requests[0].json)
    assert "<fixes>12</fixes>" in prompt and "<breaks>2</breaks>" in prompt
    assert '<pattern name="drops surnames" lines="2">' in prompt
    assert "<candidate>Siobhan</candidate>" in prompt


def test_it_refuses_an_empty_verdict(llm_server):
    llm_server.queue({"verdict": "   "})
    with pytest.raises(llm.LLMError, match="empty verdict"):
        judge.write_verdict(fixes=1, breaks=0, patterns=[], examples=[])


def test_it_answers_every_judge_call_with_the_default_responder(llm_server):
    pick = judge.pick_best_version(
        instructions=INSTRUCTIONS,
        context_lines=CONTEXT,
        expected="x",
        versions={"first": "x", "second": "X."},
    )
    label = judge.label_line(
        instructions=INSTRUCTIONS, context_lines=CONTEXT, live_text="a", candidate_text="b"
    )
    patterns = judge.group_patterns(lines=BREAKS)
    verdict = judge.write_verdict(fixes=1, breaks=4, patterns=patterns, examples=BREAKS[:2])
    assert pick.candidate == "first"
    assert label.label in judge.LABELS
    assert sorted(i for p in patterns for i in p.line_ids) == [11, 12, 13, 14]
    assert verdict.text


def test_it_does_not_judge_without_a_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(llm.JudgeNotConfigured, match="judge not configured"):
        judge.label_line(instructions=INSTRUCTIONS, context_lines=CONTEXT, live_text="a", candidate_text="b")


def test_it_estimates_a_runs_tokens_from_its_line_counts():
    assert judge.estimate_run_tokens(0, 200) == (0, 0)
    small_in, small_out = judge.estimate_run_tokens(10, 200)
    large_in, large_out = judge.estimate_run_tokens(100, 200)
    assert 10 * 500 < small_in < 10 * 2000  # a label call carries the instructions and a few lines
    assert large_in > small_in and large_out > small_out
    assert judge.estimate_run_tokens(500, 200) == judge.estimate_run_tokens(
        200, 200
    )  # never more than transcribed
    longer, _ = judge.estimate_run_tokens(10, 200, instructions="x" * 20_000)
    assert longer > small_in
    assert llm.estimate_cost(large_in, large_out) > llm.estimate_cost(small_in, small_out)
