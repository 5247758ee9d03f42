"""Matching on canonical tokens (.canon): whether an entity span is found in a hypothesis (`entity_found`),
whether two whole texts are the same (`same_text`), and the spans where two texts are written differently
(`differences`). Pure, standard library only."""

import difflib
import functools
import re
from dataclasses import dataclass

from .canon import _ALIASES, _TEXT_ALIASES, _tokens
from .numbers import _clock_text

MATCHER_VERSION = "oncore-entity-1.1"

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
