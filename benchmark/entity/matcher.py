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
- Tokens match whole: "Ann" is not found in "Anne" or "planning", and "New York" is not found in
  "new big york".

Not handled, on purpose or for now: words run together or split apart ("cocacola", "o brien" for
"O'Brien", "newark" vs "new ark") do not match; decades ("the 1990s" vs "the nineteen nineties");
digits read one by one only match a single written token ("nine one one" = "911"), not a grouped one.
Two spoken numbers side by side may read as a year ("eleven twelve" = "1112").

``self_test()`` runs ``SELF_TEST_CASES`` and returns the failures.
"""

import functools
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal

MATCHER_VERSION = "oncore-entity-1.0"

# (long form, short form). Add a pair here to teach the matcher a new abbreviation.
ABBREVIATIONS = (
    ("saint", "st"),
    ("sainte", "ste"),
    ("street", "st"),
    ("mount", "mt"),
    ("mountain", "mtn"),
    ("fort", "ft"),
    ("doctor", "dr"),
    ("drive", "dr"),
    ("mister", "mr"),
    ("missus", "mrs"),
    ("avenue", "ave"),
    ("road", "rd"),
    ("boulevard", "blvd"),
    ("lane", "ln"),
    ("highway", "hwy"),
    ("parkway", "pkwy"),
    ("place", "pl"),
    ("court", "ct"),
    ("square", "sq"),
    ("point", "pt"),
    ("company", "co"),
    ("county", "co"),
    ("corporation", "corp"),
    ("incorporated", "inc"),
    ("limited", "ltd"),
    ("brothers", "bros"),
    ("association", "assn"),
    ("department", "dept"),
    ("government", "govt"),
    ("university", "univ"),
    ("institute", "inst"),
    ("international", "intl"),
    ("national", "natl"),
    ("building", "bldg"),
    ("center", "ctr"),
    ("number", "no"),
    ("junior", "jr"),
    ("senior", "sr"),
    ("professor", "prof"),
    ("general", "gen"),
    ("governor", "gov"),
    ("senator", "sen"),
    ("representative", "rep"),
    ("president", "pres"),
    ("captain", "capt"),
    ("lieutenant", "lt"),
    ("sergeant", "sgt"),
    ("colonel", "col"),
    ("reverend", "rev"),
    ("honorable", "hon"),
    ("versus", "vs"),
    ("percent", "pct"),
    # spelling variants are read the same way
    ("centre", "center"),
    ("theatre", "theater"),
    ("okay", "ok"),
)


def _alias_table(pairs):
    table = {}
    for long_form, short_form in pairs:
        table.setdefault(long_form, set()).add(short_form)
        table.setdefault(short_form, set()).add(long_form)
    return {word: frozenset(forms) for word, forms in table.items()}


_ALIASES = _alias_table(ABBREVIATIONS)

# ---------------------------------------------------------------- text canonicalization

_APOSTROPHES = str.maketrans({c: "'" for c in "\u2018\u2019\u02bc\u02b9\u0060\u00b4\u2032"})
# letters that Unicode does not decompose into a base letter plus a mark
_EXTRA_FOLD = str.maketrans(
    {"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i", "ħ": "h"}
)
_THOUSANDS_COMMA = re.compile(r"(?<=[0-9]),(?=[0-9]{3}(?![0-9]))")
_DOTTED_INITIALISM = re.compile(r"(?<![^\W_])([^\W\d_](?:\.[^\W\d_])+)\.?(?![^\W_])")
_TOKEN = re.compile(r"[0-9]+(?:\.[0-9]+)+|[^\W_]+(?:'[^\W_]+)*")
_ASCII_TOKEN = re.compile(r"[0-9]+(?:\.[0-9]+)+|[a-z0-9]+(?:'[a-z0-9]+)*")  # the same on ASCII text, faster
_ORDINAL_DIGITS = re.compile(r"([0-9]+)(?:st|nd|rd|th)")
_HAS_DIGIT = re.compile(r"[0-9]")
_DIGITS_OR_NOT = re.compile(r"[0-9]+|[^0-9]+")
_NUMBER_TOKEN = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def _fold(text):
    text = text.translate(_APOSTROPHES)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).casefold()
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
        text = text.translate(_EXTRA_FOLD)
    else:
        text = text.lower()
    text = text.replace("&", " and ").replace("%", " percent ")
    if "," in text:
        text = _THOUSANDS_COMMA.sub("", text)
    if "." in text:
        text = _DOTTED_INITIALISM.sub(lambda m: m.group(1).replace(".", ""), text)
    return text


def _raw_tokens(text):
    """Words and their possessive flags, before number words are read."""
    text = _fold(text)
    words, possessive = [], []
    for raw in (_ASCII_TOKEN if text.isascii() else _TOKEN).findall(text):
        if raw.isalpha():
            words.append(raw)
            possessive.append(False)
            continue
        is_possessive = len(raw) > 2 and raw.endswith("'s")
        word = (raw[:-2] if is_possessive else raw).replace("'", "")
        ordinal = _ORDINAL_DIGITS.fullmatch(word)
        if ordinal:
            pieces = [ordinal.group(1)]
        elif _HAS_DIGIT.search(word) and not _NUMBER_TOKEN.fullmatch(word) and "." not in word:
            pieces = _DIGITS_OR_NOT.findall(word)  # "f16" reads as "f 16"
        else:
            pieces = [word]
        words.extend(pieces)
        possessive.extend([False] * (len(pieces) - 1) + [is_possessive])
    return words, possessive


# ---------------------------------------------------------------- spoken numbers

_UNITS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine".split())}
_TEENS = {
    w: n + 10
    for n, w in enumerate(
        "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    w: (n + 2) * 10 for n, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
}
_ORDINAL_UNITS = {
    w: n + 1 for n, w in enumerate("first second third fourth fifth sixth seventh eighth ninth".split())
}
_ORDINAL_TEENS = {
    w: n + 10
    for n, w in enumerate(
        "tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth".split()
    )
}
_ORDINAL_TENS = {
    w: (n + 2) * 10
    for n, w in enumerate(
        "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth".split()
    )
}
_SMALL = {**_UNITS, **_TEENS, **_TENS}
_ORDINAL_SMALL = {**_ORDINAL_UNITS, **_ORDINAL_TEENS, **_ORDINAL_TENS}
_BIG_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_ORDINAL_BIG_SCALES = {w + "th": n for w, n in _BIG_SCALES.items()}
_ALL_BIG_SCALES = {**_BIG_SCALES, **_ORDINAL_BIG_SCALES}
_SCALES = {"hundred", "hundredth", *_ALL_BIG_SCALES}
_NUMBER_STARTS = {"a", *_SMALL, *_ORDINAL_SMALL, *_SCALES}
_DECIMAL_DIGITS = {**{w: str(n) for w, n in _UNITS.items()}, "oh": "0"}


def _small(words, i):
    """A number below 100 spoken at words[i]: (value, next index, is ordinal), or None."""
    word = words[i]
    if word in _TENS:
        value = _TENS[word]
        following = words[i + 1] if i + 1 < len(words) else ""
        if _UNITS.get(following, 0) > 0:
            return value + _UNITS[following], i + 2, False
        if following in _ORDINAL_UNITS:
            return value + _ORDINAL_UNITS[following], i + 2, True
        return value, i + 1, False
    if word in _SMALL:
        return _SMALL[word], i + 1, False
    if word in _ORDINAL_SMALL:
        return _ORDINAL_SMALL[word], i + 1, True
    return None


def _format_number(value):
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return str(value)


def _read_number(words, i):
    """Read the spoken number starting at words[i]: (digits, next index), or None."""
    n = len(words)
    word = words[i]
    following = words[i + 1] if i + 1 < n else ""
    ordinal = False
    simple = False  # a lone number below 100, which may open a spoken year
    if word == "a" and following in _SCALES:
        group, j = 1, i + 1
    elif word in _SCALES:
        group, j = 1, i
    elif len(word) <= 30 and _NUMBER_TOKEN.fullmatch(word) and following in _SCALES:
        group, j = (int(word) if word.isdigit() else Decimal(word)), i + 1
    else:
        small = _small(words, i)
        if small is None:
            return None
        group, j, ordinal = small
        simple = not ordinal

    total = 0
    has_hundred = False
    last_scale = None
    while not ordinal and j < n:
        word = words[j]
        if word in ("hundred", "hundredth") and not has_hundred and 0 < group < 100:
            group, j, has_hundred, simple = group * 100, j + 1, True, False
            ordinal = word == "hundredth"
            if not ordinal and j < n:
                k = j + 1 if words[j] == "and" and j + 1 < n else j
                small = _small(words, k)
                if small:
                    added, j, ordinal = small
                    group += added
            continue
        scale = _ALL_BIG_SCALES.get(word)
        if scale and group and (last_scale is None or scale < last_scale):
            total, group, last_scale = total + group * scale, 0, scale
            j, has_hundred, simple = j + 1, False, False
            ordinal = word in _ORDINAL_BIG_SCALES
            if not ordinal and j < n:
                k = j + 1 if words[j] == "and" and j + 1 < n else j
                small = _small(words, k)
                if small:
                    group, j, ordinal = small
            continue
        break
    value = total + group

    if simple and 10 <= value <= 20 and j < n:  # spoken years: "nineteen ninety nine", "twenty oh six"
        after = _small(words, j)
        if after and after[0] >= 10 and (after[1] >= n or words[after[1]] not in _ALL_BIG_SCALES):
            return str(value * 100 + after[0]), after[1]
        if words[j] in ("oh", "o") and j + 1 < n and _UNITS.get(words[j + 1], 0) > 0:
            return str(value * 100 + _UNITS[words[j + 1]]), j + 2

    if not ordinal and j + 1 < n and words[j] == "point" and words[j + 1] in _DECIMAL_DIGITS:
        k = j + 1
        digits = ""
        while k < n and words[k] in _DECIMAL_DIGITS:
            digits += _DECIMAL_DIGITS[words[k]]
            k += 1
        spoken = f"{_format_number(value)}.{digits}"
        scale = _BIG_SCALES.get(words[k]) if k < n else None
        if scale:
            return _format_number(Decimal(spoken) * scale), k + 1
        return spoken, k
    return _format_number(value), j


def _tokens(text):
    """Canonical tokens of a text: (texts, possessive flags), number words read as digits."""
    words, raw_possessive = _raw_tokens(text)
    if _NUMBER_STARTS.isdisjoint(words):
        return tuple(words), tuple(raw_possessive)
    texts, possessive = [], []
    i, n = 0, len(words)
    while i < n:
        word = words[i]
        if word in _NUMBER_STARTS or (word[0] in "0123456789" and i + 1 < n and words[i + 1] in _SCALES):
            number = _read_number(words, i)
        else:
            number = None
        if number is None:
            texts.append(word)
            possessive.append(raw_possessive[i])
            i += 1
        else:
            texts.append(number[0])
            possessive.append(number[1] == i + 1 and raw_possessive[i])
            i = number[1]
    return tuple(texts), tuple(possessive)


# ---------------------------------------------------------------- matching

_ROMAN_ONES = ("", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix")
# "ii" .. "xxxix"; the one-letter numerals "v" and "x" are left out, they are too often letters
_ROMAN = {"x" * (n // 10) + _ROMAN_ONES[n % 10]: str(n) for n in range(2, 40) if n not in (5, 10)}
_ROMAN_OF = {number: roman for roman, number in _ROMAN.items()}


@dataclass(frozen=True)
class _EntityToken:
    text: str
    accepts: frozenset  # hypothesis tokens that match this token one to one


@functools.lru_cache(maxsize=8192)
def _entity_tokens(entity):
    texts, possessive = _tokens(entity)
    result = []
    for text, is_possessive in zip(texts, possessive, strict=True):
        accepts = {text}
        if is_possessive:
            accepts.add(text + "s")
        accepts |= _ALIASES.get(text, frozenset())
        for other in (_ROMAN.get(text), _ROMAN_OF.get(text)):
            if other:
                accepts.add(other)
        result.append(_EntityToken(text, frozenset(accepts)))
    return tuple(result)


@dataclass(frozen=True)
class _Hypothesis:
    texts: tuple
    possessive: tuple  # whether each token was written with "'s"
    positions: dict  # token -> where it occurs, to start matching only where the entity can start
    possessive_positions: tuple


@functools.lru_cache(maxsize=8192)
def _hypothesis_tokens(hypothesis):
    texts, possessive = _tokens(hypothesis)
    positions = {}
    for j, text in enumerate(texts):
        positions.setdefault(text, []).append(j)
    return _Hypothesis(texts, possessive, positions, tuple(j for j, p in enumerate(possessive) if p))


def _starts(first, hypothesis):
    """Hypothesis positions where the entity's first token may begin a match, in order."""
    positions = hypothesis.positions
    starts = set()
    for form in first.accepts:
        starts.update(positions.get(form, ()))
    if len(first.text) >= 2:
        starts.update(positions.get(first.text[0], ()))  # spelled out letter by letter
    else:
        starts.update(j for j, text in enumerate(hypothesis.texts) if text.startswith(first.text))
    starts.update(hypothesis.possessive_positions)
    return sorted(starts)


