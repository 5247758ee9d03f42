"""Pure code-switching metrics: switch points, Code-Mixing Index, per-language WER, switching cost and where
errors fall (see research/code-switching-metrics.md). No Django here.

Language tags are strings such as "en", "es" or "fr-CA" (a language with a region subtag, written as BCP 47
writes it: `canonical_tag`), compared exactly as given; None marks a language-independent token (a number, a
name, an acronym), which belongs to no language. A language pair is "matrix-embedded": "es-en", "fr-CA-en"
(Canadian French with English: its own pair, distinct from "fr-en"); `split_pair` reads one.

Words: `reference` texts carry one tag per word *as written*, i.e. per whitespace-separated token of the
raw text. Scoring normalizes with `transcriber_tests.lib.scoring.normalize` (lowercase, punctuation becomes a
space, in-word apostrophes stay); each raw token becomes zero or more normalized words, which all carry the
token's tag ("twenty-one" gives "twenty" and "one"; a lone "—" gives nothing). The hypothesis is normalized
the same way, and the two word lists are aligned with rapidfuzz's word-level Levenshtein (the same alignment
as `score_line`).
"""

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Protocol

from rapidfuzz.distance import Levenshtein

from transcriber_tests.lib.scoring import normalize

Tag = str | None

_TAG = re.compile(r"([A-Za-z]{2,3})(?:[-_]([A-Za-z]{2}|[0-9]{3}))?")
_PAIR_WITH_REGIONS = re.compile(r"([a-z]{2,3}(?:-[A-Z]{2}|-[0-9]{3})?)-([a-z]{2,3}(?:-[A-Z]{2}|-[0-9]{3})?)")


def canonical_tag(code: str) -> str:
    """A language tag as BCP 47 writes it: the ISO 639 language in lower case, an optional region in capitals
    ("FR" -> "fr", "fr_ca" -> "fr-CA", "es-419" stays). ValueError on anything else."""
    match = _TAG.fullmatch(str(code).strip())
    if match is None:
        raise ValueError(
            f"{code!r} is not a language tag: use an ISO 639-1 code such as 'fr', optionally with a region "
            "such as 'fr-CA'."
        )
    language, region = match[1].lower(), match[2]
    return f"{language}-{region.upper()}" if region else language


def base_language(tag: str) -> str:
    """The language of a tag without its region: "fr-CA" -> "fr"."""
    return canonical_tag(tag).split("-")[0]


def split_pair(pair) -> tuple[str, str]:
    """(matrix, embedded) of a language pair: "es-en", "fr-CA-en" (a region subtag in capitals, so the hyphens
    are not ambiguous), "fr-ca/en" (two tags around a slash, any case) or a list of two tags. The two must be
    different languages. ValueError saying what to write otherwise."""
    parts = None
    if isinstance(pair, list | tuple):
        parts = list(pair)
    elif isinstance(pair, str):
        text = pair.strip()
        if "/" in text:
            parts = text.split("/")
        elif text.count("-") == 1:
            parts = text.split("-")
        elif match := _PAIR_WITH_REGIONS.fullmatch(text):
            parts = [match[1], match[2]]
    try:
        matrix, embedded = (
            (canonical_tag(part) for part in parts) if parts and len(parts) == 2 else (None, None)
        )
    except ValueError:
        matrix = embedded = None
    if matrix is None or base_language(matrix) == base_language(embedded):
        raise ValueError(
            f"pair {pair!r} is not two different languages like 'es-en', or 'fr-CA-en' with a region (in capitals, "
            "or written 'fr-ca/en')"
        )
    return matrix, embedded


def switch_points(tags: Sequence[Tag]) -> int:
    """The number of language-tagged tokens whose language differs from the previous language-tagged token.

    None tokens are skipped, so they neither make nor break a switch: ["es", None, "en"] has one switch
    point, ["es", None, "es"] none."""
    count = 0
    previous = None
    for tag in tags:
        if tag is None:
            continue
        if previous is not None and tag != previous:
            count += 1
        previous = tag
    return count


def code_mixing_index(tags: Sequence[Tag], matrix_language: str) -> float:
    """The Code-Mixing Index the two-part model uses: the share of an utterance's language-tagged words that are
    not in its matrix language, in percent (0 monolingual in the matrix language, 100 none of it); 0 when no word
    is tagged. It has no switch-point term, so it does not count the switches a second time beside the
    switch_points predictor: "mi laptop crashed again 3 veces" tagged ["es", "en", "en", "en", None, "es"] with
    matrix "es" gives 100 * 3 / 5 = 60.0."""
    tagged = [tag for tag in tags if tag is not None]
    if not tagged:
        return 0.0
    return 100 * sum(tag != matrix_language for tag in tagged) / len(tagged)


