"""The entities of a caller's line (benchmark.entity.matcher.extract): the spans found by rule in what was said, by
category, and each marked kept or lost in a transcriber's text by the matcher."""

import pytest

from benchmark.entity.matcher import CATEGORIES, entities, entity_found, entity_marks


def found(text):
    return [(e.category, e.text) for e in entities(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Hi, this is Maria Lopez from Bank of America, I'm calling about order AB123.",
            [("name", "Maria Lopez"), ("name", "Bank of America"), ("id", "AB123")],
        ),
        (
            "Can I book a table for four on Tuesday at ten forty five?",
            [("number", "four"), ("date", "Tuesday"), ("time", "ten forty five")],
        ),
        ("The twelfth of March, nineteen ninety one.", [("date", "twelfth of March, nineteen ninety one")]),
        ("My account is 4 7 1 9 2 and my phone is 555-0142.", [("id", "4 7 1 9 2"), ("id", "555-0142")]),
        ("It's account four seven one nine two.", [("id", "four seven one nine two")]),
        (
            "I live at fourteen Main Street, apartment 3B.",
            [("number", "fourteen"), ("name", "Main Street"), ("id", "3B")],
        ),
        (
            "Yes, eight fifteen is fine. See you on March 4th, 2026 at 3 pm.",
            [("time", "eight fifteen"), ("date", "March 4th, 2026"), ("time", "3 pm")],
        ),
        (
            "May I ask about the $20 fee and the 2,000 points, twenty-one of them?",
            [("number", "$20"), ("number", "2,000"), ("number", "twenty-one")],
        ),
        (
            "Dr. Smith at St. Mary's Hospital said half past eight.",
            [("name", "Dr. Smith"), ("name", "St. Mary's Hospital"), ("time", "half past eight")],
        ),
        (
            "Meet me at 10:45 am with a hundred dollars; that one is fine, just a second.",
            [("time", "10:45 am"), ("number", "a hundred")],
        ),
        ("Main Street is closed.", [("name", "Main Street")]),
        ("Will Smith called, Maria, Jose.", [("name", "Will Smith"), ("name", "Maria"), ("name", "Jose")]),
        ("the 4th floor, 20% off, 3.5 stars", [("number", "4th"), ("number", "20%"), ("number", "3.5")]),
        ("Thank You. Okay, Hello there.", []),
        ("yes please, that would be great", []),
        ("", []),
    ],
)
def test_it_finds_the_entities_of_a_line_by_category(text, expected):
    assert found(text) == expected


def test_it_names_five_categories():
    assert CATEGORIES == ("name", "time", "date", "number", "id")
    assert {e.category for e in entities("Call Maria at 10:45 on Tuesday, four, AB123")} == set(CATEGORIES)


def test_it_gives_each_span_as_the_line_writes_it_so_the_matcher_finds_it_in_the_line_itself():
    line = "Hi, this is Maria Lopez. My order AB-123 for 2,000 units ships March 4th at 3 p.m. to St. Louis."
    spans = entities(line)
    assert spans
    for entity in spans:
        assert entity.text in line
        assert entity_found(entity.text, line)


def test_it_marks_each_entity_kept_or_lost_by_the_matcher():
    marks = entity_marks(
        "I live at fourteen Main Street, apartment 3B.", "i live at forty main st apartment three b"
    )
    assert [(m.category, m.text, m.kept) for m in marks] == [
        ("number", "fourteen", False),
        ("name", "Main Street", True),
        ("id", "3B", True),
    ]
    assert [m.kept for m in entity_marks("at ten forty five", "at 10:45")] == [True]
    assert [m.kept for m in entity_marks("at ten forty five", "")] == [False]


@pytest.mark.parametrize(
    "text", ["²", "³ at ²", "table for ¹²", "call me at ⁵⁵⁵ one two", "²²²²²²", "٣ at ٤"]
)
def test_digits_that_are_not_decimal_never_crash_it(text):
    """Superscripts are digits to str.isdigit but not numbers int() reads (a flag typed "²" answered 500)."""
    entities(text)
    assert all(mark.kept for mark in entity_marks(text, text))  # what was said is kept in itself
