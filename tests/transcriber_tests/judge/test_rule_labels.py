"""The full-call run's rule labeller (pure): which differing lines need no judge, and the reason it gives."""

import pytest

from transcriber_tests.judge import rule_labels
from transcriber_tests.lib import scoring


@pytest.mark.parametrize(
    "live, candidate, reason",
    [
        ("Tuesday at ten forty five works.", "Tuesday at 10:45 works", 'Times: "10:45" = "ten forty five".'),
        ("Yes, 9.30 is grand.", "Yes, nine thirty is grand.", 'Times: "nine thirty" = "9.30".'),
        ("six at quarter to eight", "six at 7:45", 'Times: "7:45" = "quarter to eight".'),
        ("a table for four", "a table for 4", 'Numbers: "4" = "four".'),
        (
            "from the 9th to the 16th",
            "from the ninth to the sixteenth",
            'Ordinals: "ninth" = "9th"; ordinals: "sixteenth" = "16th".',
        ),
        ("born in nineteen ninety one", "born in 1991", 'Years: "1991" = "nineteen ninety one".'),
        ("on March fourth", "on March 4th", 'Ordinals: "4th" = "fourth".'),
        (
            "fourteen Main Street",
            "14 Main St.",
            'Numbers: "14" = "fourteen"; abbreviations and spellings: "St" = "Street".',
        ),
        ("ask the I.T. desk", "ask the IT desk", 'Initialisms: "IT" = "I.T".'),
        ("at Café Noël", "at Cafe Noel", 'Accents: "Cafe Noel" = "Café Noël".'),
        ("at McDonald's", "at McDonalds", 'Possessives: "McDonalds" = "McDonald\'s".'),
    ],
)
def test_it_labels_texts_that_read_the_same_and_names_the_rule(live, candidate, reason):
    found = rule_labels.rule_label(live, candidate)
    assert found is not None and found.label == scoring.SAME_MEANING
    assert found.reason == reason and "\n" not in found.reason


@pytest.mark.parametrize(
    "live, candidate",
    [
        ("at eight thirty", "at 830"),  # the product's convention: digits without a separator are not a time
        ("from the ninth to the sixteenth", "from the 9th to 13th"),
        ("No, I'm new.", "Number, I'm new."),
        ("it's ready", "it ready"),
        ("four people", "for people"),
        ("under Fitzgerald", "under fitz gerald"),
        ("my number is 0 8 7 1 2", "my number is 0 8 7"),
        ("Siobhan", "Shivon"),
        ("same words", "Same words."),  # not a difference at all: nothing to label
    ],
)
def test_it_leaves_everything_else_to_the_judge(live, candidate):
    assert rule_labels.rule_label(live, candidate) is None


def test_it_keeps_a_long_reason_to_one_line():
    found = rule_labels.rule_label(
        "one apple, two pears, three plums, four figs", "1 apple, 2 pears, 3 plums, 4 figs"
    )
    assert found.rules == ("numbers",) * 4
    assert found.reason == 'Numbers: "1" = "one"; numbers: "2" = "two"; numbers: "3" = "three"; …'
