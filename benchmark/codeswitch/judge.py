"""The LLM judge of code-switched transcripts: semantic WER and answer error rate (see
research/code-switching-metrics.md). Every call goes through oncore.llm.call_tool; without
ANTHROPIC_API_KEY nothing is judged and nothing is invented (JudgeNotConfigured).

Semantic WER (prompt SEMANTIC_PROMPT_VERSION): the judge normalizes both texts itself, aligns them and counts
only the differences that would make an agent respond differently; it returns substitutions, deletions,
insertions and the reference word count through a tool, with its reasoning. The WER is computed here:
(S + D + I) / reference words. Edge cases are settled without a call: an empty hypothesis is every reference
word deleted (WER 1); an empty reference is excluded (the import refuses one anyway).

Answer error rate (QUESTIONS_PROMPT_VERSION, ANSWERS_PROMPT_VERSION): three comprehension questions about the
utterance's most important details, with answers from the reference, are written once per clip (stored as
CsQuestion) and reused for every system. For each hypothesis one call answers them from the transcript alone,
another grades each answer against the reference answer. AER = wrong answers / questions.

Results are CsJudgement rows, one per result and kind, written with update_or_create: judging twice
changes nothing, and a result judged under the current prompt version is not sent again.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Sum

from oncore import llm
from oncore.llm import JudgeNotConfigured, LLMError, judge_configured

from ..models import CsJudgement, CsQuestion, CsResult, CsRun

SEMANTIC_PROMPT_VERSION = "cs-swer-1"
QUESTIONS_PROMPT_VERSION = "cs-aer-questions-1"
ANSWERS_PROMPT_VERSION = "cs-aer-answers-1"
QUESTIONS_PER_UTTERANCE = 3
NOT_CONFIGURED = "judge not configured"

__all__ = ["JudgeNotConfigured", "judge_configured", "judge_run", "semantic_errors"]

SEMANTIC_SYSTEM = """You judge speech-to-text transcripts for a voice agent in HR and IT-support calls. \
Speakers may switch languages mid-sentence (code-switching); a correct transcript keeps each word in the \
language it was spoken in. A translation of a span into another language is an error.

Compare the REFERENCE (what was said) with the HYPOTHESIS (what the system wrote):
1. Normalize both yourself: ignore case, punctuation, contractions, digits versus number words, fillers \
present on one side only, abbreviations, UK/US spelling, hyphens, plurals, possessives and minor grammar, \
unless the difference changes the meaning.
2. Align them word by word.
3. For every remaining difference ask: would an agent reading this respond differently? Count it only if \
yes: wrong names, numbers, negations, deletions that change the intent, hallucinated or translated words.

