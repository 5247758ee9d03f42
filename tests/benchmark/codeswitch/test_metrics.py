"""benchmark.codeswitch.metrics on hand-computed examples; the arithmetic is written out beside each one."""

import json
from pathlib import Path

import pytest

from benchmark.codeswitch.metrics import (
    ErrorLocation,
    LanguageErrors,
    SwitchingCost,
    WordErrors,
    code_mixing_index,
    codeswitch_cost,
    codeswitch_cost_by_utterance,
    error_location,
    gamback_das_index,
    per_language_errors,
    per_language_wer,
    pool_error_locations,
    pooled_per_language_wer,
    pooled_wer,
    switch_points,
    word_errors,
)
from transcriber_tests.lib.scoring import score_line

HAND_LABELLED = Path(__file__).resolve().parents[3] / "fixtures" / "codeswitch" / "hand_labelled.jsonl"


def test_it_counts_a_switch_each_time_the_language_changes():
    assert switch_points([]) == 0
    assert switch_points(["en"]) == 0
    # es es | en en | es: two changes
    assert switch_points(["es", "es", "en", "en", "es"]) == 2
    # en | es | en | es: three changes
    assert switch_points(["en", "es", "en", "es"]) == 3


def test_it_skips_language_independent_tokens_when_counting_switches():
    # the None is skipped: es → en is still one switch, es → es none
    assert switch_points(["es", None, "en"]) == 1
    assert switch_points(["es", None, "es"]) == 0
    assert switch_points([None, None]) == 0


def test_it_computes_the_gamback_das_index_of_the_worked_example():
    # "mi laptop crashed again 3 veces": N = 5 (the None is left out), max = 3 (en), P = 2 (es→en, en→es)
    # C = 100 * (5 - 3 + 2) / (2 * 5) = 100 * 4 / 10 = 40
    assert gamback_das_index(["es", "en", "en", "en", None, "es"]) == pytest.approx(40.0)


def test_it_gives_zero_mixing_to_monolingual_and_empty_utterances():
    # 100 * (5 - 5 + 0) / 10 = 0
    assert gamback_das_index(["fr"] * 5) == 0.0
    # N = 0: defined as 0
    assert gamback_das_index([None, None]) == 0.0
    assert gamback_das_index([]) == 0.0


def test_the_model_code_mixing_index_is_the_share_of_words_outside_the_matrix_language():
    # "mi laptop crashed again 3 veces", matrix es: 3 of the 5 tagged words are not Spanish
    assert code_mixing_index(["es", "en", "en", "en", None, "es"], "es") == pytest.approx(60.0)
    # no switch-point term: alternating or not, the same share gives the same index
    assert (
        code_mixing_index(["en", "es", "en", "es"], "es")
        == code_mixing_index(["es", "es", "en", "en"], "es")
        == 50
    )
    assert code_mixing_index(["fr"] * 5, "fr") == 0.0 and code_mixing_index([None], "fr") == 0.0
    assert code_mixing_index(["fr-CA", "en"], "fr-CA") == 50.0


def test_it_grows_the_gamback_das_index_with_alternation():
    # en es: N = 2, max = 1, P = 1 → 100 * (2 - 1 + 1) / 4 = 50
    assert gamback_das_index(["en", "es"]) == pytest.approx(50.0)
    # en es en es: N = 4, max = 2, P = 3 → 100 * (4 - 2 + 3) / 8 = 62.5
    assert gamback_das_index(["en", "es", "en", "es"]) == pytest.approx(62.5)


def test_it_computes_the_gamback_das_index_of_a_hand_labelled_sentence():
    row = json.loads(HAND_LABELLED.read_text(encoding="utf-8").splitlines()[0])
    assert row["id"] == "en-es-01"
    # "Hola, necesito ayuda porque mi | laptop | no se conecta al VPN desde esta mañana, | and I have a meeting
    # at ten.": es x5, en, es x4, None (VPN), es x3, en x7 → es = 12, en = 8, N = 20;
    # P = 3 (es→en, en→es, es→en; the None sits between two es words)
    # C = 100 * (20 - 12 + 3) / 40 = 27.5
    assert switch_points(row["tags"]) == 3
    assert gamback_das_index(row["tags"]) == pytest.approx(27.5)


def test_it_charges_a_substitution_to_the_language_of_the_reference_word_and_leaves_insertions_out():
    reference, tags = "Mi laptop no arranca,", ["es", "en", "es", "es"]
    hypothesis = "mi lap top no arranca"
    # laptop → lap is a substitution on an English word; "top" is an insertion with no reference word.
    # es: 0 errors / 3 words = 0.0; en: 1 / 1 = 1.0
    assert per_language_wer(reference, tags, hypothesis) == {"es": 0.0, "en": 1.0}
    # the overall WER counts the insertion: (1 + 0 + 1) / 4 = 0.5
    overall = word_errors(reference, hypothesis)
    assert overall == WordErrors(substitutions=1, deletions=0, insertions=1, reference_words=4)
    assert overall.wer == pytest.approx(0.5)


def test_it_charges_deletions_and_substitutions_per_language():
    # "reset" deleted: en 1 / 2 = 0.5; es 0 / 3 = 0
    wer = per_language_wer(
        "el password reset no funciona", ["es", "en", "en", "es", "es"], "el password no funciona"
    )
    assert wer == {"es": 0.0, "en": 0.5}
    # expense → expensive (en), mañana → manana (es): es 1 / 3, en 1 / 2
    wer = per_language_wer(
        "quiero el expense report mañana", ["es", "es", "en", "en", "es"], "quiero el expensive report manana"
    )
    assert wer == {"es": pytest.approx(1 / 3), "en": pytest.approx(0.5)}


