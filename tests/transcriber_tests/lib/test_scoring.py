"""The pure scoring core: what counts as a match, how WER is counted, who leads a bank, and the statistics."""

import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import scipy.stats

from transcriber_tests.lib.scoring import (
    NORMALIZER_VERSION,
    Outcome,
    compare_leader,
    compare_line,
    mcnemar_exact,
    mechanical_label,
    normalize,
    score_line,
    summarize,
    wilson_interval,
)
from transcriber_tests.models import RunLine

CAFE_NFC = unicodedata.normalize("NFC", "Café")
CAFE_NFD = unicodedata.normalize("NFD", "Café")


def test_it_imports_without_django():
    code = "import sys, transcriber_tests.lib.scoring; print(sorted(m for m in sys.modules if m.startswith('django')))"
    root = Path(__file__).resolve().parents[3]
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_it_has_a_normalizer_version_to_store_on_scores():
    assert isinstance(NORMALIZER_VERSION, str) and NORMALIZER_VERSION


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("Hello, World!", "hello world"),
        ("twenty-one", "twenty one"),
        ("don't", "don't"),
        ("Don\u2019t", "don't"),
        ("Don\u02bct", "don't"),
        ("O'Brien's table", "o'brien's table"),
        ("'hello'", "hello"),
        ("\u2018hello\u2019", "hello"),
        ('"Quoted," she said.', "quoted she said"),
        ("rock 'n' roll", "rock n roll"),
        ("'90s music", "90s music"),
        ("don''t", "don t"),
        ("  lots   of\tspace\n", "lots of space"),
        ("a\u00a0b", "a b"),
        ("$5 & 10% + tax = $5.50", "5 10 tax 5 50"),
        ("e-mail: anna@example.com", "e mail anna example com"),
        ("hello \U0001f44b world", "hello world"),
        ("830", "830"),
        ("eight thirty", "eight thirty"),
        ("1st 2nd 3rd", "1st 2nd 3rd"),
        (CAFE_NFD, CAFE_NFC.lower()),
        ("Zo\u00eb \u00c5ngstr\u00f6m", "zo\u00eb \u00e5ngstr\u00f6m"),
        ("STRASSE stra\u00dfe", "strasse stra\u00dfe"),
        (
            "\u041c\u043e\u0441\u043a\u0432\u0430, \u0443\u043b. \u041b\u0435\u043d\u0438\u043d\u0430",
            "\u043c\u043e\u0441\u043a\u0432\u0430 \u0443\u043b \u043b\u0435\u043d\u0438\u043d\u0430",
        ),
        ("\u6771\u4eac\u30bf\u30ef\u30fc\u3002", "\u6771\u4eac\u30bf\u30ef\u30fc"),
        ("\u0663 apples", "\u0663 apples"),
        ("new\x00line\x07bell", "new line bell"),
        ("zero\u200bwidth", "zero width"),
        ("!!! ... ???", ""),
        ("", ""),
    ],
)
def test_it_normalizes_case_punctuation_apostrophes_and_spacing(raw, normalized):
    assert normalize(raw) == normalized


@pytest.mark.parametrize("char", [chr(code) for code in range(128)])
def test_it_treats_every_ascii_character_by_its_unicode_category(char):
    category = unicodedata.category(char)
    expected = "a" + char.lower() + "b"
    if char == "'":
        expected = "a'b"
    elif category[0] in "PS" or category == "Cc" or char.isspace():
        expected = "a b"
    assert normalize("a" + char + "b") == expected
    # the same character next to a non-ASCII word goes through the general path and agrees
    assert normalize("\u00e9 a" + char + "b") == "\u00e9 " + expected


def test_it_scores_the_product_example_as_a_miss_with_four_errors_in_seven_words():
    score = score_line("Siobhan, table for four at eight thirty", "Shivon, table for for at 830")
    assert not score.match
    # siobhan->shivon, four->for, eight->830 substituted; thirty deleted
    assert (score.substitutions, score.deletions, score.insertions) == (3, 1, 0)
    assert score.reference_words == 7
    assert score.wer == pytest.approx(4 / 7)
    assert not score.case_or_punctuation_only


def test_it_matches_a_hyphenated_number_with_the_spaced_one_and_notes_it():
    score = score_line("twenty-one", "twenty one")
    assert score.match and score.wer == 0.0
    assert score.case_or_punctuation_only
    assert score.reference_words == 2


def test_it_does_not_match_dont_without_the_apostrophe():
    score = score_line("don't", "dont")
    assert not score.match
    assert score.wer == 1.0 and score.substitutions == 1


