"""Properties of the entity matcher over arbitrary text."""

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmark.entity.matcher import entity_found

# letters, digits, punctuation, spaces, control characters, combining marks, right-to-left scripts, emoji
ANY_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(),
        st.sampled_from(list("abc XYZ 0123456789 .,'’-&%$\t\n\r\x00\x1b\u200f\u202e\u0301é")),
        st.sampled_from(list("שלום مرحبا 😀👍🏽🇺🇸 ﬁ Ⅻ ½ ²")),
    ),
    max_size=60,
)
SPOKEN = st.lists(
    st.sampled_from(
        "a one two nineteen ninety twenty six hundred thousand million and point oh first fourth "
        "st saint e p a mcdonald's 's ii x 2026 1,999 3.5 4th f16".split()
    ),
    max_size=12,
).map(" ".join)
ENTITY = st.one_of(ANY_TEXT, SPOKEN)
FILLER = st.lists(st.sampled_from(["lorem", "ipsum", "dolor", "sit", "amet"]), max_size=4).map(" ".join)


def _has_token(text):
    """Whether a letter or digit is left once compatibility forms are unfolded and accents dropped. The modifier
    letters ʼ and ʹ count as apostrophes, as the matcher reads them (McDonaldʼs), not as letters."""
    unfolded = unicodedata.normalize("NFKD", text.replace("\u02bc", "'").replace("\u02b9", "'"))
    return any(c.isalnum() and not unicodedata.combining(c) for c in unfolded)


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT, ANY_TEXT)
def test_it_never_crashes_on_arbitrary_text(entity, hypothesis):
    assert entity_found(entity, hypothesis) in (True, False)


@settings(max_examples=300, deadline=None)
@given(SPOKEN, SPOKEN)
def test_it_never_crashes_on_runs_of_number_words(entity, hypothesis):
    assert entity_found(entity, hypothesis) in (True, False)


@settings(max_examples=300, deadline=None)
@given(ENTITY)
def test_it_always_finds_an_entity_in_itself(entity):
    if _has_token(entity):
        assert entity_found(entity, entity)


@settings(max_examples=300, deadline=None)
@given(ENTITY, FILLER, FILLER)
def test_it_finds_an_entity_surrounded_by_other_words(entity, before, after):
    if _has_token(entity):
        assert entity_found(entity, f"{before} {entity} {after}")


def test_it_handles_a_lone_surrogate_and_very_long_numbers():
    assert entity_found("\ud800 EPA", "the epa \ud800") is True
    long_number = "9" * 5000
    assert entity_found(long_number + " thousand", long_number + " thousand")
    assert entity_found("one point " + "five " * 3000 + "million", "one point " + "five " * 3000 + "million")
