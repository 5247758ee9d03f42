"""Measure the full-call run's judge against the hand-labelled set (fixtures/judge/labelled_lines.json).

Each line is labelled twice, once with the live transcript shown as transcript 1 and once as transcript 2, with
the same prompts, context and tools a run sends (judge.label_line). The report gives, against the careful
person's labels: accuracy, Cohen's kappa and the confusion matrix (first order), order-swap consistency (the
share of lines whose label, mapped back, is the same in both orders), lines the judge could not label, and the
tokens and cost spent. It also says how the rule labeller (rule_labels.py) does on the same lines.

    .venv/bin/python scripts/measure_judge.py                  # the test half, against the real model
    .venv/bin/python scripts/measure_judge.py --split tune     # tune on this half, report on the other
    .venv/bin/python scripts/measure_judge.py --fake           # the harness alone, against the local fake API

A real model is used only when ANTHROPIC_API_KEY is set (ANTHROPIC_MODEL picks the model); without a key and
without --fake nothing is measured and nothing is invented. --fake starts the tests' fake Messages API on
127.0.0.1 (tests/llm_server.py), whose default answer is same_meaning for every line: its figures check the
harness, they say nothing about a model.
"""

import argparse
import json
import os
import sys
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SET = ROOT / "fixtures" / "judge" / "labelled_lines.json"


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oncore.settings")
    os.environ.setdefault("SECRET_KEY", "measure-judge-only-no-database-is-used")
    import django

    django.setup()


def load(path: Path, split: str) -> list[dict]:
    items = json.loads(path.read_text())["items"]
    return [item for item in items if split == "all" or item["split"] == split]


def context_of(item: dict, judge) -> list[tuple[str, str]]:
    return [
        *map(tuple, item["context_before"]),
        ("caller", judge.placeholder("A")),
        *map(tuple, item["context_after"]),
    ]


def measure(items: list[dict], *, swap: bool = True, out=None) -> dict:
    """Label every item (in both orders unless swap is off) and print the report. Returns the figures."""
    out = out or sys.stdout
    from oncore import llm
    from transcriber_tests import judge
    from transcriber_tests.judge import rule_labels
    from transcriber_tests.lib.agreement import agreement, confusion_table

    first, pairs_swapped, failed = [], [], []
    tokens_in = tokens_out = 0
    cost = Decimal(0)
    model = ""
    for item in items:
        labels = []
        for live_first in (True, False) if swap else (True,):
            try:
                label = judge.label_line(
                    instructions=item["instructions"],
                    context_lines=context_of(item, judge),
                    live_text=item["live"],
                    candidate_text=item["candidate"],
                    live_first=live_first,
                )
            except llm.LLMError as exc:
                if exc.retryable:
                    raise
                failed.append((item["id"], live_first, exc.message))
                labels.append(None)
                continue
            call = label.call
            tokens_in += call.input_tokens + call.cache_read_tokens + call.cache_write_tokens
            tokens_out += call.output_tokens
            cost += call.cost
            model = call.model
            labels.append(label.label)
        if labels[0] is not None:
            first.append((item["label"], labels[0]))
        if swap and None not in labels:
            pairs_swapped.append((labels[0], labels[1]))

    result = agreement(first)
    consistency = agreement(pairs_swapped) if swap else None
    rule = [
        (item["label"], found.label)
        for item in items
        if (found := rule_labels.rule_label(item["live"], item["candidate"]))
    ]
    rule_result = agreement(rule)

    def pct(value):
        return "n/a" if value is None else f"{100 * value:.1f}%"

    def num(value):
        return "n/a" if value is None else f"{value:.3f}"

    print(f"judge prompts {judge.JUDGE_PROMPT_VERSION}, model {model or llm.model()}", file=out)
    print(f"lines: {len(items)}; labelled {result.n} (first order); could not label: {len(failed)}", file=out)
    print(f"accuracy against the person: {pct(result.accuracy)} ({result.agree} of {result.n})", file=out)
    print(f"Cohen's kappa: {num(result.kappa)}", file=out)
    if swap:
        print(
            f"order-swap consistency: {pct(consistency.accuracy)} ({consistency.agree} of {consistency.n} lines "
            "got the same label with the transcripts swapped)",
            file=out,
        )
    print("confusion matrix (rows: the person's label, columns: the judge's):", file=out)
    table = confusion_table(result, judge.LABELS)
    widths = [max(len(str(row[i])) for row in table) for i in range(len(table[0]))]
    for row in table:
        print(
            "  " + "  ".join(str(cell).rjust(width) for cell, width in zip(row, widths, strict=True)),
            file=out,
        )
    print(f"tokens: {tokens_in} in, {tokens_out} out; cost ${cost:.4f}", file=out)
    print(
        f"rule labeller on these lines: {len(rule)} labelled by rule, agreeing with the person on "
        f"{rule_result.agree}",
        file=out,
    )
    for item_id, live_first, message in failed:
        print(
            f"  could not label {item_id} (live shown {'first' if live_first else 'second'}): {message}",
            file=out,
        )
    return {
        "n": result.n,
        "accuracy": result.accuracy,
        "kappa": result.kappa,
        "consistency": consistency.accuracy if consistency else None,
        "failed": len(failed),
        "confusion": result.confusion,
        "rule_labelled": len(rule),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
    }


def main(argv=None, out=None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", type=Path, default=SET, help="the hand-labelled set (JSON)")
    parser.add_argument("--split", choices=["test", "tune", "all"], default="test")
    parser.add_argument("--limit", type=int, default=0, help="only the first N lines (0: all)")
    parser.add_argument("--no-swap", action="store_true", help="label each line once (no order-swap check)")
    parser.add_argument("--fake", action="store_true", help="run the harness against the local fake API")
    args = parser.parse_args(argv)

    items = load(args.set, args.split)
    if args.limit:
        items = items[: args.limit]
    if not args.fake and not os.environ.get("ANTHROPIC_API_KEY", "").strip():
        print(
            "ANTHROPIC_API_KEY is not set: nothing was measured (use --fake to check the harness).", file=out
        )
        return 2
    _setup_django()
    if not args.fake:
        measure(items, swap=not args.no_swap, out=out)
        return 0
    from tests.llm_server import TEST_KEY, FakeAnthropic

    saved = {name: os.environ.get(name) for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    with FakeAnthropic() as server:
        os.environ.update(ANTHROPIC_API_KEY=TEST_KEY, ANTHROPIC_BASE_URL=server.base_url)
        print("against the local fake Messages API (its answers are scripted, not a model's)", file=out)
        try:
            measure(items, swap=not args.no_swap, out=out)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return 0


if __name__ == "__main__":
    sys.exit(main())
