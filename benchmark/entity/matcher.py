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
"""

import difflib
import functools
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal

MATCHER_VERSION = "oncore-entity-1.1"

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
# same_text reads whole lines, where these short forms are ordinary words ("No, I'm new" is not "Number I'm new").
NOT_IN_WHOLE_TEXT = {("number", "no")}
_TEXT_ALIASES = _alias_table([pair for pair in ABBREVIATIONS if pair not in NOT_IN_WHOLE_TEXT])

# ---------------------------------------------------------------- text canonicalization

_APOSTROPHES = str.maketrans({c: "'" for c in "\u2018\u2019\u02bc\u02b9\u0060\u00b4\u2032"})
# letters that Unicode does not decompose into a base letter plus a mark
_EXTRA_FOLD = str.maketrans(
    {"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i", "ħ": "h"}
)
_THOUSANDS_COMMA = re.compile(r"(?<=[0-9]),(?=[0-9]{3}(?![0-9]))")
_DOTTED_INITIALISM = re.compile(r"(?<![^\W_])([^\W\d_](?:\.[^\W\d_])+)\.?(?![^\W_])")
_CLOCK = r"[0-9]{1,2}:[0-9]{2}(?![0-9])"
_TOKEN = re.compile(_CLOCK + r"|[0-9]+(?:\.[0-9]+)+|[^\W_]+(?:'[^\W_]+)*")
_ASCII_TOKEN = re.compile(
    _CLOCK + r"|[0-9]+(?:\.[0-9]+)+|[a-z0-9]+(?:'[a-z0-9]+)*"
)  # the same on ASCII, faster
_CLOCK_TOKEN = re.compile(r"([0-9]{1,2})[:.]([0-9]{2})")
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
        if ":" in word:
            clock = _clock_text(word)
            pieces = [clock] if clock else word.split(":")
        elif ordinal:
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
_NUMBER_STARTS = {"a", "quarter", "half", *_SMALL, *_ORDINAL_SMALL, *_SCALES}
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


def _clock_text(written):
    """'10:45' / '08.30' -> '10:45' / '8:30' when it can be a time of day, else None."""
    clock = _CLOCK_TOKEN.fullmatch(written)
    if clock is None or int(clock.group(1)) > 23 or int(clock.group(2)) > 59:
        return None
    return f"{int(clock.group(1))}:{clock.group(2)}"


_HOURS = {w: n for w, n in _SMALL.items() if 1 <= n <= 12}


def _read_clock(words, i):
    """A spoken time of day at words[i]: ('10:45', next index), or None. "ten forty five", "eight oh five",
    "seven o'clock", "quarter past two", "half past eight", "quarter to eight"."""
    n = len(words)
    word = words[i]
    if word in ("quarter", "half") and i + 2 < n and words[i + 2] in _HOURS:
        hour, relation = _HOURS[words[i + 2]], words[i + 1]
        if relation == "past":
            return f"{hour}:{'15' if word == 'quarter' else '30'}", i + 3
        if relation == "to" and word == "quarter":
            return f"{(hour - 2) % 12 + 1}:45", i + 3
        return None
    hour = _HOURS.get(word)
    if hour is None or i + 1 >= n:
        return None
    following = words[i + 1]
    if following == "oclock":
        return f"{hour}:00", i + 2
    if following in ("oh", "o") and i + 2 < n and _UNITS.get(words[i + 2], 0) > 0:
        minutes, j = _UNITS[words[i + 2]], i + 3
    else:
        small = _small(words, i + 1)
        if small is None or small[2] or not 10 <= small[0] <= 59:
            return None
        minutes, j = small[0], small[1]
    if j < n and words[j] in _SCALES:
        return None
    return f"{hour}:{minutes:02d}", j


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
        if word in _HOURS or word in ("quarter", "half"):
            number = _read_clock(words, i)
        else:
            number = None
        if number is not None:
            pass
        elif word in _NUMBER_STARTS or (word[0] in "0123456789" and i + 1 < n and words[i + 1] in _SCALES):
            number = _read_number(words, i)
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
    possessive: bool = False
    strict: bool = False  # same_text: a bare form does not match a possessive one


def _clock_forms(text):
    """A time and its dotted spelling ('8:30' <-> '8.30'); nothing for other tokens."""
    if ":" in text:
        return {text.replace(":", ".")}
    clock = _clock_text(text) if "." in text else None
    return {clock} if clock else set()


@functools.lru_cache(maxsize=8192)
def _entity_tokens(entity, strict=False):
    texts, possessive = _tokens(entity)
    aliases = _TEXT_ALIASES if strict else _ALIASES
    result = []
    for text, is_possessive in zip(texts, possessive, strict=True):
        accepts = {text}
        if is_possessive:
            accepts.add(text + "s")
        accepts |= aliases.get(text, frozenset())
        accepts |= _clock_forms(text)
        for other in (_ROMAN.get(text), _ROMAN_OF.get(text)):
            if other:
                accepts.add(other)
        result.append(_EntityToken(text, frozenset(accepts), is_possessive, strict))
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


def _accepts(token, hyp, hyp_possessive):
    """Whether one hypothesis token matches one entity token."""
    if token.strict and hyp == token.text and hyp_possessive != token.possessive:
        return False
    return hyp in token.accepts or (hyp_possessive and hyp + "s" in token.accepts)


def _matches_at(entity, texts, possessive, start):
    """Whether the entity's tokens run contiguously from texts[start]."""
    i, j = 0, start
    while i < len(entity) and j < len(texts):
        token, hyp = entity[i], texts[j]
        if (len(token.text) == 1) != (len(hyp) == 1):
            return _search(entity, texts, possessive, i, j)  # a spelled-out initialism may start here
        if not _accepts(token, hyp, possessive[j]):
            return False
        i, j = i + 1, j + 1
    return i == len(entity)


