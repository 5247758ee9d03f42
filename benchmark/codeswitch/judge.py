"""The LLM judge of code-switched transcripts: semantic WER and answer error rate (see
research/code-switching-metrics.md). Every call goes through oncore.llm.call_tool; without
ANTHROPIC_API_KEY nothing is judged and nothing is invented (JudgeNotConfigured).

Semantic WER (prompt SEMANTIC_PROMPT_VERSION): the judge normalizes both texts itself, aligns them and counts
only the differences that would make an agent respond differently. Its tool returns, reasoning first, the list
of those errors (type S, D or I, the reference words, the hypothesis words, quoted from the texts) and its S, D
and I counts; the code checks the counts against the list and the quoted words against the texts, and counts
the reference words itself (the normalized reference). An answer that does not add up is asked once more, then
stored as an error. The WER is computed here: (S + D + I) / reference words. Edge cases are settled without a
call: an empty hypothesis is every reference word deleted (WER 1); an empty reference is excluded (the import
refuses one anyway).

Answer error rate (QUESTIONS_PROMPT_VERSION, ANSWERS_PROMPT_VERSION): three comprehension questions about the
utterance's most important details, with answers from the reference, are written once per clip (stored as
CsQuestion) and reused for every system; a question that contains its own answer is written again. For each
hypothesis one call answers them from the transcript alone, another grades each answer against the reference
answer. Names, numbers and ids must match exactly to count as answered: an answer the grader accepts is still
wrong when a name, number or id of the reference answer is missing from it (entity matcher: "48213" and "four
eight two one three" agree, "Lopes" and "Lopez" do not). AER = wrong answers / questions.

Results are CsJudgement rows, one per result and kind, written with update_or_create: judging twice
changes nothing, and a result judged under the current prompt version is not sent again.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Sum

from benchmark.entity.matcher import entity_found
from oncore import llm
from oncore.llm import InvalidAnswer, JudgeNotConfigured, LLMError, judge_configured
from transcriber_tests.lib.scoring import normalize

from ..models import CsJudgement, CsQuestion, CsResult, CsRun

SEMANTIC_PROMPT_VERSION = "cs-swer-2"
QUESTIONS_PROMPT_VERSION = "cs-aer-questions-2"
ANSWERS_PROMPT_VERSION = "cs-aer-answers-2"
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

Call record_semantic_errors: first your reasoning, then one entry per meaning-changing error, quoting the \
words exactly as they are written in the texts: a substitution (S) gives the reference words and the \
hypothesis words written in their place, a deletion (D) the reference words missing, an insertion (I) the \
hypothesis words added. Then your counts: a substitution or a deletion counts once per reference word, an \
insertion once per hypothesis word. No errors: an empty list and zero counts."""

QUESTIONS_SYSTEM = """You write reading-comprehension questions about one utterance from a support call \
(it may mix two languages). Write exactly three questions about its most important details: case or ticket \
numbers, names, dates, what is asked for and why. Each answer must be stated in the utterance and be short. \
Write the questions in English. A question must not contain its own answer: ask "What is the ticket \
number?", not "Is the ticket number 48213?". Call record_questions."""

ANSWERS_SYSTEM = """You answer questions about a support call using ONLY the transcript given (it may mix \
two languages and contain recognition errors). Do not guess: when the transcript does not say, answer \
"not stated". Answer in English, briefly, in the order asked. Call record_answers."""

GRADES_SYSTEM = """You grade answers to questions about a support call. For each question you get the \
correct answer (from what was really said) and a given answer (from a transcript). The given answer is \
correct when it means the same as the correct answer; "not stated", a different detail or a vaguer answer \
that loses the detail is wrong. Call record_grades with one grade per question, in order."""

_COUNT = {"type": "integer", "minimum": 0}
ERROR_TYPES = {"S": "substitutions", "D": "deletions", "I": "insertions"}
SEMANTIC_TOOL = {
    "name": "record_semantic_errors",
    "description": "Record the meaning-changing errors of the hypothesis against the reference, reasoning first.",
    "input_schema": {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "description": "Each difference found and why it counts or not."},
            "errors": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string", "enum": list(ERROR_TYPES)},
                        "reference_words": {"type": "string", "description": "As written in the reference."},
                        "hypothesis_words": {
                            "type": "string",
                            "description": "As written in the hypothesis.",
                        },
                    },
                    "required": ["type", "reference_words", "hypothesis_words"],
                },
            },
            "substitutions": _COUNT,
            "deletions": _COUNT,
            "insertions": _COUNT,
        },
        "required": ["reasoning", "errors", "substitutions", "deletions", "insertions"],
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
                    "properties": {"reasoning": {"type": "string"}, "correct": {"type": "boolean"}},
                    "required": ["reasoning", "correct"],
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
        raise InvalidAnswer(f"the judge gave {key}={value!r}, not a whole number >= 0")
    return value


