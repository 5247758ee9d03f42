"""The judge's calls to the model, each through oncore.llm: the pick among matching versions, the labels of
differing lines, the failure patterns and the written verdict. The judge never changes a score.

Every call raises llm.JudgeNotConfigured without a key and llm.LLMError when the API fails or the answer does
not fit what was asked (an unknown candidate, label or line id)."""

from dataclasses import dataclass

from oncore import llm
from oncore.llm import LLMError, ToolCall

from .build import (
    Label,
    LabelItem,
    _parse_labels,
    _text,
    build_labels,
    build_patterns,
    build_pick,
    build_verdict,
    first_sentence,
)
from .prompts import OTHER_PATTERN


@dataclass(frozen=True)
class Pick:
    candidate: str  # one of the names given to pick_best_version
    reasoning: str
    call: ToolCall


@dataclass(frozen=True)
class LabelBatch:
    """Labels by item key; errors by item key for lines left unlabelled (why); every request made."""

    labels: dict
    errors: dict
    calls: list


@dataclass(frozen=True)
class Pattern:
    name: str
    description: str
    line_ids: list  # the ids given to group_patterns, as given (not stringified)

    @property
    def count(self) -> int:
        return len(self.line_ids)


class Patterns(list):
    """The patterns, largest first, plus the call that found them (None when there was nothing to group)."""

    def __init__(self, patterns=(), call: ToolCall | None = None):
        super().__init__(patterns)
        self.call = call


@dataclass(frozen=True)
class Verdict:
    text: str
    call: ToolCall


# -- judge calls ------------------------------------------------------------------------------------------
def pick_best_version(
    *, instructions: str, context_lines, expected: str, versions: dict[str, str], seed=None
) -> Pick:
    """Among candidates that all matched a line but wrote it differently, the version that fits the
    business best, with its reasoning. Never changes a score. A pick naming no version offered is asked once
    more, then raises LLMError."""
    system, prompt, tool, letters = build_pick(
        instructions=instructions,
        context_lines=context_lines,
        expected=expected,
        versions=versions,
        seed=seed,
    )

    def parse(answer: dict) -> str:
        letter = answer.get("candidate")
        if letter not in letters:
            raise llm.InvalidAnswer(
                f"the judge picked {letter!r}, which is not one of the versions offered ({', '.join(letters)})"
            )
        return letters[letter]

    name, calls = llm.ask_tool(system=system, prompt=prompt, tool=tool, parse=parse, max_tokens=400)
    reasoning = first_sentence(_text(calls[-1].input, "reasoning"))  # one sentence, as the pick records
    return Pick(candidate=name, reasoning=reasoning, call=llm.combined(calls))


def label_lines(*, instructions: str, context_lines, items: list[LabelItem]) -> LabelBatch:
    """Label lines of one call in one request. A line whose answer is invalid (no label, an unknown label, no
    reasoning, or an answer that is no tool call) is asked once more, alone with the other invalid ones; a
    line still invalid is left unlabelled with the reason (LabelBatch.errors), and the others keep their
    labels. An API failure after the SDK's retries raises LLMError (retryable), as does a missing key
    (JudgeNotConfigured)."""
    labels, problems, calls = {}, {}, []
    pending, note = list(items), ""
    for _attempt in range(2):
        system, prompt, tool = build_labels(
            instructions=instructions, context_lines=context_lines, items=pending
        )
        try:
            call = llm.call_tool(
                system=system, prompt=prompt + note, tool=tool, max_tokens=300 + 250 * len(pending)
            )
        except LLMError as exc:
            if exc.retryable:
                raise
            problems = {item.key: exc.message for item in pending}
        else:
            calls.append(call)
            found, problems = _parse_labels(call.input, pending)
            labels.update(found)
        pending = [item for item in pending if item.key in problems]
        if not pending:
            break
        note = llm.retry_note("; ".join(problems[item.key] for item in pending), tool["name"])
    errors = {key: f"the judge's answer was invalid twice: {problem}" for key, problem in problems.items()}
    return LabelBatch(labels=labels, errors=errors, calls=calls)


def label_line(
    *, instructions: str, context_lines, live_text: str, candidate_text: str, live_first: bool = True
) -> Label:
    """One line on its own (the measuring harness, scripts): its Label, or LLMError when it stays invalid.
    `context_lines` write the line itself as placeholder("A")."""
    item = LabelItem("A", live_text, candidate_text, live_first)
    batch = label_lines(instructions=instructions, context_lines=context_lines, items=[item])
    if "A" in batch.errors:
        raise LLMError(batch.errors["A"], retryable=False)
    found = batch.labels["A"]
    return Label(found.label, found.reasoning, found.answer, llm.combined(batch.calls))


def group_patterns(*, lines: list[dict]) -> Patterns:
    """Group the lines the live transcript got right and the candidate got wrong into named failure
    patterns, largest first. Each line is a dict with line_id, live_text, candidate_text and optionally
    context (a string or (speaker, text) pairs). Lines the judge leaves out go into the "other" pattern."""
    if not lines:
        return Patterns()
    by_key = {str(line["line_id"]): line["line_id"] for line in lines}
    if len(by_key) != len(lines):
        raise ValueError("group_patterns needs distinct line ids")
    system, prompt, tool = build_patterns(lines=lines)
    call = llm.call_tool(system=system, prompt=prompt, tool=tool, max_tokens=4096)
    raw = call.input.get("patterns")
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise LLMError("the judge's patterns are not a list of patterns", retryable=False)
    grouped: dict[str, Pattern] = {}
    placed: set[str] = set()
    for item in raw:
        keys = [str(key) for key in item.get("line_ids") or []]
        unknown = [key for key in keys if key not in by_key]
        if unknown:
            raise LLMError(
                f"the judge's patterns name lines that were not given: {', '.join(unknown)}", retryable=False
            )
        keys = [key for key in dict.fromkeys(keys) if key not in placed]
        name = _text(item, "name").lower() or OTHER_PATTERN
        if not keys:
            continue
        placed.update(keys)
        ids = [by_key[key] for key in keys]
        if name in grouped:
            previous = grouped[name]
            grouped[name] = Pattern(name, previous.description, previous.line_ids + ids)
        else:
            grouped[name] = Pattern(name, _text(item, "description"), ids)
    left = [line_id for key, line_id in by_key.items() if key not in placed]
    if left:
        previous = grouped.get(OTHER_PATTERN)
        description = previous.description if previous else "Lines the judge did not place in a pattern."
        grouped[OTHER_PATTERN] = Pattern(
            OTHER_PATTERN, description, (previous.line_ids if previous else []) + left
        )
    ordered = sorted(grouped.values(), key=lambda pattern: (pattern.name == OTHER_PATTERN, -pattern.count))
    return Patterns(ordered, call)


def write_verdict(*, fixes: int, breaks: int, patterns, examples: list[dict]) -> Verdict:
    """A short written verdict: what the candidate would fix, what it would break. `patterns` are Pattern
    objects or dicts (name, description, count or line_ids); `examples` are dicts with live_text,
    candidate_text and optionally label."""
    system, prompt, tool = build_verdict(fixes=fixes, breaks=breaks, patterns=patterns, examples=examples)
    call = llm.call_tool(system=system, prompt=prompt, tool=tool, max_tokens=600)
    text = _text(call.input, "verdict")
    if not text:
        raise LLMError("the judge wrote an empty verdict", retryable=False)
    return Verdict(text=text, call=call)
