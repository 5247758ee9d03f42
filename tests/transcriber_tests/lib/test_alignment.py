"""Word-level alignment (transcriber_tests/lib/alignment.py): its marks reproduce the substitutions, deletions and insertions WER counts,
on the words as written; a line's confusion pairs are exactly its alignment's edits; texts that agree after
normalization share a key."""

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcriber_tests.lib import alignment, scoring

VOCABULARY = [
    "table",
    "for",
    "four",
    "Four,",
    "at",
    "eight",
    "8:30",
    "thirty",
    "twenty-one",
    "don't",
    "Siobhán",
    "—",
]
text = st.lists(st.sampled_from(VOCABULARY), min_size=0, max_size=9).map(" ".join)
expected_text = st.lists(st.sampled_from(VOCABULARY[:-1]), min_size=1, max_size=9).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(expected=expected_text, hypothesis=text)
def test_it_marks_the_very_edits_the_wer_counts(expected, hypothesis):
    score = scoring.score_line(expected, hypothesis)
    found = alignment.align(expected, hypothesis)
    assert (found.substitutions, found.deletions, found.insertions) == (
        score.substitutions,
        score.deletions,
        score.insertions,
    )
    assert found.reference_words == score.reference_words
    assert found.errors / found.reference_words == pytest.approx(score.wer)
    # Read in order, the steps give back both texts' words as compared.
    assert [s.expected_word for s in found.steps if s.kind != alignment.INSERTION] == scoring.words(expected)
    assert [s.heard_word for s in found.steps if s.kind != alignment.DELETION] == scoring.words(hypothesis)


def test_it_shows_the_words_as_written():
    found = alignment.align("Table for four, at 8:30.", "table for for at eight thirty")
    assert [(s.kind, s.expected, s.heard) for s in found.steps] == [
        ("equal", "Table", "table"),
        ("equal", "for", "for"),
        ("substitution", "four,", "for"),
        ("equal", "at", "at"),
        ("substitution", "8:", "eight"),
        ("substitution", "30.", "thirty"),
    ]
    assert [w for w, _ in alignment.written_words("— twenty-one, Siobhán!")] == [
        "— twenty-",
        "one,",
        "Siobhán!",
    ]


def test_a_text_with_no_words_is_every_expected_word_left_out():
    found = alignment.align("table for four", "...")
    assert [s.kind for s in found.steps] == [alignment.DELETION] * 3
    assert scoring.score_line("table for four", "...").deletions == 3
    with pytest.raises(ValueError):
        alignment.align("?!", "table")


@settings(max_examples=300, deadline=None)
@given(expected=expected_text, hypothesis=text)
def test_confusion_pairs_are_the_alignments_edits(expected, hypothesis):
    pairs = alignment.confusions(expected, hypothesis)
    direct = [
        (s.kind, s.expected_word, s.heard_word)
        for s in alignment.align(expected, hypothesis).steps
        if s.kind != alignment.EQUAL
    ]
    assert pairs == direct
    assert alignment.decode_confusions(alignment.encode_confusions(pairs)) == pairs
    for pair in set(pairs):
        assert alignment.parse_pair(alignment.pair_token(*pair)) == pair


def test_a_pair_is_found_between_spaces_only():
    stored = alignment.encode_confusions([("substitution", "for", "four"), ("deletion", "the", "")])
    assert stored == " s:for>four d:the> "
    assert " s:for>four " in stored and " s:for>fou " not in stored
    assert Counter(alignment.decode_confusions(stored * 1)) == Counter(
        {("substitution", "for", "four"): 1, ("deletion", "the", ""): 1}
    )


@pytest.mark.parametrize(
    "token", ["", "x:a>b", "s:a>a", "s:>b", "d:a>b", "i:a>b", "s:a b>c", "s:a>b s:c>d", "s:A>b"]
)
def test_it_refuses_what_is_not_a_pair(token):
    assert alignment.parse_pair(token) is None


def test_texts_that_read_the_same_share_a_key():
    assert alignment.text_key("Table, for FOUR!") == alignment.text_key("table for four")
    assert alignment.text_key("table for four") != alignment.text_key("table for for")
    assert -(2**63) <= alignment.text_key("anything") < 2**63


@settings(max_examples=300, deadline=None)
@given(expected=expected_text, hypothesis=text)
def test_the_marks_a_page_draws_are_the_wers_edits(expected, hypothesis):
    """What the turn table and a flag's results draw (templatetags.scores.marked_text): one struck and one
    underlined word for each substitution, a struck word for each deletion, an underlined one for each insertion;
    the S, D and I of the line's WER. Unmarked, the words are the text as the transcriber wrote it."""
    from transcriber_tests.templatetags.scores import marked_text

    score = scoring.score_line(expected, hypothesis)
    html = marked_text(expected, hypothesis)
    subs = html.count('<span class="sub">')
    assert subs == score.substitutions
    assert html.count('<del class="missed">') == score.deletions
    assert html.count('<ins class="added">') == score.insertions
    assert html.count("<del") == score.substitutions + score.deletions
    assert html.count("<ins") == score.substitutions + score.insertions
    assert html.count('<span class="visually-hidden">said </span>') == score.substitutions
    assert (subs + score.deletions + score.insertions) / score.reference_words == pytest.approx(score.wer)
