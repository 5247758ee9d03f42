"""The matcher's self-test: named cases of entity_found and of same_text, one or more for each rule of
benchmark.entity.matcher, and `self_test()`, which runs them and returns the failures. Pure, standard library
only."""

from dataclasses import dataclass

from .match import entity_found, same_text

# (name, entity, hypothesis, expected)
SELF_TEST_CASES = (
    ("exact", "Boston Red Sox", "the boston red sox won", True),
    ("case_insensitive", "boston red sox", "The Boston Red Sox won", True),
    ("punctuation_ignored", "Washington, D.C.", "in washington dc today", True),
    ("hyphen_is_space", "Coca-Cola", "a coca cola please", True),
    ("accent_folded", "Café", "meet at the cafe", True),
    ("accent_folded_reverse", "cafe", "meet at the Café", True),
    ("accent_folded_name", "José Martínez", "jose martinez spoke", True),
    ("nfkc_ligature", "ﬁnance", "the finance committee", True),
    ("nfkc_fullwidth", "ＥＰＡ", "the epa said", True),
    ("letter_without_decomposition", "Søren Kierkegaard", "soren kierkegaard wrote", True),
    ("curly_apostrophe", "McDonald’s", "at mcdonald's", True),
    ("initialism_dotted_to_plain", "E.P.A.", "the epa said", True),
    ("initialism_plain_to_dotted", "EPA", "the E.P.A. said", True),
    ("initialism_spaced_letters", "E.P.A.", "the e p a said", True),
    ("initialism_entity_spaced", "E P A", "the EPA said", True),
    ("initials_joined", "J. K. Rowling", "by jk rowling", True),
    ("possessive_in_hypothesis", "McDonald", "ate at McDonald's", True),
    ("possessive_entity_no_apostrophe", "McDonald's", "ate at mcdonalds", True),
    ("possessive_entity_bare", "McDonald's", "ate at mcdonald", True),
    ("possessive_hypothesis_apostrophe", "McDonalds", "ate at McDonald's", True),
    ("plural_is_not_possessive", "Brook", "the brooks family", False),
    ("alias_saint", "Saint Louis", "st. louis county", True),
    ("alias_saint_reverse", "St. Louis", "saint louis county", True),
    ("alias_not_transitive", "Saint James", "street james", False),
    ("alias_mount", "Mount Rainier", "mt rainier", True),
    ("alias_doctor", "Dr. Smith", "doctor smith", True),
    ("alias_street", "Main Street", "main st", True),
    ("alias_avenue", "Fifth Avenue", "5th ave", True),
    ("alias_company", "Ford Motor Company", "ford motor co", True),
    ("alias_incorporated", "Apple Inc.", "apple incorporated", True),
    ("alias_junior", "Martin Luther King Jr.", "martin luther king junior", True),
    ("alias_fort", "Fort Worth", "ft worth", True),
    ("alias_number", "No. 9", "number nine", True),
    ("alias_with_possessive", "St. Mary's Hospital", "saint marys hospital", True),
    ("ampersand", "Johnson & Johnson", "johnson and johnson", True),
    ("year_spoken", "1999", "back in nineteen ninety nine", True),
    ("year_digits", "nineteen ninety nine", "back in 1999", True),
    ("year_twenty_twenty", "2026", "in twenty twenty six", True),
    ("year_two_thousand", "2026", "in two thousand twenty six", True),
    ("year_two_thousand_and", "2006", "in two thousand and six", True),
    ("year_oh", "1905", "in nineteen oh five", True),
    ("year_hundred", "1900", "in nineteen hundred", True),
    ("cardinal_hyphenated", "21", "twenty-one", True),
    ("cardinal_hundred", "100", "one hundred", True),
    ("cardinal_a_hundred", "100", "a hundred", True),
    ("cardinal_thousands_comma", "2,000", "two thousand", True),
    ("ordinal_spoken", "4th", "the fourth", True),
    ("ordinal_compound", "21st Century Fox", "twenty first century fox", True),
    ("decimal", "3.5", "three point five", True),
    ("scaled_digits", "$1.5 million", "one point five million dollars", True),
    ("currency_symbol", "$20", "twenty dollars", True),
    ("date_spoken", "March 4th, 2026", "march fourth twenty twenty six", True),
    ("date_written", "march fourth twenty twenty six", "on March 4, 2026", True),
    ("number_in_name", "Catch-22", "catch twenty two", True),
    ("letters_and_digits", "F-16", "an f16 jet", True),
    ("letters_and_digits_spoken", "COVID-19", "covid nineteen cases", True),
    ("spelled_digits", "911", "call nine one one", True),
    ("roman_numeral", "World War II", "world war two", True),
    ("roman_numeral_reverse", "World War 2", "world war ii", True),
    ("wrong_number", "Route 66", "route sixty", False),
    ("wrong_year", "1999", "nineteen ninety eight", False),
    ("not_inside_longer_word", "Ann", "anne said", False),
    ("not_inside_word_middle", "Ann", "the planning board", False),
    ("not_across_gap", "New York", "new big york", False),
    ("not_reordered", "New York", "york new", False),
    ("missing_token", "Clean Air Act", "the clean air", False),
    ("different_name", "Siobhan", "shinwong", False),
    ("empty_hypothesis", "EPA", "", False),
    ("punctuation_only_entity", "--", "-- anything --", False),
    ("time_spoken", "10:45", "tuesday at ten forty five", True),
    ("time_dotted", "8.30", "at eight thirty", True),
    ("time_oh", "8:05", "eight oh five please", True),
    ("time_oclock", "7:00", "seven o'clock", True),
    ("time_quarter_to", "7:45", "at quarter to eight", True),
    ("time_quarter_past", "2:15", "quarter past two", True),
    ("time_half_past", "8:30", "half past eight", True),
    ("time_not_a_number", "830", "at eight thirty", False),
    ("year_still_a_year", "1991", "nineteen ninety one", True),
)