def test_it_matches_a_typographic_apostrophe_with_the_ascii_one():
    score = score_line("Don\u2019t worry", "don't worry")
    assert score.match
    assert score.case_or_punctuation_only


def test_it_notes_a_match_that_differs_only_in_capitals_and_punctuation():
    score = score_line("Hello, World!", "hello world")
    assert score.match and score.case_or_punctuation_only


def test_it_notes_a_match_that_differs_only_in_capitals():
    assert score_line("HELLO", "hello").case_or_punctuation_only


def test_it_does_not_note_identical_texts():
    score = score_line("Hello, World!", "Hello, World!")
    assert score.match and not score.case_or_punctuation_only
    assert (score.wer, score.substitutions, score.deletions, score.insertions) == (0.0, 0, 0, 0)


def test_it_does_not_note_a_difference_in_spacing_alone():
    score = score_line("table for  four", " table for four ")
    assert score.match and not score.case_or_punctuation_only


def test_it_matches_nfc_and_nfd_spellings_of_the_same_letter_without_a_note():
    score = score_line(f"{CAFE_NFC} au lait", f"{CAFE_NFD} au lait")
    assert score.match
    assert not score.case_or_punctuation_only


def test_it_keeps_digits_and_number_words_different():
    score = score_line("at eight thirty", "at 830")
    assert not score.match
    assert (score.substitutions, score.deletions, score.insertions) == (1, 1, 0)
    assert score.wer == pytest.approx(2 / 3)


def test_it_lets_wer_exceed_one_when_the_transcriber_adds_words():
    score = score_line("yes", "yes yes yes please")
    assert not score.match
    assert score.insertions == 3
    assert score.wer == 3.0


def test_it_counts_a_deletion():
    score = score_line("a table for four", "a table four")
    assert (score.substitutions, score.deletions, score.insertions) == (0, 1, 0)
    assert score.wer == 0.25


def test_it_counts_an_insertion():
    score = score_line("a table for four", "a table for for four")
    assert (score.substitutions, score.deletions, score.insertions) == (0, 0, 1)
    assert score.wer == 0.25


@pytest.mark.parametrize("hypothesis", ["", "   ", "...", "\u2014"])
def test_it_scores_an_empty_hypothesis_as_all_deletions(hypothesis):
    score = score_line("table for four", hypothesis)
    assert not score.match
    assert score.wer == 1.0
    assert (score.substitutions, score.deletions, score.insertions) == (0, 3, 0)
    assert not score.case_or_punctuation_only


@pytest.mark.parametrize("expected", ["", "   ", "?!", "'"])
def test_it_refuses_an_empty_expected_text(expected):
    with pytest.raises(ValueError, match="expected text is empty.*at least one word"):
        score_line(expected, "anything")


def test_it_returns_a_frozen_score():
    score = score_line("a", "b")
    with pytest.raises(AttributeError):
        score.match = True


# --- summarize -------------------------------------------------------------------------------------------


def outcomes_for(candidate, results):
    """results: a list of (expected, hypothesis) pairs or None for a failed line."""
    return [
        Outcome(candidate, line_id, None if pair is None else score_line(*pair))
        for line_id, pair in enumerate(results)
    ]


HIT = ("table for four", "Table for four.")
NEAR_MISS = ("table for four", "table for for")  # WER 1/3
BAD_MISS = ("table for four", "cable")  # WER 1.0


def test_it_summarizes_rows_in_the_order_the_candidates_are_listed():
    outcomes = outcomes_for("b", [HIT]) + outcomes_for("a", [NEAR_MISS]) + outcomes_for("c", [HIT])
    summary = summarize(outcomes, ["c", "a", "b"], 0.6)
    assert [row.candidate for row in summary.rows] == ["c", "a", "b"]
    assert isinstance(summary.rows, tuple)


def test_it_leaves_failed_lines_out_of_the_division():
    outcomes = outcomes_for("a", [HIT, HIT, NEAR_MISS, None, None])
    (row,) = summarize(outcomes, ["a"], 0.6).rows
    assert (row.scored, row.matches, row.failed) == (3, 2, 2)
    assert row.accuracy == pytest.approx(2 / 3)
    assert row.mean_wer == pytest.approx((0 + 0 + 1 / 3) / 3)


def test_it_reports_no_accuracy_when_nothing_was_scored():
    summary = summarize(outcomes_for("a", [None, None]), ["a", "b"], 0.6)
    a, b = summary.rows
    assert (a.scored, a.failed, a.accuracy, a.mean_wer) == (0, 2, None, None)
    assert (b.scored, b.failed, b.accuracy, b.mean_wer) == (0, 0, None, None)
    assert summary.leader is None
    assert not summary.leader_clears_threshold


