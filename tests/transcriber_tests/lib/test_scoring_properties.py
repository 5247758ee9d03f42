"""Properties of the scoring core that must hold for any text, checked with hypothesis."""

import math

from hypothesis import assume, given
from hypothesis import strategies as st

from transcriber_tests.lib.scoring import (
    Outcome,
    mcnemar_exact,
    normalize,
    score_line,
    summarize,
    wilson_interval,
)

# Mix characters that exercise the rules (apostrophes, hyphens, spacing, combining marks, capitals,
# symbols) into arbitrary Unicode, so both the ASCII and the general path get hard inputs.
TRICKY = list("aAbBzZ09 '-.,!?$%&\t\n") + [
    "\u2019",
    "\u02bc",
    "\u2018",
    "\u0301",
    "\u00e9",
    "\u00c9",
    "\u00a0",
    "\u0130",
    "\u03a3",
    "\u00df",
    "\u200b",
    "\x00",
    "\U0001f44b",
]
texts = st.text(alphabet=st.one_of(st.sampled_from(TRICKY), st.characters()), max_size=40)
ascii_texts = st.text(alphabet=st.characters(max_codepoint=127), max_size=40)
words = st.text(alphabet="abcdef'", min_size=1, max_size=6)
sentences = st.lists(words, min_size=1, max_size=12).map(" ".join)


@given(texts)
def test_it_normalizes_idempotently(text):
    once = normalize(text)
    assert normalize(once) == once


@given(texts)
def test_it_never_leaves_loose_spaces_or_apostrophes(text):
    normalized = normalize(text)
    assert normalized == normalized.strip()
    assert "  " not in normalized
    assert not normalized.startswith("'") and not normalized.endswith("'")
    assert " '" not in normalized and "' " not in normalized


@given(ascii_texts)
def test_it_normalizes_ascii_the_same_way_on_the_fast_and_the_general_path(text):
    # a non-ASCII word in front sends the text through the general Unicode path
    assert normalize("\u00e9 " + text) == ("\u00e9 " + normalize(text)).strip()


@given(texts)
def test_it_always_matches_a_text_with_itself(text):
    assume(normalize(text))
    score = score_line(text, text)
    assert score.match
    assert score.wer == 0.0
    assert not score.case_or_punctuation_only


@given(st.one_of(texts, sentences), st.one_of(texts, sentences))
def test_it_gives_wer_zero_exactly_when_the_texts_match(expected, hypothesis):
    assume(normalize(expected))
    score = score_line(expected, hypothesis)
    assert (score.wer == 0.0) == score.match == (normalize(expected) == normalize(hypothesis))


@given(st.one_of(texts, sentences), st.one_of(texts, sentences))
def test_it_never_gives_a_negative_wer_and_counts_add_up(expected, hypothesis):
    assume(normalize(expected))
    score = score_line(expected, hypothesis)
    assert score.wer >= 0.0
    assert score.reference_words == len(normalize(expected).split())
    errors = score.substitutions + score.deletions + score.insertions
    assert score.wer == errors / score.reference_words
    # an alignment turns the reference into the hypothesis
    hypothesis_words = len(normalize(hypothesis).split()) if normalize(hypothesis) else 0
    assert score.reference_words - score.deletions + score.insertions == hypothesis_words
    if score.case_or_punctuation_only:
        assert score.match


@given(st.lists(st.tuples(st.sampled_from("abc"), st.one_of(st.none(), sentences, texts)), max_size=30))
def test_it_keeps_accuracy_a_fraction_and_counts_every_line(results):
    outcomes = [
        Outcome(candidate, line_id, None if hypothesis is None else score_line("a b c", hypothesis))
        for line_id, (candidate, hypothesis) in enumerate(results)
    ]
    summary = summarize(outcomes, ["a", "b", "c"], 0.6)
    for row in summary.rows:
        assert row.scored + row.failed == sum(1 for candidate, _ in results if candidate == row.candidate)
        if row.scored:
            assert 0.0 <= row.accuracy <= 1.0
            assert row.mean_wer >= 0.0
    leaders = [row for row in summary.rows if row.candidate == summary.leader]
    if leaders:
        best = max(row.accuracy for row in summary.rows if row.scored)
        assert leaders[0].accuracy == best
    else:
        assert all(row.scored == 0 for row in summary.rows)


@given(st.integers(0, 400), st.integers(0, 400))
def test_it_gives_a_symmetric_mcnemar_p_value_between_zero_and_one(b, c):
    p = mcnemar_exact(b, c)
    assert 0.0 < p <= 1.0
    assert p == mcnemar_exact(c, b)


@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_it_gives_a_wilson_interval_around_the_observed_rate(pair):
    successes, n = pair
    low, high = wilson_interval(successes, n)
    assert 0.0 <= low <= successes / n <= high <= 1.0
    assert not math.isnan(low) and not math.isnan(high)