def test_it_counts_every_word_as_deleted_when_the_hypothesis_is_empty():
    assert per_language_wer("mi laptop", ["es", "en"], "") == {"es": 1.0, "en": 1.0}


def test_it_scores_after_the_house_normalization():
    # capitals and punctuation do not count; "twenty-one" is two English words, so en has 3 words
    counts = per_language_errors(
        "Twenty-one DAYS, por favor.", ["en", "en", "es", "es"], "twenty one days por favor"
    )
    assert counts == {"en": LanguageErrors(0, 3), "es": LanguageErrors(0, 2)}
    # a lone dash normalizes to nothing, so it adds no word to its language
    assert per_language_errors("hola — hello", ["es", "es", "en"], "hola hello")["es"].words == 1


def test_it_leaves_language_independent_words_out_of_per_language_wer():
    # 4521 → 4512 is an error on a None word: no language is charged
    assert per_language_wer("llamé al 4521 ayer", ["es", "es", None, "es"], "llamé al 4512 ayer") == {
        "es": 0.0
    }


def test_it_refuses_a_tag_count_that_does_not_match_the_words():
    with pytest.raises(ValueError, match="one language tag per reference word"):
        per_language_wer("mi laptop no arranca", ["es", "en"], "mi laptop no arranca")


def test_it_pools_wer_over_utterances_rather_than_averaging():
    first = WordErrors(substitutions=1, deletions=0, insertions=1, reference_words=4)  # 2 / 4 = 0.5
    second = WordErrors(substitutions=0, deletions=2, insertions=0, reference_words=6)  # 2 / 6 = 0.33
    # pooled: (2 + 2) / (4 + 6) = 0.4, not the mean of 0.5 and 0.33 (0.4167)
    assert pooled_wer([first, second]) == pytest.approx(0.4)
    # the house LineScore works too: "a b c d" vs "a x c": 1 S + 1 D over 4 words, plus 0.5 from above
    assert pooled_wer([score_line("a b c d", "a x c"), first]) == pytest.approx((2 + 2) / (4 + 4))
    assert pooled_wer([]) is None


def test_it_pools_per_language_wer_over_utterances():
    first = {"es": LanguageErrors(1, 3), "en": LanguageErrors(1, 2)}
    second = {"en": LanguageErrors(0, 4), "es": LanguageErrors(2, 2)}
    # es: (1 + 2) / (3 + 2) = 0.6; en: (1 + 0) / (2 + 4) = 1/6
    assert pooled_per_language_wer([first, second]) == {"es": pytest.approx(0.6), "en": pytest.approx(1 / 6)}


def test_it_measures_the_cost_of_code_switching_as_the_mean_paired_delta():
    # deltas: 0.2 - 0.1 = 0.1, 0.1 - 0.1 = 0, 0.3 - 0.0 = 0.3 → mean 0.4 / 3
    assert codeswitch_cost([0.2, 0.1, 0.3], [0.1, 0.1, 0.0]) == pytest.approx(0.4 / 3)
    # code-switched audio can also be easier: 0.1 - 0.3 = -0.2
    assert codeswitch_cost([0.1], [0.3]) == pytest.approx(-0.2)


def test_it_refuses_unpaired_or_empty_wer_lists_for_the_cost():
    with pytest.raises(ValueError, match="Pair each"):
        codeswitch_cost([0.2, 0.1], [0.1])
    with pytest.raises(ValueError, match="No utterances"):
        codeswitch_cost([], [])


def test_it_pairs_utterances_by_id_for_the_cost_and_counts_the_unpaired():
    cs = {"u1": 0.2, "u2": 0.1, "u3": 0.3}
    mono = {"u1": 0.1, "u2": 0.1, "u4": 0.5}
    # u1: 0.1, u2: 0.0 → mean 0.05; u3 and u4 exist in one condition only
    cost = codeswitch_cost_by_utterance(cs, mono)
    assert cost.mean_delta == pytest.approx(0.05)
    assert (cost.paired, cost.unpaired) == (2, 2)
    assert codeswitch_cost_by_utterance({"u1": 0.2}, {}) == SwitchingCost(None, 0, 1)


def test_it_locates_errors_on_embedded_or_matrix_language_words():
    reference = "necesito el expense report para el viernes 15"
    tags = ["es", "es", "en", "en", "es", "es", "es", None]
    hypothesis = "bueno necesito el expensive rapport para viernes 50"
    # expense → expensive, report → rapport: 2 embedded; "el" deleted: 1 matrix; 15 → 50: 1 independent;
    # "bueno" is an insertion and is not located. Words: es 5, en 2, None 1.
    location = error_location(reference, tags, hypothesis, matrix_language="es")
    assert location == ErrorLocation(
        matrix_errors=1,
        embedded_errors=2,
        independent_errors=1,
        matrix_words=5,
        embedded_words=2,
        independent_words=1,
    )
    # share of the language-tagged errors on embedded words: 2 / (2 + 1)
    assert location.embedded_share == pytest.approx(2 / 3)


def test_it_pools_error_locations_for_a_heat_map_cell():
    first = ErrorLocation(1, 2, 1, 5, 2, 1)
    second = ErrorLocation(0, 1, 0, 10, 3, 0)
    pooled = pool_error_locations([first, second])
    assert pooled == ErrorLocation(1, 3, 1, 15, 5, 1)
    # 3 / (3 + 1)
    assert pooled.embedded_share == pytest.approx(0.75)
    assert pool_error_locations([]).embedded_share is None