def test_it_picks_the_highest_accuracy_even_with_a_worse_mean_wer():
    outcomes = outcomes_for("a", [HIT, NEAR_MISS, NEAR_MISS]) + outcomes_for("b", [HIT, HIT, BAD_MISS])
    assert summarize(outcomes, ["a", "b"], 0.6).leader == "b"


def test_it_breaks_an_accuracy_tie_with_the_lower_mean_wer():
    outcomes = outcomes_for("a", [HIT, BAD_MISS]) + outcomes_for("b", [HIT, NEAR_MISS])
    summary = summarize(outcomes, ["a", "b"], 0.6)
    assert summary.rows[0].accuracy == summary.rows[1].accuracy == 0.5
    assert summary.leader == "b"


def test_it_breaks_a_full_tie_by_the_candidate_listed_first():
    outcomes = outcomes_for("a", [HIT, NEAR_MISS]) + outcomes_for("b", [NEAR_MISS, HIT])
    assert summarize(outcomes, ["a", "b"], 0.6).leader == "a"
    assert summarize(outcomes, ["b", "a"], 0.6).leader == "b"


def test_it_compares_accuracy_as_a_fraction_not_a_count():
    outcomes = outcomes_for("a", [HIT, HIT, BAD_MISS, BAD_MISS]) + outcomes_for("b", [HIT])
    assert summarize(outcomes, ["a", "b"], 0.6).leader == "b"


def test_it_prefers_a_candidate_with_scored_lines_over_one_with_none():
    outcomes = outcomes_for("a", [None, None]) + outcomes_for("b", [BAD_MISS])
    summary = summarize(outcomes, ["a", "b"], 0.0)
    assert summary.leader == "b"
    assert summary.leader_clears_threshold  # 0% is at or above a 0% threshold


def test_it_clears_the_threshold_at_exact_equality():
    outcomes = outcomes_for("a", [HIT, HIT, HIT, NEAR_MISS, NEAR_MISS])  # 3/5 = 60%
    assert summarize(outcomes, ["a"], 0.6).leader_clears_threshold
    assert not summarize(outcomes, ["a"], 0.61).leader_clears_threshold


def test_it_ignores_outcomes_for_candidates_not_listed():
    outcomes = outcomes_for("a", [NEAR_MISS]) + outcomes_for("gone", [HIT, HIT])
    summary = summarize(outcomes, ["a"], 0.6)
    assert [row.candidate for row in summary.rows] == ["a"]
    assert summary.leader == "a"


def test_it_refuses_a_threshold_given_as_a_percentage():
    with pytest.raises(ValueError, match="fraction"):
        summarize([], ["a"], 60)


def test_it_refuses_a_candidate_listed_twice():
    with pytest.raises(ValueError, match="once"):
        summarize([], ["a", "a"], 0.6)


# --- statistics ------------------------------------------------------------------------------------------


def test_it_gives_the_known_wilson_interval_for_8_of_10():
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=5e-4)
    assert high == pytest.approx(0.9433, abs=5e-4)


@pytest.mark.parametrize(
    ("successes", "n"), [(0, 1), (1, 1), (0, 10), (3, 7), (10, 10), (17, 40), (500, 1000)]
)
def test_it_agrees_with_scipy_on_wilson_intervals(successes, n):
    expected = scipy.stats.binomtest(successes, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = wilson_interval(successes, n)
    assert low == pytest.approx(expected.low, abs=1e-12)
    assert high == pytest.approx(expected.high, abs=1e-12)


def test_it_keeps_wilson_intervals_inside_zero_and_one():
    assert wilson_interval(0, 5)[0] == 0.0
    assert wilson_interval(5, 5)[1] == 1.0


def test_it_has_no_wilson_interval_without_lines():
    assert wilson_interval(0, 0) is None


def test_it_refuses_more_successes_than_trials():
    with pytest.raises(ValueError):
        wilson_interval(4, 3)


@pytest.mark.parametrize(
    ("b", "c"),
    [(1, 0), (0, 1), (3, 1), (5, 5), (10, 2), (2, 10), (0, 12), (7, 20), (40, 61), (250, 200)]
    + [
        (1000, 1001),
        (990, 1100),
        (30000, 35000),
        (100000, 101000),
        (0, 3000),
    ],  # past EXACT_MCNEMAR_UP_TO too
)
def test_it_agrees_with_scipy_on_exact_mcnemar(b, c):
    expected = scipy.stats.binomtest(b, b + c, 0.5, alternative="two-sided").pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


def test_it_gives_mcnemar_one_without_discordant_pairs_and_caps_it_at_one():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 4) == 1.0
    assert mcnemar_exact(4, 5) == 1.0


