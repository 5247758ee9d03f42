"""The code-switching judge's answers, checked by code: semantic errors against their own list and the texts,
questions that give their answer away written again, names, numbers and ids matched exactly."""

import pytest

from benchmark.codeswitch import judge as cs_judge
from oncore import llm
from tests.llm_server import prompt_text

REFERENCE = "Hola necesito ayuda con el ticket 48213 de Maria Lopez"  # 10 words
HYPOTHESIS = "Hola necesito ayuda con el ticket 48 213 de Marie Lopez"


def errors(*entries, **counts):
    answer = {
        "reasoning": "Checked each difference.",
        "errors": [],
        "substitutions": 0,
        "deletions": 0,
        "insertions": 0,
    }
    answer["errors"] = [
        dict(zip(("type", "reference_words", "hypothesis_words"), e, strict=True)) for e in entries
    ]
    answer.update(counts)
    return answer


def test_it_counts_semantic_errors_from_the_list_and_the_reference_words_itself(llm_server):
    llm_server.queue(errors(("S", "48213", "48 213"), ("S", "Maria", "Marie"), substitutions=2))
    judged = cs_judge.semantic_errors(REFERENCE, HYPOTHESIS)
    assert (judged.errors, judged.total) == (2, 10)  # the reference's 10 words, counted here
    assert judged.detail["substitutions"] == 2 and len(judged.detail["errors"]) == 2
    assert judged.reasoning == "Checked each difference."


@pytest.mark.parametrize(
    "bad, problem",
    [
        (errors(("S", "Maria", "Marie"), substitutions=2), "do not match the errors listed"),
        (errors(("S", "Mario", "Marie"), substitutions=1), "'mario', which is not in the reference"),
        (errors(("D", "Maria", "Marie"), deletions=1), "does not give the words its type needs"),
        (errors(("X", "Maria", "Marie"), substitutions=1), "not S, D or I"),
    ],
)
def test_it_asks_once_more_when_the_errors_do_not_add_up_then_refuses(llm_server, bad, problem):
    llm_server.queue(bad, bad)
    with pytest.raises(llm.LLMError, match="invalid twice") as caught:
        cs_judge.semantic_errors(REFERENCE, HYPOTHESIS)
    assert problem in caught.value.message and len(llm_server.requests) == 2
    assert "previous_answer_problem" in prompt_text(llm_server.bodies[1])


def test_it_writes_a_question_that_contains_its_own_answer_again(llm_server):
    giving = {
        "questions": [
            {"question": "Is the ticket number 48213?", "answer": "48213"},
            {"question": "Who is the ticket for?", "answer": "Maria Lopez"},
            {"question": "What does the caller need?", "answer": "help"},
        ]
    }
    fixed = {
        "questions": [{"question": "What is the ticket number?", "answer": "48213"}, *giving["questions"][1:]]
    }
    llm_server.queue(giving, fixed)
    pairs, _, _ = cs_judge.write_questions(REFERENCE)
    assert pairs[0] == ("What is the ticket number?", "48213")
    assert "question 1 contains its own answer" in prompt_text(llm_server.bodies[1])


def test_it_counts_an_answer_missing_an_exact_name_or_number_as_wrong(llm_server):
    questions = [
        ("What is the ticket number?", "48213"),
        ("Who is it for?", "Maria Lopez"),
        ("When?", "next Tuesday"),
    ]
    llm_server.queue(
        {"answers": ["four eight two one three", "Marie Lopez", "next Tuesday"]},
        {"grades": [{"reasoning": "Close enough.", "correct": True}] * 3},  # a lenient grader
    )
    judged = cs_judge.answer_errors(questions, HYPOTHESIS)
    items = judged.detail["items"]
    assert [item["correct"] for item in items] == [
        True,
        False,
        True,
    ]  # digits in words agree; a name does not
    assert items[1]["not_exact"] == ["Maria"] and judged.errors == 1


def test_it_puts_the_reasoning_first_and_ties_its_prompt_versions_to_their_text():
    semantic = list(cs_judge.SEMANTIC_TOOL["input_schema"]["properties"])
    grade = list(cs_judge.GRADES_TOOL["input_schema"]["properties"]["grades"]["items"]["properties"])
    assert semantic[0] == "reasoning" and grade[0] == "reasoning"
    versions = (
        cs_judge.SEMANTIC_PROMPT_VERSION,
        cs_judge.QUESTIONS_PROMPT_VERSION,
        cs_judge.ANSWERS_PROMPT_VERSION,
    )
    assert {versions: cs_judge.prompt_fingerprint()} == {
        ("cs-swer-2", "cs-aer-questions-2", "cs-aer-answers-2"): "cb151f44fc2d5088"
    }
