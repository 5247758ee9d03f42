"""The canonical tokens of a text, the same on both sides of every comparison of the entity matcher
(benchmark.entity.matcher): Unicode folded, punctuation separating tokens, initialisms joined, letters and
digits split, possessives flagged, abbreviation pairs, and number words read as digits (.numbers). Pure,
standard library only."""

import re
import unicodedata

from .numbers import (
    _HOURS,
    _NUMBER_STARTS,
    _NUMBER_TOKEN,
    _SCALES,
    _clock_text,
    _read_clock,
    _read_number,
)

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
_ORDINAL_DIGITS = re.compile(r"([0-9]+)(?:st|nd|rd|th)")
_HAS_DIGIT = re.compile(r"[0-9]")
_DIGITS_OR_NOT = re.compile(r"[0-9]+|[^0-9]+")


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
