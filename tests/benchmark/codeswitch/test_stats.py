"""benchmark.codeswitch.stats: the two-part model finds a planted effect and explains, rather than crashes, on
awkward data."""

import math

import numpy as np
import pytest

from benchmark.codeswitch.stats import predictor_table, two_part_model


def synthetic(n: int, seed: int = 7):
    """Switch points raise the chance of an error (log-odds +0.8 per switch); CMI raises its size (+0.006 WER
    per CMI point); length and the language hint do nothing."""
    rng = np.random.default_rng(seed)
    switches = rng.poisson(2, n).astype(float)
    cmi = rng.uniform(0, 40, n)
    words = rng.integers(12, 41, n).astype(float)
    hint = rng.integers(0, 2, n).astype(bool)
    has_error = rng.random(n) < 1 / (1 + np.exp(-(-1.5 + 0.8 * switches)))
    size = 0.05 + 0.006 * cmi + rng.normal(0, 0.02, n)
    wers = np.where(has_error, np.maximum(size, 0.01), 0.0)
    predictors = {"switch_points": switches, "code_mixing_index": cmi, "words": words, "language_hint": hint}
    return list(wers), predictors


def test_it_finds_that_switches_predict_an_error_and_mixing_predicts_its_size():
    wers, predictors = synthetic(400)
    model = two_part_model(wers, predictors)
    assert model.n == 400 and 0 < model.with_errors < 400

    switches = model.any_error.coefficient("switch_points")
    assert switches.p_value < 0.001
    assert abs(switches.estimate - 0.8) < 3 * switches.std_error
    assert model.any_error.coefficient("words").p_value > 0.05

    cmi = model.error_size.coefficient("code_mixing_index")
    assert model.error_size.n == model.with_errors
    assert cmi.p_value < 0.001
    assert abs(cmi.estimate - 0.006) < 3 * cmi.std_error
    assert model.error_size.coefficient("switch_points").p_value > 0.05
    assert [c.name for c in model.error_size.coefficients] == [
        "intercept",
        "switch_points",
        "code_mixing_index",
        "words",
        "language_hint",
    ]
    assert model.any_error.message is None and model.error_size.message is None


def test_it_says_when_there_is_too_little_data():
    model = two_part_model([0.0, 0.1, 0.2], {"switch_points": [0, 1, 2], "code_mixing_index": [0, 10, 30]})
    assert not model.any_error.fitted
    assert "Too little data" in model.any_error.message
    assert not model.error_size.fitted
    assert "Too little data" in model.error_size.message


def test_it_says_when_there_are_no_utterances_or_no_errors():
    empty = two_part_model([], {"switch_points": []})
    assert empty.any_error.message == "No utterances."
    assert empty.error_size.message == "No utterance has an error."
    clean = two_part_model([0.0] * 20, {"switch_points": list(range(20))})
    assert "none has an error" in clean.any_error.message
    assert not clean.error_size.fitted


def test_it_reports_perfect_separation_instead_of_infinite_coefficients():
    switches = list(range(20))
    wers = [0.0 if s < 10 else 0.1 + 0.01 * s for s in switches]  # every utterance with 10+ switches errs
    model = two_part_model(wers, {"switch_points": switches})
    assert not model.any_error.fitted
    assert "Perfect separation" in model.any_error.message
    # the size of the errors can still be modelled
    assert model.error_size.fitted
    assert model.error_size.coefficient("switch_points").estimate == pytest.approx(0.01)


def test_it_leaves_out_a_constant_or_redundant_predictor_and_fits_the_rest():
    wers, predictors = synthetic(200)
    predictors["language_hint"] = [True] * 200
    predictors["twice_the_switches"] = 2 * predictors["switch_points"]
    model = two_part_model(wers, predictors)
    assert model.any_error.fitted and model.error_size.fitted
    assert model.any_error.coefficient("language_hint") is None
    assert model.any_error.coefficient("twice_the_switches") is None
    notes = " ".join(model.any_error.notes)
    assert "language_hint is the same on every utterance" in notes
    assert "twice_the_switches is a linear combination" in notes


def test_it_skips_utterances_with_missing_values():
    wers, predictors = synthetic(100)
    wers[0] = math.nan
    predictors["code_mixing_index"][1] = np.inf
    model = two_part_model(wers, predictors)
    assert (model.n, model.skipped) == (98, 2)


def test_it_warns_when_there_are_few_utterances_per_predictor():
    wers, predictors = synthetic(30, seed=3)
    model = two_part_model(wers, predictors)
    assert any(
        "the estimates are unstable" in note for note in model.any_error.notes + model.error_size.notes
    )


def test_it_refuses_columns_of_different_lengths():
    with pytest.raises(ValueError, match="'switch_points' has 2 values for 3 utterances"):
        two_part_model([0.0, 0.1, 0.2], {"switch_points": [1, 2]})


def test_it_builds_the_default_predictors_from_word_language_tags():
    tags = [["es", "en", "en", "en", None, "es"], ["fr", "fr"]]
    table = predictor_table(tags, ["es", "fr"], language_hint=[True, False])
    # first utterance: P = 2, 3 of its 5 tagged words outside Spanish (CMI 60), 6 words; second: monolingual
    assert table == {
        "switch_points": [2.0, 0.0],
        "code_mixing_index": [60.0, 0.0],
        "words": [6.0, 2.0],
        "language_hint": [1.0, 0.0],
    }
