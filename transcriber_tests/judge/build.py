"""Turning lines into the judge's requests and its answers into labels. Prompt builders are pure; each
`build_*` returns (system, prompt, tool), where `system` is the fixed part (role, task, the assistant's
instructions) that is sent for prompt caching, and `prompt` carries the line-specific text. Also the tokens a
run's judging is expected to use, and the fingerprint of every prompt the judge sends."""

import json
import random
import re
from dataclasses import dataclass
from string import ascii_uppercase

from oncore import llm
from oncore.llm import ToolCall

from .prompts import (
    _LABEL_TASK,
    _PATTERNS_TASK,
    _PICK_REASONING,
    _PICK_TASK,
    _ROLE,
    _VERDICT_TASK,
    FIRST_RIGHT,
    LABEL_TOOL,
    NEUTRAL_LABELS,
    PATTERNS_TOOL,
    PICK_TOOL_NAME,
    SECOND_RIGHT,
    VERDICT_TOOL,
)


@dataclass(frozen=True)
class LabelItem:
    """One line to label: the id the judge sees, both texts, and whether the live text is shown first."""

    key: str
    live_text: str
    candidate_text: str
    live_first: bool

    @property
    def shown(self) -> tuple[str, str]:
        """(transcript 1, transcript 2) as the judge sees them."""
        if self.live_first:
            return self.live_text, self.candidate_text
        return self.candidate_text, self.live_text

    def run_label(self, neutral: str) -> str:
        """The judge's neutral answer mapped back: transcript_1_right is live_right when live was shown first."""
        if neutral not in (FIRST_RIGHT, SECOND_RIGHT):
            return neutral
        live_is_first = self.live_first
        first_right = neutral == FIRST_RIGHT
        return "live_right" if first_right == live_is_first else "candidate_right"


@dataclass(frozen=True)
class Label:
    label: str  # one of LABELS, mapped back from what the judge answered
    reasoning: str
    answer: str  # the judge's own answer, one of NEUTRAL_LABELS
    call: ToolCall | None = None  # label_line's request (label_lines returns its requests apart)


# -- prompt builders (pure) -------------------------------------------------------------------------------
def _system(task: str, instructions: str | None = None) -> str:
    parts = [_ROLE, task]
    if instructions is not None:
        parts.append(f"<assistant_instructions>\n{instructions.strip()}\n</assistant_instructions>")
    return "\n\n".join(parts)


def _context(context_lines) -> str:
    if isinstance(context_lines, str):
        return context_lines.strip()
    return "\n".join(f"{speaker}: {text}" for speaker, text in context_lines or [])


def _order(names, seed) -> list:
    """The names in an order drawn from `seed` (any text or number): the same seed, the same order."""
    shuffled = list(names)
    random.Random(str(seed)).shuffle(shuffled)
    return shuffled


def build_pick(*, instructions: str, context_lines, expected: str, versions: dict[str, str], seed=None):
    """(system, prompt, tool, letters): letters maps each letter shown to the judge to a candidate name. The
    versions are shown in an order drawn from `seed` (default: the versions themselves), never in bank order."""
    if len(versions) < 2:
        raise ValueError("pick_best_version needs at least two versions")
    if len(versions) > len(ascii_uppercase):
        raise ValueError(f"pick_best_version takes at most {len(ascii_uppercase)} versions")
    seed = json.dumps(versions, sort_keys=True) if seed is None else seed
    letters = dict(zip(ascii_uppercase, _order(versions, seed), strict=False))
    shown = "\n".join(
        f'<version id="{letter}">{versions[name]}</version>' for letter, name in letters.items()
    )
    prompt = (
        f"<call_context>\n{_context(context_lines)}\n</call_context>\n"
        f"<what_the_caller_said>{expected}</what_the_caller_said>\n"
        f"<versions>\n{shown}\n</versions>\n"
        "Which version fits the business best?"
    )
    tool = {
        "name": PICK_TOOL_NAME,
        "description": "Record the version that fits the business best, with the reasoning first.",
        "input_schema": {
            "type": "object",
            "properties": {
                "reasoning": _PICK_REASONING,
                "candidate": {
                    "type": "string",
                    "enum": list(letters),
                    "description": "The version's letter.",
                },
            },
            "required": ["reasoning", "candidate"],
        },
    }
    return _system(_PICK_TASK, instructions), prompt, tool, letters


