"""Code-switched runs: catalogue transcribers with and without a language hint, scores per clip, the judge
(local Messages API server), resuming, and Whisper tiny.en for real."""

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmark.codeswitch import judge as cs_judge
from benchmark.codeswitch import runs as cs_runs
from benchmark.codeswitch.importer import import_codeswitch
from benchmark.models import CsJudgement, CsQuestion, CsResult, CsRun
from tests.llm_server import forced_tool, prompt_text
from transcriber_tests.lib.scoring import normalize

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "codeswitch" / "fixture.jsonl"
HEARD = "Hola necesito ayuda porque my laptop keeps crashing y no puedo abrir el email del cliente"


def cs_responder(body: dict) -> dict:
    """Answers the code-switching judge's tools: semantic errors are 0 when the normalized texts agree, else
    one substitution; questions are fixed; an answer is right when the transcript holds "laptop"."""
    name = forced_tool(body)["name"]
    text = prompt_text(body)
    if name == "record_semantic_errors":
        ref, hyp = (re.search(f"<{t}>(.*)</{t}>", text, re.S)[1] for t in ("reference", "hypothesis"))
        same = normalize(ref) == normalize(hyp)
        errors = (
            []
            if same
            else [{"type": "S", "reference_words": ref.split()[0], "hypothesis_words": hyp.split()[0]}]
        )
        return {
            "reasoning": "Same meaning." if same else "The hypothesis changes what the caller asked.",
            "errors": errors,
            "substitutions": len(errors),
            "deletions": 0,
            "insertions": 0,
        }
    if name == "record_questions":
        return {"questions": [{"question": f"Question {k}?", "answer": "the laptop"} for k in range(3)]}
    if name == "record_answers":
        heard = "the laptop" if "laptop" in text else "not stated"
        return {"answers": [heard] * 3}
    if name == "record_grades":
        right = "<given>the laptop</given>" in text
        return {"grades": [{"correct": right, "reasoning": "Compared."}] * 3}
    raise AssertionError(name)


@pytest.fixture
def cs_dataset(db):
    return import_codeswitch(FIXTURE, name="cs-fixture").dataset


def _cmd(*args):
    out = io.StringIO()
    call_command("codeswitch_run", "--dataset", "cs-fixture", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_it_scores_every_clip_and_records_the_hint(cs_dataset, endpoint_transcriber, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    endpoint_transcriber("fixed", text=HEARD)

    out = _cmd("--transcriber", "endpoint-fixed", "--language-hint")

    run = CsRun.objects.get()
    assert run.language_hint and run.label == "endpoint-fixed (language hint)"
    assert (run.status, run.utterances_total, run.utterances_done) == ("done", 9, 9)
    assert "Judge not configured (set ANTHROPIC_API_KEY)" in out
    same = run.results.get(utterance__utterance_id="cs-es-01", utterance__condition="code_switched")
    assert (same.wer, same.per_language) == (0.0, {"es": [0, 11], "en": [0, 5]})
    other = run.results.get(utterance__utterance_id="cs-fr-01", utterance__condition="code_switched")
    assert other.wer > 0.5 and other.per_language["fr"][1] == 8
    assert other.location["embedded_words"] == 4 and other.location["matrix_errors"] > 0
    assert not CsJudgement.objects.exists()


def test_it_resumes_and_sends_only_the_remaining_clips(cs_dataset, endpoint_transcriber, endpoint):
    endpoint_transcriber("fixed", text=HEARD)

    _cmd("--transcriber", "endpoint-fixed", "--max-utterances", "4", "--no-judge")
    out = _cmd("--transcriber", "endpoint-fixed", "--no-judge")

    assert CsRun.objects.count() == 1 and len(endpoint.requests) == 9
    assert "done: 9 done, 0 failed, 0 left; 5 clip(s) sent this time." in out


def test_it_judges_semantic_wer_and_answers_with_questions_written_once(
    cs_dataset, endpoint_transcriber, llm_server
):
    llm_server.responder = cs_responder
    endpoint_transcriber("fixed", text=HEARD)
    endpoint_transcriber("other", text="no")
    _cmd("--transcriber", "endpoint-fixed")
    out = _cmd("--transcriber", "endpoint-other")

    assert "Judged run" in out and CsQuestion.objects.count() == 27  # 9 clips x 3, not once per system
    asked = [b for b in llm_server.bodies if forced_tool(b)["name"] == "record_questions"]
    assert len(asked) == 9
    good = CsResult.objects.get(
        run__system_name="endpoint-fixed",
        utterance__utterance_id="cs-es-01",
        utterance__condition="code_switched",
    )
    semantic = good.judgements.get(kind="semantic")
    assert (semantic.errors, semantic.total, semantic.rate) == (0, 16, 0.0)
    assert (
        semantic.prompt_version == cs_judge.SEMANTIC_PROMPT_VERSION and semantic.reasoning == "Same meaning."
    )
    assert good.judgements.get(kind="answers").rate == 0.0
    bad = CsResult.objects.get(
        run__system_name="endpoint-other",
        utterance__utterance_id="cs-es-01",
        utterance__condition="code_switched",
    )
    assert bad.judgements.get(kind="answers").rate == 1.0
    assert bad.judgements.get(kind="answers").detail["items"][0]["given"] == "not stated"

    before = len(llm_server.requests)
    cs_judge.judge_run(bad.run_id)
    assert len(llm_server.requests) == before  # judged once


@pytest.mark.slow
def test_it_transcribes_the_fixture_with_whisper_tiny(cs_dataset, whisper_tiny, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    run = cs_runs.create_run(cs_dataset, whisper_tiny, language_hint=False)
    outcome = cs_runs.execute_run(run.pk)

    assert (outcome.status, outcome.done, outcome.failed) == ("done", 9, 0)
    english = run.results.get(utterance__utterance_id="cs-fr-01", utterance__condition="monolingual_english")
    assert "tomorrow morning with the team" in english.text.lower() and english.wer < 0.5
    switched = run.results.get(utterance__utterance_id="cs-fr-01", utterance__condition="code_switched")
    assert switched.wer > english.wer


def test_it_runs_from_the_queue_and_hands_the_rest_to_a_new_task(
    cs_dataset, endpoint_transcriber, endpoint, django_capture_on_commit_callbacks, monkeypatch
):
    from django_q.models import OrmQ

    from benchmark import executor
    from benchmark.codeswitch import tasks

    with django_capture_on_commit_callbacks(execute=True):
        run = cs_runs.start_run(cs_dataset, endpoint_transcriber("fixed", text=HEARD), language_hint=False)
    assert OrmQ.objects.count() == 1
    monkeypatch.setattr(executor, "lease_seconds", lambda: 0)  # no time left after the first clip

    assert tasks.run_codeswitch(run.pk) == "stopped"
    assert len(endpoint.requests) == 1 and OrmQ.objects.count() == 2  # the rest is queued again

    monkeypatch.undo()
    assert tasks.run_codeswitch(run.pk) == "done"
    assert tasks.run_codeswitch(run.pk) == "done"  # safe to run twice: nothing is sent again
    assert len(endpoint.requests) == 9 and CsRun.objects.get(pk=run.pk).utterances_done == 9