def gamback_das_index(tags: Sequence[Tag]) -> float:
    """Gambäck & Das's Code-Mixing Index of one utterance, from 0 (monolingual) upwards; descriptive only (it
    counts switch points, so the two-part model uses `code_mixing_index` beside `switch_points` instead):

        C = 100 * (N - max_lang_tokens + P) / (2 * N)   when N > 0, else 0

    N: tokens that belong to a language (None tokens left out); max_lang_tokens: the count of the most
    frequent language; P: `switch_points(tags)`.

    Worked example, "mi laptop crashed again 3 veces" tagged ["es", "en", "en", "en", None, "es"]:
    N = 5 (the None is left out), max_lang_tokens = 3 ("en"), P = 2 (es→en, then en→es across the None),
    so C = 100 * (5 - 3 + 2) / (2 * 5) = 100 * 4 / 10 = 40.0.
    A monolingual utterance gives 100 * (N - N + 0) / (2N) = 0.0; so does one with only None tokens."""
    counts: dict[str, int] = {}
    for tag in tags:
        if tag is not None:
            counts[tag] = counts.get(tag, 0) + 1
    n = sum(counts.values())
    if n == 0:
        return 0.0
    return 100 * (n - max(counts.values()) + switch_points(tags)) / (2 * n)


# --- word errors -------------------------------------------------------------------------------------------


class WordErrorCounts(Protocol):
    """Anything with word error counts: `transcriber_tests.lib.scoring.LineScore`, `WordErrors`, a DB row."""

    substitutions: int
    deletions: int
    insertions: int
    reference_words: int


@dataclass(frozen=True, slots=True)
class WordErrors:
    """Word errors of one hypothesis against one reference; `wer` is None for an empty reference."""

    substitutions: int
    deletions: int
    insertions: int
    reference_words: int

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def wer(self) -> float | None:
        return self.errors / self.reference_words if self.reference_words else None


@dataclass(frozen=True, slots=True)
class LanguageErrors:
    """Substitutions and deletions charged to one language's reference words, and how many words it has."""

    errors: int
    words: int

    @property
    def wer(self) -> float:
        return self.errors / self.words


def _tagged_words(reference: str, languages: Sequence[Tag]) -> tuple[list[str], list[Tag]]:
    tokens = reference.split()
    if len(tokens) != len(languages):
        raise ValueError(
            f"Give one language tag per reference word: the reference has {len(tokens)} words "
            f"(split on whitespace), but {len(languages)} tags were given."
        )
    words: list[str] = []
    tags: list[Tag] = []
    for token, tag in zip(tokens, languages, strict=True):
        for word in normalize(token).split():
            words.append(word)
            tags.append(tag)
    return words, tags


def _alignment(reference_words: list[str], hypothesis: str) -> tuple[list[tuple[str, int]], int]:
    """The substitutions and deletions as (kind, reference index), and the number of insertions."""
    charged = []
    insertions = 0
    for kind, position, _ in Levenshtein.editops(reference_words, normalize(hypothesis).split()).as_list():
        if kind == "insert":
            insertions += 1
        else:
            charged.append((kind, position))
    return charged, insertions


def word_errors(reference: str, hypothesis: str) -> WordErrors:
    """Substitutions, deletions and insertions of `hypothesis` against `reference`, both normalized.
    Unlike `score_line`, an empty reference is allowed (its `wer` is None)."""
    words = normalize(reference).split()
    charged, insertions = _alignment(words, hypothesis)
    substitutions = sum(kind == "replace" for kind, _ in charged)
    return WordErrors(substitutions, len(charged) - substitutions, insertions, len(words))


def per_language_errors(
    reference: str, languages: Sequence[Tag], hypothesis: str
) -> dict[str, LanguageErrors]:
    """Errors charged to each language: every substitution and deletion goes to the language of its reference
    word; insertions have no reference word and are left out (they still count in the overall WER).
    Words tagged None belong to no language and are left out too. Keys: the languages with at least one
    normalized reference word, in order of first appearance. Raises ValueError when the number of tags is
    not the number of whitespace-separated reference words."""
    words, tags = _tagged_words(reference, languages)
    charged, _ = _alignment(words, hypothesis)
    errors: dict[str, int] = {}
    totals: dict[str, int] = {}
    for tag in tags:
        if tag is not None:
            totals[tag] = totals.get(tag, 0) + 1
            errors.setdefault(tag, 0)
    for _, position in charged:
        tag = tags[position]
        if tag is not None:
            errors[tag] += 1
    return {tag: LanguageErrors(errors[tag], totals[tag]) for tag in totals}


def per_language_wer(reference: str, languages: Sequence[Tag], hypothesis: str) -> dict[str, float]:
    """WER per language of one utterance: (S + D) on that language's reference words / its word count.

    Example: reference "mi laptop no arranca" tagged ["es", "en", "es", "es"], hypothesis "mi lap top no
    arranca": "laptop" → "lap" is a substitution and "top" an insertion, so {"es": 0/3 = 0.0, "en": 1/1 =
    1.0}; the overall WER counts the insertion too: 2/4 = 0.5. See `per_language_errors` for the rules."""
    return {tag: counts.wer for tag, counts in per_language_errors(reference, languages, hypothesis).items()}