def build_labels(*, instructions: str, context_lines, items: list[LabelItem]):
    """(system, prompt, tool) for labelling one or more lines of one call. `context_lines` are (speaker, text)
    pairs of the call around the lines, each line to label written as its placeholder "[line <key>]"."""
    blocks = []
    for item in items:
        first, second = item.shown
        blocks.append(
            f'<line id="{item.key}">\n<transcript_1>{first}</transcript_1>\n'
            f"<transcript_2>{second}</transcript_2>\n</line>"
        )
    keys = ", ".join(item.key for item in items)
    prompt = (
        f"<call_context>\n{_context(context_lines)}\n</call_context>\n"
        + "\n".join(blocks)
        + f"\nLabel every line above ({keys}): one entry per line, the reasoning before the label."
    )
    return _system(_LABEL_TASK, instructions), prompt, LABEL_TOOL


def placeholder(key: str) -> str:
    """How a line being labelled appears among its neighbours."""
    return f"[line {key}]"


def build_patterns(*, lines: list[dict]):
    blocks = []
    for line in lines:
        context = _context(line.get("context"))
        context_tag = f"<context>\n{context}\n</context>\n" if context else ""
        blocks.append(
            f'<line id="{line["line_id"]}">\n{context_tag}'
            f"<live>{line['live_text']}</live>\n<candidate>{line['candidate_text']}</candidate>\n</line>"
        )
    prompt = "<lines>\n" + "\n".join(blocks) + "\n</lines>\nGroup these lines into failure patterns."
    return _system(_PATTERNS_TASK), prompt, PATTERNS_TOOL


def _pattern_fields(pattern) -> tuple[str, str, int]:
    if isinstance(pattern, dict):
        count = pattern.get("count", len(pattern.get("line_ids", [])))
        return pattern["name"], pattern.get("description", ""), count
    return pattern.name, pattern.description, pattern.count


def build_verdict(*, fixes: int, breaks: int, patterns, examples: list[dict]):
    pattern_tags = "\n".join(
        f'<pattern name="{name}" lines="{count}">{description}</pattern>'
        for name, description, count in map(_pattern_fields, patterns)
    )
    example_tags = "\n".join(
        f'<example label="{example.get("label", "")}"><live>{example["live_text"]}</live>'
        f"<candidate>{example['candidate_text']}</candidate></example>"
        for example in examples
    )
    prompt = (
        f"<fixes>{fixes}</fixes> (lines the live transcript got wrong and the candidate got right)\n"
        f"<breaks>{breaks}</breaks> (lines the live transcript got right and the candidate got wrong)\n"
        f"<break_patterns>\n{pattern_tags}\n</break_patterns>\n"
        f"<examples>\n{example_tags}\n</examples>\n"
        "Write the verdict."
    )
    return _system(_VERDICT_TASK), prompt, VERDICT_TOOL