def _matches_at(entity, texts, possessive, start):
    """Whether the entity's tokens run contiguously from texts[start]."""
    i, j = 0, start
    while i < len(entity) and j < len(texts):
        token, hyp = entity[i], texts[j]
        if (len(token.text) == 1) != (len(hyp) == 1):
            return _search(entity, texts, possessive, i, j)  # a spelled-out initialism may start here
        if not (hyp in token.accepts or (possessive[j] and hyp + "s" in token.accepts)):
            return False
        i, j = i + 1, j + 1
    return i == len(entity)


def _search(entity, texts, possessive, i, j):
    """_matches_at with every way to read initialisms tried; bounded, as each (i, j) is tried once."""
    stack = [(i, j)]
    seen = set()
    while stack:
        i, j = stack.pop()
        if i == len(entity):
            return True
        if j >= len(texts) or (i, j) in seen:
            continue
        seen.add((i, j))
        token, hyp = entity[i], texts[j]
        if hyp in token.accepts or (possessive[j] and hyp + "s" in token.accepts):
            stack.append((i + 1, j + 1))
        width = len(token.text)
        if width >= 2 and len(hyp) == 1 and "".join(texts[j : j + width]) == token.text:
            stack.append((i + 1, j + width))  # entity "epa", hypothesis "e p a"
        if width == 1 and len(hyp) >= 2:
            run = entity[i : i + len(hyp)]
            if all(len(t.text) == 1 for t in run) and "".join(t.text for t in run) == hyp:
                stack.append((i + len(hyp), j + 1))  # entity "e p a", hypothesis "epa"
    return False


def entity_found(entity: str, hypothesis: str) -> bool:
    """Whether the entity span is transcribed in the hypothesis (see the module docstring)."""
    if not entity or not hypothesis:
        return False
    tokens = _entity_tokens(entity)
    if not tokens:
        return False
    hyp = _hypothesis_tokens(hypothesis)
    return any(_matches_at(tokens, hyp.texts, hyp.possessive, start) for start in _starts(tokens[0], hyp))


# ---------------------------------------------------------------- self-test

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
)


@dataclass(frozen=True)
class SelfTestFailure:
    name: str
    entity: str
    hypothesis: str
    expected: bool
    got: bool

    def __str__(self):
        return (
            f"{self.name}: entity_found({self.entity!r}, {self.hypothesis!r}) "
            f"gave {self.got}, expected {self.expected}"
        )


def self_test(cases=SELF_TEST_CASES) -> list:
    """Run the named cases; return the failing ones (an empty list when all pass)."""
    failures = []
    for name, entity, hypothesis, expected in cases:
        got = entity_found(entity, hypothesis)
        if got != expected:
            failures.append(SelfTestFailure(name, entity, hypothesis, expected, got))
    return failures
