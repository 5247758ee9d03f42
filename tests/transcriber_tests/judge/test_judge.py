"""The judge's prompts and calls, through the real SDK against the local Messages API server."""

import re

import pytest

from oncore import llm
from tests.llm_server import prompt_text, text_reply
from tests.transcriber_tests.support import shown_lines
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
        return {"reasoning": "The guest list spells the name with a hyphen.", "candidate": letter}

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


def test_it_asks_a_pick_naming_an_unknown_version_once_more_then_refuses_it(llm_server):
    llm_server.queue(
        {"reasoning": "Made up.", "candidate": "Z"}, {"reasoning": "Made up again.", "candidate": "Y"}
    )
    with pytest.raises(llm.LLMError, match="invalid twice: .*not one of the versions offered") as caught:
        judge.pick_best_version(
            instructions=INSTRUCTIONS,
            context_lines=CONTEXT,
            expected="Siobhan",
            versions={"a": "Siobhan", "b": "siobhan."},
        )
    assert caught.value.retryable is False
    first, second = llm_server.bodies
    assert "previous_answer_problem" not in prompt_text(first)
    assert "Your previous answer could not be used: the judge picked 'Z'" in prompt_text(second)


def test_it_takes_a_valid_pick_on_the_second_asking(llm_server):
    llm_server.queue(
        {"reasoning": "?", "candidate": "Z"}, {"reasoning": "Lower case is stored.", "candidate": "B"}
    )
    versions = {"a": "Siobhan", "b": "siobhan."}
    pick = judge.pick_best_version(
        instructions="", context_lines=CONTEXT, expected="Siobhan", versions=versions
    )
    assert (
        pick.candidate
        == judge.build_pick(instructions="", context_lines=[], expected="", versions=versions)[3]["B"]
    )
    assert pick.reasoning == "Lower case is stored." and len(llm_server.requests) == 2
    assert pick.call.input_tokens > len(prompt_text(llm_server.bodies[0])) // 4  # both askings are paid for


def test_it_shuffles_the_versions_shown_for_a_pick_never_in_bank_order():
    orders = set()
    for n in range(12):
        versions = {f"cand-{i}": f"version {i} of line {n}" for i in range(3)}
        _, prompt, _, letters = judge.build_pick(
            instructions="", context_lines=[], expected="x", versions=versions
        )
        orders.add(tuple(letters.values()))
        again = judge.build_pick(instructions="", context_lines=[], expected="x", versions=versions)[3]
        assert again == letters  # the same versions are shown in the same order
        assert f'<version id="A">{versions[letters["A"]]}</version>' in prompt
    assert len(orders) > 2  # bank order is not always first


def test_it_needs_two_versions_to_pick():
    with pytest.raises(ValueError, match="at least two versions"):
        judge.pick_best_version(instructions="", context_lines=[], expected="x", versions={"only": "x"})


LINE_CONTEXT = [*CONTEXT[:1], ("caller", judge.placeholder("A")), *CONTEXT[2:]]


def shown(body) -> dict:
    """line id -> (transcript 1, transcript 2) of a label request."""
    return {key: (first, second) for key, first, second in shown_lines(body)}


def right_when_it_says(word):
    """A judge that labels right whichever transcript contains `word`, wherever it is shown."""

    def answer(body):
        labels = []
        for key, (first, second) in shown(body).items():
            label = (
                judge.FIRST_RIGHT if word in first else judge.SECOND_RIGHT if word in second else "both_wrong"
            )
            labels.append({"line": key, "reasoning": f"Only one transcript has {word}.", "label": label})
        return {"labels": labels}

    return answer