# -- answers into labels ----------------------------------------------------------------------------------
def _text(answer: dict, key: str) -> str:
    value = answer.get(key)
    return value.strip() if isinstance(value, str) else ""


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def first_sentence(text: str) -> str:
    """The first sentence of a text (a pick records one sentence of reasoning, whatever the model wrote)."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def _parse_labels(answer: dict, items: list[LabelItem]) -> tuple[dict, dict]:
    """(labels by key, problems by key) from one answer of the label tool."""
    by_key = {item.key: item for item in items}
    entries = answer.get("labels")
    if not isinstance(entries, list):
        return {}, dict.fromkeys(by_key, "the answer has no list of labels")
    labels, problems = {}, {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        key = str(entry.get("line", "")).strip()
        if key not in by_key or key in labels or key in problems:
            continue
        neutral, reasoning = entry.get("label"), _text(entry, "reasoning")
        if neutral not in NEUTRAL_LABELS:
            problems[key] = f"line {key}: the label {neutral!r} is not one of {', '.join(NEUTRAL_LABELS)}"
        elif not reasoning:
            problems[key] = f"line {key}: no reasoning"
        else:
            labels[key] = Label(by_key[key].run_label(neutral), reasoning, neutral)
    for key in by_key:
        if key not in labels and key not in problems:
            problems[key] = f"line {key}: no label given"
    return labels, problems


# -- the run estimate -------------------------------------------------------------------------------------
TYPICAL_LINE_CHARS = 60
EXAMPLES_IN_VERDICT = 6
LABEL_OUTPUT_TOKENS = 90  # one entry of the tool call: the id, one to three sentences, the label
PATTERNS_OUTPUT_TOKENS = 300  # names and descriptions, plus ids below
PATTERN_OUTPUT_TOKENS_PER_LINE = 4
VERDICT_OUTPUT_TOKENS = 200


def request_tokens(system: str, prompt: str, tool: dict, *rest) -> int:
    """Input tokens of one request as built (system, prompt and tool), by llm.estimate_tokens."""
    return llm.estimate_tokens(system) + llm.estimate_tokens(prompt) + llm.estimate_tokens(json.dumps(tool))


@dataclass(frozen=True)
class TokenEstimate:
    input_tokens: int
    output_tokens: int
    requests: int  # label requests


def estimate_run_tokens(label_requests: list, n_to_label: int) -> tuple[TokenEstimate, TokenEstimate]:
    """(expected, most) tokens the judge uses on a run, before it starts.

    `label_requests` are (instructions, context_lines, items) for every line the judge might label, built as
    the run builds them (the call's real neighbouring lines and instructions, its real line texts), so the
    input counted is the context actually sent. `n_to_label` is how many of those lines are expected to need
    the judge; the label tokens scale by that share. Add one grouping call over the lines that could be
    breaks and one verdict. Cache discounts are left out, so the estimate errs high."""
    n_most = sum(len(items) for _, _, items in label_requests)
    if n_most == 0:
        zero = TokenEstimate(0, 0, 0)
        return zero, zero
    label_in = sum(
        request_tokens(*build_labels(instructions=i, context_lines=c, items=items))
        for i, c, items in label_requests
    )

    def for_lines(n: int) -> TokenEstimate:
        if n <= 0:
            return TokenEstimate(0, 0, 0)
        sample = "x" * TYPICAL_LINE_CHARS
        lines = [{"line_id": 10_000 + i, "live_text": sample, "candidate_text": sample} for i in range(n)]
        examples = [
            {"live_text": sample, "candidate_text": sample, "label": "live_right"}
        ] * EXAMPLES_IN_VERDICT
        patterns = [{"name": "x" * 20, "description": sample, "count": 1}] * 5
        fixed_in = request_tokens(*build_patterns(lines=lines)) + request_tokens(
            *build_verdict(fixes=n, breaks=n, patterns=patterns, examples=examples)
        )
        share = n / n_most
        requests = max(1, round(len(label_requests) * share))
        return TokenEstimate(
            input_tokens=round(label_in * share) + fixed_in,
            output_tokens=n * (LABEL_OUTPUT_TOKENS + PATTERN_OUTPUT_TOKENS_PER_LINE)
            + PATTERNS_OUTPUT_TOKENS
            + VERDICT_OUTPUT_TOKENS,
            requests=requests,
        )

    return for_lines(min(max(n_to_label, 0), n_most)), for_lines(n_most)


# -- the version of the prompts ---------------------------------------------------------------------------
def prompt_fingerprint() -> str:
    """A hash of every prompt text and tool schema the judge sends. A test ties it to JUDGE_PROMPT_VERSION, so
    a prompt that changes without a new version fails the tests (labels made under two different prompts
    must never share a version)."""
    _, _, pick_tool, _ = build_pick(
        instructions="", context_lines=[], expected="", versions={"a": "1", "b": "2"}
    )
    parts = [_ROLE, _PICK_TASK, _LABEL_TASK, _PATTERNS_TASK, _VERDICT_TASK, placeholder("K")]
    return llm.fingerprint(parts, [pick_tool, LABEL_TOOL, PATTERNS_TOOL, VERDICT_TOOL])