# (name, text, text, expected): same_text on whole lines, one or more cases for each rule the full-call run's
# rule labeller relies on (transcriber_tests/judge/rule_labels.py), and the lines it must leave to the judge.
SAME_TEXT_CASES = (
    ("times", "Tuesday at ten forty five works for me.", "Tuesday at 10:45 works for me", True),
    ("times_dotted", "Yes, eight fifteen is fine.", "Yes, 8.15 is fine.", True),
    ("times_oclock", "at seven o'clock", "at 7:00", True),
    ("times_quarter_to", "six at quarter to eight", "6 at 7:45", True),
    ("times_half_past", "Could we do half past eight instead?", "Could we do 8:30 instead?", True),
    ("numbers", "a table for four", "a table for 4", True),
    ("numbers_digit_by_digit", "It's account 4 7 1 9 2.", "It's account four seven one nine two.", True),
    ("numbers_hyphenated", "twenty-one", "21", True),
    ("ordinals", "from the ninth to the sixteenth", "from the 9th to the 16th", True),
    ("years", "nineteen ninety one", "1991", True),
    ("dates", "The twelfth of March, nineteen ninety one.", "The 12th of March, 1991", True),
    ("abbreviations", "I live at fourteen Main Street", "I live at 14 Main St.", True),
    ("abbreviations_saint", "St. Mary's Road", "Saint Mary's Rd", True),
    ("spelling_variants", "Okay, thank you.", "OK, thank you.", True),
    ("initialisms", "ask the I.T. desk", "ask the IT desk", True),
    ("initialisms_spelled", "apartment three B", "apartment 3B", True),
    ("accents", "Café Noël", "Cafe Noel", True),
    ("possessives", "McDonald's", "McDonalds", True),
    ("not_digits_as_a_time", "eight thirty", "830", False),
    ("not_a_different_number", "from the ninth to the sixteenth", "from the 9th to 13th", False),
    ("not_no_as_number", "No, I'm new.", "Number, I'm new.", False),
    ("not_a_dropped_possessive", "it's ready", "it ready", False),
    ("not_a_homophone", "four people", "for people", False),
    ("not_a_split_name", "under Fitzgerald", "under fitz gerald", False),
    ("not_an_extra_word", "a table for two", "a table for two people", False),
    ("not_an_empty_line", "", "", False),
)


@dataclass(frozen=True)
class SelfTestFailure:
    name: str
    entity: str
    hypothesis: str
    expected: bool
    got: bool
    check: str = "entity_found"

    def __str__(self):
        return (
            f"{self.name}: {self.check}({self.entity!r}, {self.hypothesis!r}) "
            f"gave {self.got}, expected {self.expected}"
        )


def self_test(cases=SELF_TEST_CASES, same_text_cases=SAME_TEXT_CASES) -> list:
    """Run the named cases of entity_found and of same_text; return the failing ones (empty when all pass)."""
    failures = []
    for check, function, named in (
        ("entity_found", entity_found, cases),
        ("same_text", same_text, same_text_cases),
    ):
        for name, first, second, expected in named:
            got = function(first, second)
            if got != expected:
                failures.append(SelfTestFailure(name, first, second, expected, got, check))
    return failures
