"""The entity matcher: what counts as an entity being transcribed."""

import timeit

import pytest

from benchmark.entity.matcher import (
    ABBREVIATIONS,
    MATCHER_VERSION,
    SELF_TEST_CASES,
    entity_found,
    self_test,
)


def test_it_passes_its_own_self_test():
    assert self_test() == []


def test_it_ships_at_least_49_uniquely_named_cases():
    names = [case[0] for case in SELF_TEST_CASES]
    assert len(names) >= 49
    assert len(set(names)) == len(names)


def test_it_reports_a_broken_case_by_name_with_what_it_got():
    broken = ("deliberately_broken", "Ann", "anne said", True)
    failures = self_test(SELF_TEST_CASES[:3] + (broken,))

    assert len(failures) == 1
    failure = failures[0]
    assert (failure.name, failure.entity, failure.hypothesis) == ("deliberately_broken", "Ann", "anne said")
    assert (failure.expected, failure.got) == (True, False)
    assert "deliberately_broken" in str(failure)


def test_it_has_a_version_to_store_with_scores():
    assert isinstance(MATCHER_VERSION, str) and MATCHER_VERSION


@pytest.mark.parametrize(
    ("entity", "hypothesis"),
    [
        ("Café", "cafe"),
        ("cafe", "CAFÉ"),
        ("Zoë Saldaña", "zoe saldana"),
        ("ﬁnance", "finance"),
        ("ＮＡＳＡ", "nasa"),
        ("Łódź", "lodz"),
        ("Straße", "strasse"),
    ],
)
def test_it_folds_unicode_forms_and_accents(entity, hypothesis):
    assert entity_found(entity, hypothesis)


@pytest.mark.parametrize("hypothesis", ["epa", "EPA", "E.P.A.", "the e.p.a. said", "e p a", "E. P. A."])
def test_it_finds_an_initialism_however_it_is_written(hypothesis):
    assert entity_found("E.P.A.", hypothesis)
    assert entity_found("epa", hypothesis)


def test_it_does_not_find_an_initialism_in_other_letters():
    assert not entity_found("EPA", "e p b a")
    assert not entity_found("EPA", "epab")


@pytest.mark.parametrize(
    ("entity", "hypothesis", "found"),
    [
        ("McDonald", "McDonald's", True),
        ("McDonald", "McDonald’s", True),
        ("McDonald's", "McDonalds", True),
        ("McDonald's", "McDonald", True),
        ("McDonalds", "McDonald's", True),
        ("McDonald", "McDonalds", False),
        ("Brook", "brooks", False),
    ],
)
def test_it_tolerates_a_possessive_s_only_where_an_apostrophe_was_written(entity, hypothesis, found):
    assert entity_found(entity, hypothesis) is found


@pytest.mark.parametrize(("long_form", "short_form"), ABBREVIATIONS)
def test_it_matches_every_abbreviation_in_the_table_both_ways(long_form, short_form):
    assert entity_found(f"Lorem {long_form} Ipsum", f"lorem {short_form}. ipsum")
    assert entity_found(f"Lorem {short_form}. Ipsum", f"lorem {long_form} ipsum")


def test_it_keeps_abbreviations_from_chaining_into_each_other():
    assert entity_found("Saint Paul", "st paul")
    assert entity_found("Paul Street", "paul st")
    assert not entity_found("Saint Paul", "street paul")