def _quoted(words: str, text_words: list[str], side: str, n: int) -> list[str]:
    found = normalize(words).split()
    missing = [w for w in found if w not in text_words]
    if missing:
        raise InvalidAnswer(f"error {n} quotes {' '.join(missing)!r}, which is not in the {side}")
    return found


def checked_errors(answer: dict, reference: str, hypothesis: str) -> dict:
    """S, D and I from the judge's list of errors, each checked: the right words for its type, quoted from the
    texts, and the counts the judge gave equal to the list's. Raises InvalidAnswer otherwise."""
    reference_words, hypothesis_words = normalize(reference).split(), normalize(hypothesis).split()
    errors = answer.get("errors")
    if not isinstance(errors, list) or not all(isinstance(e, dict) for e in errors):
        raise InvalidAnswer("the judge gave no list of errors")
    counted = dict.fromkeys(ERROR_TYPES.values(), 0)
    for n, error in enumerate(errors, 1):
        kind = error.get("type")
        if kind not in ERROR_TYPES:
            raise InvalidAnswer(f"error {n} has the type {kind!r}, not S, D or I")
        ref = _quoted(str(error.get("reference_words") or ""), reference_words, "reference", n)
        hyp = _quoted(str(error.get("hypothesis_words") or ""), hypothesis_words, "hypothesis", n)
        if (
            (kind == "S" and not (ref and hyp))
            or (kind == "D" and (not ref or hyp))
            or (kind == "I" and (ref or not hyp))
        ):
            raise InvalidAnswer(f"error {n} ({kind}) does not give the words its type needs")
        counted[ERROR_TYPES[kind]] += len(hyp) if kind == "I" else len(ref)
    given = {key: _count(answer, key) for key in ERROR_TYPES.values()}
    if given != counted:
        raise InvalidAnswer(f"the counts {given} do not match the errors listed, which make {counted}")
    return counted


def semantic_errors(reference: str, hypothesis: str) -> Judged:
    """Meaning-changing S, D, I of the hypothesis; raises JudgeNotConfigured or LLMError."""
    words = len(normalize(reference).split())
    if not hypothesis.strip():
        detail = {"substitutions": 0, "deletions": words, "insertions": 0, "errors": []}
        return Judged(
            words, words, detail, "Empty hypothesis: every reference word is deleted.", Decimal(0), ""
        )
    if words == 0:
        raise LLMError("the reference has no words to judge against", retryable=False)

    def parse(answer: dict):
        return checked_errors(answer, reference, hypothesis), answer["errors"]

    (counts, errors), calls = llm.ask_tool(
        system=SEMANTIC_SYSTEM,
        prompt=f"<reference>{reference}</reference>\n<hypothesis>{hypothesis}</hypothesis>",
        tool=SEMANTIC_TOOL,
        parse=parse,
        max_tokens=1500,
    )
    call = llm.combined(calls)
    detail = {**counts, "errors": errors}
    return Judged(
        sum(counts.values()), words, detail, str(call.input.get("reasoning", "")), call.cost, call.model
    )


def contains_its_answer(question: str, answer: str) -> bool:
    """Whether a question gives its own answer away: every word of the answer is in the question."""
    answer_words = set(normalize(answer).split()) - {"the", "a", "an", "to", "of", "on", "in", "at", "for"}
    return bool(answer_words) and answer_words <= set(normalize(question).split())