@pytest.mark.parametrize("live_first", [True, False])
def test_it_shows_two_neutral_transcripts_and_maps_the_answer_back(llm_server, live_first):
    llm_server.responder = right_when_it_says("Siobhan")
    fixed = judge.label_line(
        instructions=INSTRUCTIONS,
        context_lines=LINE_CONTEXT,
        live_text="It's shin wong.",
        candidate_text="It's Siobhan.",
        live_first=live_first,
    )
    assert (fixed.label, fixed.reasoning) == ("candidate_right", "Only one transcript has Siobhan.")
    assert fixed.answer == (judge.SECOND_RIGHT if live_first else judge.FIRST_RIGHT)
    body = llm_server.bodies[0]
    first, second = shown(body)["A"]
    assert (first, second) == (
        ("It's shin wong.", "It's Siobhan.") if live_first else ("It's Siobhan.", "It's shin wong.")
    )
    # Nothing tells the judge which transcript is the live one.
    said = (body["system"][0]["text"] + prompt_text(body)).lower()
    assert not re.search(r"\blive\b|\bcandidate\b", said)
    assert "[line A]" in prompt_text(body) and "And the name for the booking?" in prompt_text(body)


def test_it_tells_the_judge_an_assistant_reply_echoing_a_text_is_not_evidence(llm_server):
    judge.label_line(instructions=INSTRUCTIONS, context_lines=LINE_CONTEXT, live_text="a", candidate_text="b")
    system = llm_server.bodies[0]["system"][0]["text"]
    assert "Only the caller is evidence" in system
    assert "a reply that echoes a detail" in system and "is not evidence" in system
    assert '"830" is not "eight thirty"' in system  # the product's scoring convention
    assert system.count("<example>") in range(6, 9)  # worked examples


def test_it_labels_several_lines_of_a_call_in_one_request_and_caches_the_fixed_part(llm_server):
    llm_server.responder = right_when_it_says("Siobhan")
    context = [
        ("caller", judge.placeholder("A")),
        ("assistant", "Lovely."),
        ("caller", judge.placeholder("B")),
    ]
    items = [
        judge.LabelItem("A", "It's shin wong.", "It's Siobhan.", live_first=False),
        judge.LabelItem("B", "Siobhan O'Brien", "shiv on O'Brien", live_first=True),
    ]
    batch = judge.label_lines(instructions=INSTRUCTIONS, context_lines=context, items=items)
    assert {k: v.label for k, v in batch.labels.items()} == {"A": "candidate_right", "B": "live_right"}
    assert batch.errors == {} and len(batch.calls) == 1 == len(llm_server.requests)
    again = judge.label_lines(instructions=INSTRUCTIONS, context_lines=context, items=items)
    first, second = llm_server.bodies
    assert first["system"] == second["system"] and first["tools"] == second["tools"]
    assert batch.calls[0].cache_write_tokens > 0 and again.calls[0].cache_read_tokens > 0


def test_it_asks_an_invalid_answer_once_more_then_leaves_only_that_line_unlabelled(llm_server):
    llm_server.queue(
        {
            "labels": [
                {"line": "A", "reasoning": "A has the time.", "label": judge.FIRST_RIGHT},
                {"line": "B", "reasoning": "Unsure.", "label": "mostly_right"},
            ]
        },
        {"labels": [{"line": "B", "reasoning": "", "label": "same_meaning"}]},
    )
    items = [
        judge.LabelItem("A", "at 8:30", "at eight", True),
        judge.LabelItem("B", "two kids", "to kids", True),
    ]
    batch = judge.label_lines(instructions=INSTRUCTIONS, context_lines=[], items=items)
    assert batch.labels["A"].label == "live_right" and "B" not in batch.labels
    assert batch.errors == {"B": "the judge's answer was invalid twice: line B: no reasoning"}
    first, second = llm_server.bodies
    assert set(shown(second)) == {"B"}  # only the invalid line is asked again, saying what was wrong
    assert "line B: the label 'mostly_right' is not one of" in prompt_text(second)
    assert len(batch.calls) == 2