Call record_semantic_errors with your reasoning, the number of meaning-changing substitutions, deletions and \
insertions, and the number of words in the normalized reference."""

QUESTIONS_SYSTEM = """You write reading-comprehension questions about one utterance from a support call \
(it may mix two languages). Write exactly three questions about its most important details: case or ticket \
numbers, names, dates, what is asked for and why. Each answer must be stated in the utterance and be short. \
Write the questions in English. Call record_questions."""

ANSWERS_SYSTEM = """You answer questions about a support call using ONLY the transcript given (it may mix \
two languages and contain recognition errors). Do not guess: when the transcript does not say, answer \
"not stated". Answer in English, briefly, in the order asked. Call record_answers."""

GRADES_SYSTEM = """You grade answers to questions about a support call. For each question you get the \
correct answer (from what was really said) and a given answer (from a transcript). The given answer is \
correct when it means the same as the correct answer; "not stated", a different detail or a vaguer answer \
that loses the detail is wrong. Call record_grades with one grade per question, in order."""

_COUNT = {"type": "integer", "minimum": 0}
SEMANTIC_TOOL = {
    "name": "record_semantic_errors",
    "description": "Record the meaning-changing errors of the hypothesis against the reference.",
    "input_schema": {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "description": "Each difference found and why it counts or not."},
            "substitutions": _COUNT,
            "deletions": _COUNT,
            "insertions": _COUNT,
            "reference_words": {**_COUNT, "description": "Words in the normalized reference."},
        },
        "required": ["reasoning", "substitutions", "deletions", "insertions", "reference_words"],
    },
}
QUESTIONS_TOOL = {
    "name": "record_questions",
    "description": "Record three questions about the utterance with their answers.",
    "input_schema": {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "minItems": QUESTIONS_PER_UTTERANCE,
                "maxItems": QUESTIONS_PER_UTTERANCE,
                "items": {
                    "type": "object",
                    "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
                    "required": ["question", "answer"],
                },
            }
        },
        "required": ["questions"],
    },
}
ANSWERS_TOOL = {
    "name": "record_answers",
    "description": "Record one answer per question, in order.",
    "input_schema": {
        "type": "object",
        "properties": {"answers": {"type": "array", "items": {"type": "string"}}},
        "required": ["answers"],
    },
}
GRADES_TOOL = {
    "name": "record_grades",
    "description": "Record whether each given answer is correct, in order.",
    "input_schema": {
        "type": "object",
        "properties": {
            "grades": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"correct": {"type": "boolean"}, "reasoning": {"type": "string"}},
                    "required": ["correct", "reasoning"],
                },
            }
        },
        "required": ["grades"],
    },
}


@dataclass(frozen=True)
class Judged:
    """What one judge call (or a settled edge case) gives: errors out of total, detail, reasoning."""

    errors: int
    total: int
    detail: dict
    reasoning: str
    cost: Decimal
    model: str


def _count(answer: dict, key: str) -> int:
    value = answer.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LLMError(f"the judge gave {key}={value!r}, not a whole number >= 0", retryable=False)
    return value


def semantic_errors(reference: str, hypothesis: str) -> Judged:
    """Meaning-changing S, D, I of the hypothesis; raises JudgeNotConfigured or LLMError."""
    words = len(reference.split())
    if not hypothesis.strip():
        detail = {"substitutions": 0, "deletions": words, "insertions": 0}
        return Judged(
            words, words, detail, "Empty hypothesis: every reference word is deleted.", Decimal(0), ""
        )
    call = llm.call_tool(
        system=SEMANTIC_SYSTEM,
        prompt=f"<reference>{reference}</reference>\n<hypothesis>{hypothesis}</hypothesis>",
        tool=SEMANTIC_TOOL,
        max_tokens=1500,
    )
    s, d, i = (_count(call.input, k) for k in ("substitutions", "deletions", "insertions"))
    total = _count(call.input, "reference_words")
    if total == 0:
        raise LLMError("the judge counted no reference words", retryable=False)
    detail = {"substitutions": s, "deletions": d, "insertions": i}
    return Judged(s + d + i, total, detail, str(call.input.get("reasoning", "")), call.cost, call.model)


def write_questions(reference: str) -> tuple[list[tuple[str, str]], Decimal, str]:
    call = llm.call_tool(
        system=QUESTIONS_SYSTEM, prompt=f"<utterance>{reference}</utterance>", tool=QUESTIONS_TOOL
    )
    items = call.input.get("questions")
    if not isinstance(items, list) or len(items) != QUESTIONS_PER_UTTERANCE:
        raise LLMError(f"the judge did not write {QUESTIONS_PER_UTTERANCE} questions", retryable=False)
    pairs = [(str(q.get("question", "")).strip(), str(q.get("answer", "")).strip()) for q in items]
    if not all(q and a for q, a in pairs):
        raise LLMError("the judge wrote a question without a question or an answer", retryable=False)
    return pairs, call.cost, call.model


def answer_errors(questions: list[tuple[str, str]], hypothesis: str) -> Judged:
    """Answer the questions from the hypothesis alone, grade them against the reference answers."""
    n = len(questions)
    listed = "\n".join(f"{k + 1}. {q}" for k, (q, _) in enumerate(questions))
    call = llm.call_tool(
        system=ANSWERS_SYSTEM,
        prompt=f"<transcript>{hypothesis}</transcript>\n<questions>\n{listed}\n</questions>",
        tool=ANSWERS_TOOL,
    )
    answers = call.input.get("answers")
    if not isinstance(answers, list) or len(answers) != n:
        raise LLMError(f"the judge gave {len(answers or [])} answers to {n} questions", retryable=False)
    graded = "\n".join(
        f'<item n="{k + 1}"><question>{q}</question><correct>{a}</correct><given>{answers[k]}</given></item>'
        for k, (q, a) in enumerate(questions)
    )
    grade_call = llm.call_tool(system=GRADES_SYSTEM, prompt=graded, tool=GRADES_TOOL)
    grades = grade_call.input.get("grades")
    if not isinstance(grades, list) or len(grades) != n or not all(isinstance(g, dict) for g in grades):
        raise LLMError(f"the judge did not grade all {n} answers", retryable=False)
    items = [
        {"question": q, "expected": a, "given": str(answers[k]), "correct": grades[k].get("correct") is True}
        for k, (q, a) in enumerate(questions)
    ]
    reasoning = "\n".join(f"{k + 1}. {g.get('reasoning', '')}" for k, g in enumerate(grades))
    wrong = sum(not item["correct"] for item in items)
    return Judged(wrong, n, {"items": items}, reasoning, call.cost + grade_call.cost, grade_call.model)


# ---------------------------------------------------------------- judging a run


@dataclass(frozen=True)
class JudgeOutcome:
    judged: int
    failed: int
    questions_written: int
    cost: Decimal


def _questions_by_utterance(utterance_ids) -> dict[int, list[tuple[str, str]]]:
    found: dict[int, list] = {}
    for q in CsQuestion.objects.filter(
        utterance_id__in=utterance_ids, prompt_version=QUESTIONS_PROMPT_VERSION
    ):
        found.setdefault(q.utterance_id, []).append((q.question, q.answer))
    return {k: v for k, v in found.items() if len(v) == QUESTIONS_PER_UTTERANCE}


def _ensure_questions(results, pool) -> tuple[dict, int, Decimal, list[str]]:
    """The stored questions of each clip; clips without them get them written (once, whatever the system)."""
    utterances = {r.utterance_id: r.utterance for r in results}
    have = _questions_by_utterance(list(utterances))
    missing = [u for pk, u in utterances.items() if pk not in have]
    written, cost, errors = 0, Decimal(0), []
    futures = {pool.submit(write_questions, u.reference): u for u in missing}
    for future, u in futures.items():
        try:
            pairs, call_cost, model = future.result()
        except LLMError as exc:
            errors.append(f"{u.utterance_id}: {exc.message}")
            continue
        for index, (question, answer) in enumerate(pairs):
            CsQuestion.objects.update_or_create(
                utterance=u,
                index=index,
                defaults={
                    "question": question,
                    "answer": answer,
                    "prompt_version": QUESTIONS_PROMPT_VERSION,
                    "model": model,
                    "cost": call_cost if index == 0 else Decimal(0),
                },
            )
        have[u.pk] = pairs
        written += 1
        cost += call_cost
    return have, written, cost, errors


def _save(result, kind: str, version: str, outcome: Judged | None, error: str = "") -> None:
    defaults = {"prompt_version": version, "error": error}
    if outcome is not None:
        defaults.update(
            errors=outcome.errors,
            total=outcome.total,
            detail=outcome.detail,
            reasoning=outcome.reasoning,
            model=outcome.model,
            cost=outcome.cost,
        )
    CsJudgement.objects.update_or_create(result=result, kind=kind, defaults=defaults)


def judge_run(run_id: int, *, concurrency: int = 2, progress=None) -> JudgeOutcome:
    """Judge every done result of the run that has no judgement under the current prompt versions.
    Raises JudgeNotConfigured without ANTHROPIC_API_KEY. A failed call is stored with its error (shown on
    the report, left out of the figures) and tried again on the next judge_run."""
    if not judge_configured():
        raise JudgeNotConfigured()
    current = {CsJudgement.SEMANTIC: SEMANTIC_PROMPT_VERSION, CsJudgement.ANSWERS: ANSWERS_PROMPT_VERSION}
    results = list(CsResult.objects.filter(run_id=run_id, status=CsResult.DONE).select_related("utterance"))
    done = {
        (j.result_id, j.kind)
        for j in CsJudgement.objects.filter(result__run_id=run_id, error="")
        if j.prompt_version == current[j.kind]
    }
    todo = [(r, kind) for r in results for kind in current if (r.pk, kind) not in done]
    judged = failed = 0
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix=f"cs-judge-{run_id}") as pool:
        needs_questions = [r for r, kind in todo if kind == CsJudgement.ANSWERS]
        questions, written, cost, question_errors = _ensure_questions(needs_questions, pool)
        futures = {}
        for r, kind in todo:
            if kind == CsJudgement.SEMANTIC:
                futures[pool.submit(semantic_errors, r.utterance.reference, r.text)] = (r, kind)
            elif r.utterance_id in questions:
                futures[pool.submit(answer_errors, questions[r.utterance_id], r.text)] = (r, kind)
            else:
                _save(r, kind, current[kind], None, "No questions: " + "; ".join(question_errors))
                failed += 1
        for future, (r, kind) in futures.items():
            try:
                outcome = future.result()
            except LLMError as exc:
                _save(r, kind, current[kind], None, exc.message)
                failed += 1
            else:
                _save(r, kind, current[kind], outcome)
                judged += 1
                cost += outcome.cost
            if progress:
                progress(judged + failed, len(todo))
    total_cost = CsJudgement.objects.filter(result__run_id=run_id).aggregate(s=Sum("cost"))["s"] or 0
    questions_cost = (
        CsQuestion.objects.filter(utterance__results__run_id=run_id).aggregate(s=Sum("cost"))["s"] or 0
    )
    CsRun.objects.filter(pk=run_id).update(judge_cost=total_cost + questions_cost)
    return JudgeOutcome(judged, failed, written, cost)