def write_questions(reference: str) -> tuple[list[tuple[str, str]], Decimal, str]:
    def parse(answer: dict) -> list[tuple[str, str]]:
        items = answer.get("questions")
        if not isinstance(items, list) or len(items) != QUESTIONS_PER_UTTERANCE:
            raise InvalidAnswer(f"the judge did not write {QUESTIONS_PER_UTTERANCE} questions")
        pairs = [
            (str(q.get("question", "")).strip(), str(q.get("answer", "")).strip())
            if isinstance(q, dict)
            else ("", "")
            for q in items
        ]
        if not all(q and a for q, a in pairs):
            raise InvalidAnswer("the judge wrote a question without a question or an answer")
        giving = [n + 1 for n, (q, a) in enumerate(pairs) if contains_its_answer(q, a)]
        if giving:
            raise InvalidAnswer(f"question {', '.join(map(str, giving))} contains its own answer")
        return pairs

    pairs, calls = llm.ask_tool(
        system=QUESTIONS_SYSTEM,
        prompt=f"<utterance>{reference}</utterance>",
        tool=QUESTIONS_TOOL,
        parse=parse,
    )
    call = llm.combined(calls)
    return pairs, call.cost, call.model


_COMMON_FIRST_WORDS = {
    "the",
    "a",
    "an",
    "his",
    "her",
    "their",
    "my",
    "yes",
    "no",
    "next",
    "last",
    "on",
    "in",
    "at",
}


def exact_details(answer: str) -> list[str]:
    """The names, numbers and ids of a reference answer, which a given answer must hold to count: words with a
    digit, and capitalized words (a capitalized first word only when it is not an ordinary opening word)."""
    details = []
    for n, raw in enumerate(answer.split()):
        word = raw.strip(".,;:!?\"'()")
        if not word:
            continue
        if any(c.isdigit() for c in word) or (
            word[0].isupper() and (n > 0 or word.lower() not in _COMMON_FIRST_WORDS)
        ):
            details.append(word)
    return details


def answer_errors(questions: list[tuple[str, str]], hypothesis: str) -> Judged:
    """Answer the questions from the hypothesis alone, grade them against the reference answers; an answer
    missing a name, number or id of the reference answer is wrong whatever the grade."""
    n = len(questions)
    listed = "\n".join(f"{k + 1}. {q}" for k, (q, _) in enumerate(questions))

    def parse_answers(answer: dict) -> list:
        answers = answer.get("answers")
        if not isinstance(answers, list) or len(answers) != n:
            raise InvalidAnswer(f"the judge gave {len(answers or [])} answers to {n} questions")
        return [str(a) for a in answers]

    answers, answer_calls = llm.ask_tool(
        system=ANSWERS_SYSTEM,
        prompt=f"<transcript>{hypothesis}</transcript>\n<questions>\n{listed}\n</questions>",
        tool=ANSWERS_TOOL,
        parse=parse_answers,
    )
    graded = "\n".join(
        f'<item n="{k + 1}"><question>{q}</question><correct>{a}</correct><given>{answers[k]}</given></item>'
        for k, (q, a) in enumerate(questions)
    )

    def parse_grades(answer: dict) -> list:
        grades = answer.get("grades")
        if not isinstance(grades, list) or len(grades) != n or not all(isinstance(g, dict) for g in grades):
            raise InvalidAnswer(f"the judge did not grade all {n} answers")
        return grades

    grades, grade_calls = llm.ask_tool(
        system=GRADES_SYSTEM, prompt=graded, tool=GRADES_TOOL, parse=parse_grades
    )
    items = []
    for k, (q, a) in enumerate(questions):
        missing = [d for d in exact_details(a) if not entity_found(d, answers[k])]
        item = {
            "question": q,
            "expected": a,
            "given": answers[k],
            "correct": grades[k].get("correct") is True,
        }
        if item["correct"] and missing:
            item.update(correct=False, not_exact=missing)
        items.append(item)
    reasoning = "\n".join(f"{k + 1}. {g.get('reasoning', '')}" for k, g in enumerate(grades))
    wrong = sum(not item["correct"] for item in items)
    call = llm.combined(answer_calls + grade_calls)
    return Judged(wrong, n, {"items": items}, reasoning, call.cost, call.model)


def prompt_fingerprint() -> str:
    """A hash of the code-switching judge's prompts and tool schemas (a test ties it to the prompt versions)."""
    texts = [SEMANTIC_SYSTEM, QUESTIONS_SYSTEM, ANSWERS_SYSTEM, GRADES_SYSTEM]
    return llm.fingerprint(texts, [SEMANTIC_TOOL, QUESTIONS_TOOL, ANSWERS_TOOL, GRADES_TOOL])


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