def _search(entity, texts, possessive, i, j, whole=False):
    """_matches_at with every way to read initialisms tried; bounded, as each (i, j) is tried once.
    whole: the hypothesis must end where the entity does."""
    stack = [(i, j)]
    seen = set()
    while stack:
        i, j = stack.pop()
        if i == len(entity) and (not whole or j == len(texts)):
            return True
        if i == len(entity) or j >= len(texts) or (i, j) in seen:
            continue
        seen.add((i, j))
        token, hyp = entity[i], texts[j]
        if _accepts(token, hyp, possessive[j]):
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


def same_text(a: str, b: str) -> bool:
    """Whether two whole texts read the same after canonicalization (see the module docstring): "ten forty
    five" is "10:45", "St. Mary's" is "Saint Marys", "E.P.A." is "EPA", "Café" is "cafe"; "830" is not "eight
    thirty". Checked both ways; two texts without a word are not the same text."""
    tokens_a, tokens_b = _entity_tokens(a, strict=True), _entity_tokens(b, strict=True)
    if not tokens_a or not tokens_b:
        return False
    hyp_a, hyp_b = _hypothesis_tokens(a), _hypothesis_tokens(b)
    return _search(tokens_a, hyp_b.texts, hyp_b.possessive, 0, 0, whole=True) and _search(
        tokens_b, hyp_a.texts, hyp_a.possessive, 0, 0, whole=True
    )


_WORDS = re.compile(r"[^\s-]+")
_EDGE_PUNCTUATION = ".,;:!?\"'()"


def differences(a: str, b: str) -> list:
    """The spans where two texts are written differently, as (span of a, span of b) pairs of their own words,
    edge punctuation left off: differences("at ten forty five.", "at 10:45") == [("ten forty five", "10:45")].
    Words are split at spaces and hyphens and compare without case and edge punctuation, nothing else."""
    words_a, words_b = _WORDS.findall(a), _WORDS.findall(b)
    keys_a = [w.lower().strip(_EDGE_PUNCTUATION) for w in words_a]
    keys_b = [w.lower().strip(_EDGE_PUNCTUATION) for w in words_b]
    spans = []
    matcher = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            left = " ".join(words_a[i1:i2]).strip(_EDGE_PUNCTUATION)
            right = " ".join(words_b[j1:j2]).strip(_EDGE_PUNCTUATION)
            spans.append((left, right))
    return spans


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
# rule labeller relies on (transcriber_tests/rule_labels.py), and the lines it must leave to the judge.
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