def pooled_wer(utterances: Iterable[WordErrorCounts]) -> float | None:
    """Sum of (S + D + I) / sum of reference words over many utterances (one system and pair, say); None
    when there are no reference words. Accepts `WordErrors`, `LineScore` or any row with the four counts."""
    errors = words = 0
    for u in utterances:
        errors += u.substitutions + u.deletions + u.insertions
        words += u.reference_words
    return errors / words if words else None


def pooled_per_language_wer(utterances: Iterable[Mapping[str, LanguageErrors]]) -> dict[str, float]:
    """Per-language WER pooled over many utterances: each language's charged errors summed / its reference
    words summed. Takes `per_language_errors` results; keys in order of first appearance."""
    errors: dict[str, int] = {}
    words: dict[str, int] = {}
    for counts in utterances:
        for tag, c in counts.items():
            errors[tag] = errors.get(tag, 0) + c.errors
            words[tag] = words.get(tag, 0) + c.words
    return {tag: errors[tag] / words[tag] for tag in words if words[tag]}


# --- code-switching cost -----------------------------------------------------------------------------------


def codeswitch_cost(cs_wers: Sequence[float], mono_wers: Sequence[float]) -> float:
    """Mean delta WER = mean over utterances of WER(code-switched) − WER(monolingual), paired by position:
    cs_wers[i] and mono_wers[i] are the same utterance's content in the two audio conditions. Positive
    means code-switching costs accuracy. Compute it once against the matrix-language condition and once
    against monolingual English. Raises ValueError on lists of different lengths or no utterances."""
    if len(cs_wers) != len(mono_wers):
        raise ValueError(
            f"Pair each code-switched WER with its monolingual WER: got {len(cs_wers)} and {len(mono_wers)}."
        )
    if not cs_wers:
        raise ValueError("No utterances: the code-switching cost needs at least one pair of WERs.")
    return math.fsum(cs - mono for cs, mono in zip(cs_wers, mono_wers, strict=True)) / len(cs_wers)


@dataclass(frozen=True, slots=True)
class SwitchingCost:
    """`mean_delta` over the `paired` utterances present in both conditions (None when none are);
    `unpaired`: utterances present in only one of the two."""

    mean_delta: float | None
    paired: int
    unpaired: int

    @property
    def points(self) -> float | None:
        """`mean_delta` in WER points (a delta of 0.035 is 3.5 points)."""
        return None if self.mean_delta is None else 100 * self.mean_delta


def codeswitch_cost_by_utterance(cs: Mapping[object, float], mono: Mapping[object, float]) -> SwitchingCost:
    """`codeswitch_cost` with WERs keyed by utterance id (as a database query gives them): utterances missing
    from one condition are left out and counted in `unpaired`."""
    shared = [key for key in cs if key in mono]
    unpaired = len(cs) + len(mono) - 2 * len(shared)
    if not shared:
        return SwitchingCost(None, 0, unpaired)
    mean = codeswitch_cost([cs[key] for key in shared], [mono[key] for key in shared])
    return SwitchingCost(mean, len(shared), unpaired)


# --- where errors fall -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ErrorLocation:
    """Substitutions and deletions on matrix-language words, on embedded-language words (any other tag) and
    on language-independent words (None), with the word counts of each. Insertions are not located."""

    matrix_errors: int
    embedded_errors: int
    independent_errors: int
    matrix_words: int
    embedded_words: int
    independent_words: int

    @property
    def embedded_share(self) -> float | None:
        """Share of the language-tagged errors that fall on embedded words; None when there are none."""
        located = self.matrix_errors + self.embedded_errors
        return self.embedded_errors / located if located else None


def error_location(
    reference: str, languages: Sequence[Tag], hypothesis: str, matrix_language: str
) -> ErrorLocation:
    """Where one utterance's errors fall: see `ErrorLocation`. Same word and tag rules as
    `per_language_errors`."""
    words, tags = _tagged_words(reference, languages)
    charged, _ = _alignment(words, hypothesis)
    errors = {"matrix": 0, "embedded": 0, "independent": 0}
    totals = {"matrix": 0, "embedded": 0, "independent": 0}

    def where(tag: Tag) -> str:
        if tag is None:
            return "independent"
        return "matrix" if tag == matrix_language else "embedded"

    for tag in tags:
        totals[where(tag)] += 1
    for _, position in charged:
        errors[where(tags[position])] += 1
    return ErrorLocation(
        errors["matrix"],
        errors["embedded"],
        errors["independent"],
        totals["matrix"],
        totals["embedded"],
        totals["independent"],
    )


def pool_error_locations(locations: Iterable[ErrorLocation]) -> ErrorLocation:
    """The counts of many utterances summed (one cell of the system × pair heat map)."""
    locations = list(locations)
    return ErrorLocation(*(sum(getattr(loc, f.name) for loc in locations) for f in fields(ErrorLocation)))
