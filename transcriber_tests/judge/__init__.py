"""The LLM judge: versioned prompts, tool schemas, and thin functions that call llm.call_tool.

The judge never changes a score. It adds a pick among matching versions, a label per differing line,
failure patterns and a written verdict. Prompt builders are pure; each `build_*` returns
(system, prompt, tool), where `system` is the fixed part (role, task, the assistant's instructions) that is
sent for prompt caching, and `prompt` carries the line-specific text.

Every judge function raises llm.JudgeNotConfigured without a key and llm.LLMError when the API fails or the
answer does not fit what was asked (an unknown candidate, label or line id).

Its modules:

    prompts.py    the prompt texts, the tool schemas, the labels, and JUDGE_PROMPT_VERSION
    build.py      lines into requests (build_pick, build_labels, build_patterns, build_verdict, placeholder),
                  answers into labels (LabelItem, Label), the run's token estimate and the prompt fingerprint
    calls.py      the judge's calls to the model through oncore.llm (pick_best_version, label_lines,
                  label_line, group_patterns, write_verdict) and what they return
    requests.py   a full-call run's lines as label requests (Context, label_requests), for its judge step and
                  its estimate
    rule_labels.py  the labels a rule gives before the judge is asked (the benchmark's entity matcher, through
                  benchmark.selectors)

It reads no table of its own (requests.py reads a run's calls' lines) and imports nothing of the app above the
models, so the writes (actions/) and the queue's work (work/) both ask it.
"""

from .build import (
    Label,
    LabelItem,
    TokenEstimate,
    build_labels,
    build_patterns,
    build_pick,
    build_verdict,
    estimate_run_tokens,
    placeholder,
    prompt_fingerprint,
    request_tokens,
)
from .calls import (
    LabelBatch,
    Pattern,
    Patterns,
    Pick,
    Verdict,
    group_patterns,
    label_line,
    label_lines,
    pick_best_version,
    write_verdict,
)
from .prompts import (
    CACHE_MIN_TOKENS,
    FIRST_RIGHT,
    JUDGE_PROMPT_VERSION,
    LABEL_TOOL,
    LABEL_TOOL_NAME,
    LABELS,
    LINES_PER_REQUEST,
    NEUTRAL_LABELS,
    OTHER_PATTERN,
    PATTERNS_TOOL,
    PATTERNS_TOOL_NAME,
    PICK_TOOL_NAME,
    SECOND_RIGHT,
    VERDICT_TOOL,
    VERDICT_TOOL_NAME,
)

__all__ = [
    "CACHE_MIN_TOKENS",
    "FIRST_RIGHT",
    "JUDGE_PROMPT_VERSION",
    "LABELS",
    "LABEL_TOOL",
    "LABEL_TOOL_NAME",
    "LINES_PER_REQUEST",
    "NEUTRAL_LABELS",
    "OTHER_PATTERN",
    "PATTERNS_TOOL",
    "PATTERNS_TOOL_NAME",
    "PICK_TOOL_NAME",
    "SECOND_RIGHT",
    "VERDICT_TOOL",
    "VERDICT_TOOL_NAME",
    "Label",
    "LabelBatch",
    "LabelItem",
    "Pattern",
    "Patterns",
    "Pick",
    "TokenEstimate",
    "Verdict",
    "build_labels",
    "build_patterns",
    "build_pick",
    "build_verdict",
    "estimate_run_tokens",
    "group_patterns",
    "label_line",
    "label_lines",
    "pick_best_version",
    "placeholder",
    "prompt_fingerprint",
    "request_tokens",
    "write_verdict",
]