def test_it_treats_an_answer_without_the_tool_call_as_invalid_and_asks_once_more(llm_server):
    llm_server.queue(text_reply("I think they mean the same."))
    label = judge.label_line(instructions="", context_lines=[], live_text="a b", candidate_text="a c")
    assert label.label == "same_meaning" and len(llm_server.requests) == 2  # the default responder's answer


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
    versions = {"first": "x", "second": "X."}
    pick = judge.pick_best_version(
        instructions=INSTRUCTIONS, context_lines=CONTEXT, expected="x", versions=versions
    )
    label = judge.label_line(
        instructions=INSTRUCTIONS, context_lines=LINE_CONTEXT, live_text="a", candidate_text="b"
    )
    patterns = judge.group_patterns(lines=BREAKS)
    verdict = judge.write_verdict(fixes=1, breaks=4, patterns=patterns, examples=BREAKS[:2])
    assert (
        pick.candidate
        == judge.build_pick(instructions="", context_lines=[], expected="", versions=versions)[3]["A"]
    )
    assert label.label in judge.LABELS
    assert sorted(i for p in patterns for i in p.line_ids) == [11, 12, 13, 14]
    assert verdict.text


def test_it_does_not_judge_without_a_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(llm.JudgeNotConfigured, match="judge is not configured on this server"):
        judge.label_line(instructions=INSTRUCTIONS, context_lines=CONTEXT, live_text="a", candidate_text="b")


def test_it_estimates_a_runs_tokens_from_the_requests_it_would_send():
    def request(n, line="x" * 60):
        context = [("assistant", line)] + [("caller", judge.placeholder(chr(65 + i))) for i in range(n)]
        items = [judge.LabelItem(chr(65 + i), line, line, True) for i in range(n)]
        return (INSTRUCTIONS, context, items)

    assert judge.estimate_run_tokens([], 0) == (judge.TokenEstimate(0, 0, 0),) * 2
    expected, most = judge.estimate_run_tokens([request(4), request(4)], 2)
    assert 0 < expected.input_tokens < most.input_tokens and expected.output_tokens < most.output_tokens
    assert (expected.requests, most.requests) == (1, 2)
    # The context actually sent counts: longer neighbouring lines cost more.
    longer, _ = judge.estimate_run_tokens([request(4, "y" * 600), request(4, "y" * 600)], 2)
    assert longer.input_tokens > expected.input_tokens
    # Several lines per request: eight lines in one request cost less than eight requests of one.
    one_request, _ = judge.estimate_run_tokens([request(8)], 8)
    eight_requests, _ = judge.estimate_run_tokens([request(1)] * 8, 8)
    assert one_request.input_tokens < eight_requests.input_tokens / 3
    assert llm.estimate_cost(most.input_tokens, most.output_tokens) > llm.estimate_cost(
        expected.input_tokens, expected.output_tokens
    )


# The prompt version names one exact set of prompts and tool schemas: change a prompt, and this test fails until
# JUDGE_PROMPT_VERSION is bumped and its fingerprint recorded here.
PROMPT_FINGERPRINTS = {"judge-2": "22960a519a099121", "judge-3": "301a699f090509f5"}


def test_it_ties_the_prompt_version_to_a_hash_of_its_prompts_and_schemas():
    assert judge.prompt_fingerprint() == PROMPT_FINGERPRINTS[judge.JUDGE_PROMPT_VERSION]


def test_it_writes_the_reasoning_before_every_answer_in_every_tool_schema():
    _, _, pick_tool, _ = judge.build_pick(
        instructions="", context_lines=[], expected="", versions={"a": "1", "b": "2"}
    )
    pick = list(pick_tool["input_schema"]["properties"])
    label = list(judge.LABEL_TOOL["input_schema"]["properties"]["labels"]["items"]["properties"])
    assert pick == ["reasoning", "candidate"]
    assert label.index("reasoning") < label.index("label")


def test_it_lifts_the_fixed_label_prompt_past_the_prompt_cache_minimum():
    system, _, tool = judge.build_labels(
        instructions="", context_lines=[], items=[judge.LabelItem("A", "a", "b", True)]
    )
    assert llm.estimate_tokens(system) >= judge.CACHE_MIN_TOKENS