@pytest.mark.parametrize(
    ("written", "spoken"),
    [
        ("1999", "nineteen ninety nine"),
        ("1999", "nineteen ninety-nine"),
        ("1999", "one thousand nine hundred ninety nine"),
        ("2026", "twenty twenty six"),
        ("2026", "two thousand twenty six"),
        ("2026", "two thousand and twenty six"),
        ("2010", "twenty ten"),
        ("1905", "nineteen oh five"),
        ("1066", "ten sixty six"),
        ("21", "twenty-one"),
        ("21", "twenty one"),
        ("100", "one hundred"),
        ("100", "a hundred"),
        ("105", "one hundred and five"),
        ("2,000", "two thousand"),
        ("250,000", "two hundred and fifty thousand"),
        ("3.5", "three point five"),
        ("3.14", "three point one four"),
        ("1.5 million", "one point five million"),
        ("4th", "fourth"),
        ("21st", "twenty first"),
        ("100th", "hundredth"),
        ("50%", "fifty percent"),
    ],
)
def test_it_reads_spoken_numbers_as_digits_both_ways(written, spoken):
    assert entity_found(written, f"it was {spoken} then")
    assert entity_found(spoken, f"it was {written} then")


def test_it_matches_a_written_date_against_a_spoken_one():
    assert entity_found("March 4th, 2026", "on march fourth twenty twenty six we met")
    assert entity_found("March 4th, 2026", "on March 4, 2026 we met")
    assert not entity_found("March 4th, 2026", "on march fourth twenty twenty five")
    assert not entity_found("March 4th, 2026", "on march fifth twenty twenty six")


def test_it_drops_currency_signs_so_a_written_amount_is_found_in_a_spoken_one():
    assert entity_found("$20", "it cost twenty dollars")
    assert entity_found("$20", "it cost 20")
    assert not entity_found("$20", "it cost twenty two dollars")


def test_it_keeps_different_numbers_apart():
    assert not entity_found("Route 66", "route sixty")
    assert not entity_found("Route 66", "route six")
    assert not entity_found("1999", "nineteen ninety eight")
    assert not entity_found("21", "twenty")


def test_it_matches_a_year_only_as_a_whole():
    assert not entity_found("Nineteen", "in nineteen ninety nine")
    assert not entity_found("1999", "nineteen")


def test_it_matches_digits_read_one_by_one():
    assert entity_found("Route 66", "route six six")
    assert entity_found("911", "call nine one one")
    assert not entity_found("911", "call nine one")


def test_it_matches_letters_and_digits_written_together_or_apart():
    assert entity_found("F-16", "an F16 jet")
    assert entity_found("F16", "an f sixteen jet")
    assert entity_found("3M", "three m company")
    assert entity_found("COVID-19", "covid nineteen")


def test_it_reads_roman_numerals_in_names_as_numbers():
    assert entity_found("World War II", "world war two")
    assert entity_found("Super Bowl 50", "super bowl fifty")
    assert entity_found("Title 9", "title ix")
    assert not entity_found("Malcolm X", "malcolm ten")


@pytest.mark.parametrize(
    ("entity", "hypothesis"),
    [
        ("Ann", "anne"),
        ("Ann", "the planning board"),
        ("Ann", "joanna"),
        ("York", "yorkshire"),
        ("New York", "new big york"),
        ("New York", "newyork"),
        ("New York", "york new"),
        ("Clean Air Act", "clean air"),
    ],
)
def test_it_matches_only_whole_contiguous_tokens(entity, hypothesis):
    assert not entity_found(entity, hypothesis)


def test_it_finds_an_entity_anywhere_in_a_long_hypothesis():
    filler = "and then the committee discussed the budget " * 40
    assert entity_found("Boston Red Sox", filler + "the boston red sox " + filler)
    assert not entity_found("Boston Red Sox", filler + "the boston red " + filler)


def test_it_finds_nothing_for_empty_text():
    assert not entity_found("", "anything")
    assert not entity_found("EPA", "")
    assert not entity_found("...", "... anything ...")


def test_it_checks_one_span_in_well_under_a_millisecond():
    pairs = [(entity, hypothesis) for _, entity, hypothesis, _ in SELF_TEST_CASES]
    runs = 20
    seconds = timeit.timeit(lambda: [entity_found(e, h) for e, h in pairs], number=runs)
    per_call = seconds / (runs * len(pairs))
    assert per_call < 500e-6, f"{per_call * 1e6:.1f} µs per call"
