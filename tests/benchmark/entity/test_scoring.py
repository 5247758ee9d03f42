"""The pure scoring core, on hand-checked cases (no database)."""

import pytest

from benchmark.entity import scoring
from benchmark.entity.scoring import ClipRow, SpanRow

ML, BF = "MLCommons_TestPortion", "Belebele_Fleurs_TestPortion"

CLIPS = [
    ClipRow(
        "m1",
        ML,
        "the epa met senator maria cantwell in seattle",
        "the E.P.A. met senator maria cantwell in seattle",
    ),
    ClipRow("m2", ML, "david asked the boston city council", "david asked the boston council"),
    ClipRow("m3", ML, "we will take a short recess", "we will take a short recess"),  # zero entities
    ClipRow("m4", ML, "ask jim about the clean air act", None),  # the transcriber failed on it
    ClipRow(
        "b1", BF, "Neil Armstrong flew on Apollo 11 in 1969.", "neil armstrong flew on apollo eleven in 1969"
    ),
]
SPANS = [
    SpanRow("m1#0", "m1", "epa", "ORG", "A"),  # found: E.P.A.
    SpanRow("m1#1", "m1", "maria cantwell", "PERSON", "A"),  # found
    SpanRow("m1#2", "m1", "seattle", "GPE", "B"),  # found, tier B
    SpanRow("m2#0", "m2", "david", "PERSON", "B"),  # found, tier B
    SpanRow("m2#1", "m2", "boston city council", "ORG", "A"),  # missed: "city" dropped
    SpanRow("m4#0", "m4", "jim", "PERSON", "B"),  # missed: no hypothesis
    SpanRow("m4#1", "m4", "clean air act", "OTHER_NAMED", "A"),  # missed: no hypothesis
    SpanRow("b1#0", "b1", "Neil Armstrong", "PERSON", "A"),  # found
    SpanRow("b1#1", "b1", "Apollo 11", "OTHER_NAMED", "A"),  # found: "apollo eleven"
]


def test_it_quotes_the_mlcommons_tier_a_headline_with_n():
    card = scoring.score(CLIPS, SPANS)

    # tier A on MLCommons: epa, maria cantwell found; boston city council, clean air act missed
    assert (card.headline.found, card.headline.n) == (2, 4)
    assert card.headline_text == "entity accuracy, MLCommons_TestPortion, tier A, n=4: 50.0%"
    assert {a.label: (a.found, a.n) for a in card.by_subset} == {ML: (2, 4), BF: (2, 2)}
    assert (card.overall.found, card.overall.n) == (4, 6)


def test_it_breaks_accuracy_down_by_type_and_tier():
    card = scoring.score(CLIPS, SPANS)

    assert {a.label: (a.found, a.n) for a in card.by_type} == {
        "ORG": (1, 2),
        "PERSON": (2, 2),
        "OTHER_NAMED": (1, 2),
    }
    assert {a.label: (a.found, a.n) for a in card.by_tier} == {"A": (4, 6), "B": (2, 3), "AB": (6, 9)}
    assert dict((s, (a.label, a.found, a.n)) for s, a in card.by_subset_type if a.label == "OTHER_NAMED") == {
        ML: ("OTHER_NAMED", 0, 1),
        BF: ("OTHER_NAMED", 1, 1),
    }


def test_it_scores_tier_b_and_a_plus_b_on_request():
    b = scoring.score(CLIPS, SPANS, tiers="B")
    ab = scoring.score(CLIPS, SPANS, tiers="A+B")

    assert (b.tiers, b.headline.found, b.headline.n) == ("B", 2, 3)  # seattle, david found; jim missed
    assert (ab.tiers, ab.headline.found, ab.headline.n) == ("AB", 4, 7)
    with pytest.raises(ValueError, match="Tiers must be one of"):
        scoring.score(CLIPS, SPANS, tiers="C")


def test_it_pools_wer_over_transcribed_clips_only():
    card = scoring.score(CLIPS, SPANS)

    # m1: 0 errors / 8 words ("E.P.A." normalizes to "e p a": 1 substitution + 2 insertions = 3 errors)
    # m2: 1 deletion / 6; m3: 0 / 6; b1: "11"->"eleven" 1 substitution / 8; m4 has no hypothesis
    assert (card.wer.errors, card.wer.reference_words, card.wer.clips) == (3 + 1 + 0 + 1, 8 + 6 + 6 + 8, 4)
    assert card.wer.wer == pytest.approx(5 / 28)
    assert {w.label: (w.errors, w.reference_words) for w in card.wer_by_subset} == {ML: (4, 20), BF: (1, 8)}


def test_it_keeps_zero_entity_clips_and_counts_clips_without_hypothesis():
    cov = scoring.score(CLIPS, SPANS).coverage

    assert (cov.clips, cov.transcribed, cov.without_hypothesis) == (5, 4, 1)
    assert cov.spans_on_clips_without_hypothesis == 1  # clean air act (tier A); jim is tier B
    assert (cov.zero_entity_clips, cov.zero_entity_clips_transcribed) == (1, 1)


def test_it_uses_every_span_as_the_headline_without_an_mlcommons_subset():
    card = scoring.score([c for c in CLIPS if c.subset == BF], [s for s in SPANS if s.clip_id == "b1"])

    assert card.headline_subset is None
    assert card.headline_text == "entity accuracy, all subsets, tier A, n=2: 100.0%"


def test_it_lists_span_by_span_what_one_run_found_and_the_other_missed():
    a = scoring.score(CLIPS, SPANS, tiers="AB")
    other = [
        c._replace(hypothesis="david asked the boston city council")
        if c.clip_id == "m2"
        else c._replace(hypothesis="")
        if c.clip_id == "m1"
        else c
        for c in CLIPS
    ]
    b = scoring.score(other, SPANS, tiers="AB")

    diff = scoring.diff_spans(a.spans, {r.span_id: r.found for r in b.spans})

    assert [r.span_id for r in diff.only_a] == ["m1#0", "m1#1", "m1#2"]
    assert [r.span_id for r in diff.only_b] == ["m2#1"]
    assert (diff.both_found, diff.both_missed) == (3, 2)


def test_it_writes_a_summary_with_every_figure():
    summary = scoring.summary_dict(scoring.score(CLIPS, SPANS))

    assert summary["headline"] == "entity accuracy, MLCommons_TestPortion, tier A, n=4: 50.0%"
    assert summary["entity_accuracy"]["by_subset"][BF] == {"found": 2, "n": 2, "accuracy": 1.0}
    assert summary["entity_accuracy"]["by_tier_all_subsets"]["AB"]["n"] == 9
    assert summary["wer"]["all"]["wer"] == round(5 / 28, 4)
    assert summary["clips"]["zero_entity_clips"] == 1
    assert summary["matcher_version"] and summary["normalizer_version"]
