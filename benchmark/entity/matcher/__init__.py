"""Entity matcher for the Entity Transcription Benchmark: is an annotated span present in a hypothesis?

Pure Python, standard library only, no Django. This is our own matcher, written from the
dataset card's description of the published ``matcher_v5``; figures it produces are not
comparable with figures scored by ``matcher_v5`` itself.

Both texts go through the same canonicalization, then the entity's tokens must appear as a
contiguous run of the hypothesis's tokens:

- Unicode: NFKC compatibility forms, case folded, accents and other combining marks removed
  ("Café" is found in "cafe"), a few letters without a decomposition folded by hand (ø, æ, ł...).
- Punctuation separates tokens and is otherwise ignored. "&" reads as "and", "%" as "percent";
  currency signs are dropped, so "$20" is found in "twenty dollars" (and in "20").
- Initialisms: dotted letters join ("E.P.A." is the token "epa"). A run of single letters or
  digits also matches the token they spell, in either direction: "EPA" is found in "e p a",
  "J. K. Rowling" in "JK Rowling", "3M" in "three m", "911" in "nine one one".
- Letters and digits inside one token are split ("F16" reads as "f 16", "COVID-19" as "covid 19").
- Possessive "'s" is dropped on both sides; when one side wrote the "'s", the other side's bare
  "s" form also matches ("McDonald's" is found in "McDonalds", "McDonalds" in "McDonald's").
  Without an apostrophe nothing is stripped: "Brook" is not found in "Brooks".
- Abbreviations: ``ABBREVIATIONS`` pairs a long form with its short form. The pairs are not
  transitive: "Saint" and "Street" both match "St", but "Saint" does not match "Street".
- Numbers: runs of number words become digits on both sides, so they compare as one form:
  cardinals ("twenty-one" = "21", "a hundred" = "100", "two thousand twenty six" = "2026"),
  spoken years ("nineteen ninety nine" = "1999", "twenty twenty six" = "2026", "nineteen oh
  five" = "1905"), ordinals with their suffix dropped ("4th" = "fourth" = "4"), decimals ("three
  point five" = "3.5"), digits with a scale word ("1.5 million" = "1500000") and digit group
  commas ("2,000" = "2000"). Roman numerals II..XXXIX in an entity also match the number
  ("World War II" is found in "world war two"), and the reverse.
- Clock times: "10:45" (and the "10.45" spelling) is found in "ten forty five", "8:05" in "eight oh five",
  "7:00" in "seven o'clock", "7:45" in "quarter to eight", "2:15" in "quarter past two", "8:30" in "half
  past eight". An hour word (one to twelve) followed by minutes (ten to fifty-nine, or "oh" and a digit)
  reads as a time, not as a year: "ten forty five" is 10:45, not 1045. "830" is not a time and is not found
  in "eight thirty".
- Tokens match whole: "Ann" is not found in "Anne" or "planning", and "New York" is not found in
  "new big york".

``same_text(a, b)`` says whether two whole texts are the same after this canonicalization, read more strictly
than a span: every token of each must match in order, with nothing left over; "no" is not read as "number";
and a possessive "'s" must be on both sides unless the other side writes the "s" ("it's" is not "it", but
"McDonald's" is "McDonalds"). ``differences(a, b)`` lists the spans where two texts are written differently.

Not handled, on purpose or for now: words run together or split apart ("cocacola", "o brien" for
"O'Brien", "newark" vs "new ark") do not match; decades ("the 1990s" vs "the nineteen nineties");
digits read one by one only match a single written token ("nine one one" = "911"), not a grouped one.
Two spoken numbers side by side may read as a year ("nineteen twelve" = "1912"), or, after an hour word, as a
time ("eleven twelve" = "11:12").

``self_test()`` runs ``SELF_TEST_CASES`` and returns the failures.

Its modules:

    canon.py      the abbreviation pairs and the canonical tokens of a text (Unicode folding, punctuation,
                  initialisms, possessives), number words read as digits
    numbers.py    spoken numbers, years, ordinals, decimals and clock times read as digits
    match.py      entity_found, same_text, differences and MATCHER_VERSION
    selftest.py   the named cases of both checks and self_test()
    extract.py    the entities of a line nobody annotated (a caller's line: names, times, dates, numbers, ids)
                  and entity_marks, each marked kept or lost in a transcriber's text
"""

from .canon import ABBREVIATIONS, NOT_IN_WHOLE_TEXT
from .extract import CATEGORIES, Entity, Mark, entities, entity_marks
from .match import MATCHER_VERSION, differences, entity_found, same_text
from .selftest import SAME_TEXT_CASES, SELF_TEST_CASES, SelfTestFailure, self_test

__all__ = [
    "ABBREVIATIONS",
    "CATEGORIES",
    "Entity",
    "Mark",
    "MATCHER_VERSION",
    "NOT_IN_WHOLE_TEXT",
    "SAME_TEXT_CASES",
    "SELF_TEST_CASES",
    "SelfTestFailure",
    "differences",
    "entities",
    "entity_found",
    "entity_marks",
    "same_text",
    "self_test",
]
