"""Agreement between two labellers (pure): accuracy, Cohen's kappa, the confusion matrix."""

import pytest

from transcriber_tests.lib.agreement import agreement, confusion_table


def test_it_computes_cohens_kappa_from_observed_and_chance_agreement():
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    result = agreement(pairs)
    assert (result.n, result.agree, result.accuracy) == (50, 35, 0.7)
    assert result.kappa == pytest.approx(0.4)
    assert result.confusion[("no", "yes")] == 10


def test_it_reports_no_kappa_without_pairs_or_when_chance_explains_everything():
    assert agreement([]).kappa is None and agreement([]).accuracy is None
    assert agreement([("a", "a")] * 5).kappa is None  # one label everywhere: p_e = 1
    assert agreement([("a", "b"), ("b", "a")]).kappa == pytest.approx(-1.0)


def test_it_prints_the_confusion_matrix_in_label_order():
    rows = confusion_table(agreement([("a", "a"), ("a", "b"), ("b", "b")]), ["a", "b"])
    assert rows == [["reference \\ judge", "a", "b"], ["a", 1, 1], ["b", 0, 1]]
