"""The judge's measuring harness (scripts/measure_judge.py) and its hand-labelled set, run against the local
fake Messages API: the harness's figures are checked with scripted judges whose right answers are known."""

import importlib.util
import io
from collections import Counter
from pathlib import Path

import pytest

from tests.transcriber_tests.support import neutral_answer, shown_lines
from transcriber_tests import judge
from transcriber_tests.lib import scoring

ROOT = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("measure_judge", ROOT / "scripts" / "measure_judge.py")
measure_judge = importlib.util.module_from_spec(spec)
spec.loader.exec_module(measure_judge)

ITEMS = measure_judge.load(measure_judge.SET, "all")


def test_it_holds_over_a_hundred_hand_labelled_lines_in_tune_and_test_halves():
    assert len(ITEMS) >= 100 and len({item["id"] for item in ITEMS}) == len(ITEMS)
    for item in ITEMS:
        assert item["label"] in judge.LABELS and item["reason"] and item["said"] and item["instructions"]
        assert scoring.normalize(item["live"]) != scoring.normalize(item["candidate"]), item["id"]
    for label in judge.LABELS:
        halves = Counter(item["split"] for item in ITEMS if item["label"] == label)
        assert abs(halves["tune"] - halves["test"]) <= 1 and halves["test"] >= 9, label


def oracle(items, *, wrong_when_live_first=()):
    """A judge that answers each line's hand label, except on the ids given when the live text is shown first."""
    by_texts = {}
    for item in items:
        by_texts[(item["live"], item["candidate"])] = (item, True)
        by_texts[(item["candidate"], item["live"])] = (item, False)

    def answer(body):
        labels = []
        for key, first, second in shown_lines(body):
            item, live_first = by_texts[(first, second)]
            label = item["label"]
            if live_first and item["id"] in wrong_when_live_first:
                label = "both_wrong" if label != "both_wrong" else "same_meaning"
            neutral = neutral_answer(label, candidate_first=not live_first)
            labels.append({"line": key, "reasoning": item["reason"], "label": neutral})
        return {"labels": labels}

    return answer


def test_it_reports_full_agreement_for_a_judge_that_answers_like_the_person(llm_server):
    items = measure_judge.load(measure_judge.SET, "test")[:24]
    llm_server.responder = oracle(items)
    out = io.StringIO()
    figures = measure_judge.measure(items, out=out)
    assert (figures["accuracy"], figures["kappa"], figures["consistency"]) == (1.0, 1.0, 1.0)
    assert figures["n"] == len(items) and figures["failed"] == 0 and figures["tokens_in"] > 0
    assert len(llm_server.requests) == 2 * len(items)  # each line in both orders
    report = out.getvalue()
    assert "accuracy against the person: 100.0%" in report and "Cohen's kappa: 1.000" in report
    assert "order-swap consistency: 100.0%" in report and "judge prompts judge-3" in report


def test_it_measures_disagreement_and_order_swap_inconsistency(llm_server):
    items = measure_judge.load(measure_judge.SET, "tune")[:12]
    flaky = {item["id"] for item in items[:3]}
    llm_server.responder = oracle(items, wrong_when_live_first=flaky)
    figures = measure_judge.measure(items, out=io.StringIO())
    assert figures["accuracy"] == pytest.approx(9 / 12) and figures["consistency"] == pytest.approx(9 / 12)
    assert 0 < figures["kappa"] < 1


def test_it_runs_from_the_command_line_against_the_fake_api_and_refuses_without_a_key(monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert measure_judge.main(["--limit", "3"]) == 2
    assert "nothing was measured" in capsys.readouterr().out
    out = io.StringIO()
    assert measure_judge.main(["--fake", "--limit", "4", "--split", "all"], out=out) == 0
    report = out.getvalue()
    assert "against the local fake Messages API" in report and "lines: 4; labelled 4" in report
    assert "confusion matrix" in report and "order-swap consistency: 100.0%" in report