def test_it_computes_mcnemar_exactly_in_the_far_tail():
    assert mcnemar_exact(0, 12) == 2 / 4096
    assert mcnemar_exact(0, 2000) == 2.0**-1999


def lines(candidate, rights):
    """rights: per line id, True (matched), False (missed) or None (failed)."""
    return [
        Outcome(candidate, line_id, None if right is None else score_line("x", "x" if right else "y"))
        for line_id, right in enumerate(rights)
    ]


def test_it_calls_a_lead_clear_when_the_leader_wins_most_disagreements():
    outcomes = lines("a", [True] * 12 + [False] * 3) + lines("b", [False] * 12 + [False] * 3)
    test = compare_leader(outcomes, "a", "b")
    assert (test.both_scored, test.leader_only_right, test.runner_up_only_right) == (15, 12, 0)
    assert test.p_value == pytest.approx(2 / 4096)
    assert test.clear


def test_it_does_not_call_a_narrow_lead_clear():
    outcomes = lines("a", [True, True, True, False, True]) + lines("b", [False, False, False, True, True])
    test = compare_leader(outcomes, "a", "b")
    assert (test.leader_only_right, test.runner_up_only_right) == (3, 1)
    assert test.p_value == 0.625
    assert not test.clear


def test_it_pairs_only_lines_both_candidates_scored():
    outcomes = lines("a", [True, None, True, True]) + lines("b", [False, False, None, False])
    outcomes += lines("c", [True, True, True, True])
    test = compare_leader(outcomes, "a", "b")
    assert test.both_scored == 2
    assert (test.leader_only_right, test.runner_up_only_right) == (2, 0)


def test_it_never_calls_a_lead_clear_when_the_runner_up_wins_the_disagreements():
    outcomes = lines("a", [False] * 12) + lines("b", [True] * 12)
    test = compare_leader(outcomes, "a", "b")
    assert test.p_value < 0.05
    assert not test.clear


def test_it_refuses_a_line_scored_twice_for_one_candidate():
    outcomes = lines("a", [True]) + lines("a", [False]) + lines("b", [True])
    with pytest.raises(ValueError, match="twice"):
        compare_leader(outcomes, "a", "b")


# ---------------------------------------------------------------- full-call runs: a line beside the live transcript


def test_it_labels_flagged_lines_mechanically():
    assert mechanical_label(True, False) == RunLine.CANDIDATE_RIGHT
    assert mechanical_label(False, True) == RunLine.LIVE_RIGHT
    assert mechanical_label(True, True) == RunLine.SAME_MEANING
    assert mechanical_label(False, False) == RunLine.BOTH_WRONG


def test_it_compares_after_normalization_and_scores_against_what_was_said():
    assert compare_line("Twenty-one, please", "twenty one please").differs is False
    assert compare_line("at 830", "at eight thirty").differs is True
    c = compare_line("Shivon table", "Siobhan table", "Siobhan, table")
    assert (c.label, c.candidate_match, c.live_match, c.live_wer) == (
        RunLine.CANDIDATE_RIGHT,
        True,
        False,
        0.5,
    )
    assert compare_line("a", "b").label == ""


def test_it_sums_days_into_weeks_that_end_on_the_last_day_oldest_first():
    from datetime import date

    from transcriber_tests.lib import scoring

    last = date(2026, 11, 28)
    days = [
        (date(2026, 11, 28), 3, 1),
        (date(2026, 11, 22), 2, 2),
        (date(2026, 11, 21), 4, 0),
        (date(2026, 10, 1), 9, 9),
    ]
    weeks = scoring.weekly(days, last, 3)
    assert [(w.first_day, w.last_day) for w in weeks] == [
        (date(2026, 11, 8), date(2026, 11, 14)),
        (date(2026, 11, 15), date(2026, 11, 21)),
        (date(2026, 11, 22), date(2026, 11, 28)),
    ]
    assert [(w.scored, w.matches) for w in weeks] == [(0, 0), (4, 0), (5, 3)]  # October is outside the weeks
    assert weeks[0].accuracy is None and weeks[0].interval is None
    assert weeks[2].accuracy == 0.6 and weeks[2].interval == scoring.wilson_interval(3, 5)
    assert (
        scoring.weekly([(date(2026, 11, 29), 1, 1)], last, 1)[0].scored == 0
    )  # a day after the last is left out
