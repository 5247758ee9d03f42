"""The full-call run's rule labeller. Before the judge is asked about a line where the candidate and the live
transcript differ, a rule decides what needs no opinion: when the two texts are the same after the canonicalization
of the benchmark's entity matcher (spoken and written numbers, times, ordinals, years, dates, abbreviations,
initialisms, accents, possessives; read through benchmark/selectors.py, the benchmark's one door; the matcher's
self-test in benchmark/entity/matcher/ has a case for each), the line is `same_meaning`, labelled by rule, with a
one-line reason naming the rule and the spans:

    Times: "ten forty five" = "10:45".

Everything else goes to the judge. It reads no table; tested without a database."""

import re
import unicodedata
from dataclasses import dataclass

from benchmark.selectors import MATCHER_VERSION, differences, same_text

from ..lib.scoring import SAME_MEANING, normalize

RULE_VERSION = f"rule:{MATCHER_VERSION}"  # stored as the prompt version of a rule label
MAX_SPANS_IN_REASON = 3

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_NUMBER_WORDS = (
    "zero oh one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred "
    "thousand million billion"
).split()
_ORDINAL_WORDS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth thirtieth fortieth fiftieth"
).split()
_TIME = re.compile(r"\d[:.]\d\d\b|o'?clock|\bquarter\b|\bhalf past\b|\b[ap]\.?m\b")
_ORDINAL_DIGITS = re.compile(r"\b\d+(st|nd|rd|th)\b")
_YEAR = re.compile(r"\b(1[1-9]|20)\d\d\b")
_DIGIT = re.compile(r"\d")
_WORD = re.compile(r"[a-z']+")
_SPELLED = re.compile(r"(^|\s)[a-z](\s|$)|[a-z]\.[a-z]")


@dataclass(frozen=True)
class RuleLabel:
    label: str  # always SAME_MEANING
    reason: str  # one line: 'Times: "ten forty five" = "10:45".'
    rules: tuple  # the rule of each differing span, in order


def _fold_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def rule_of(first: str, second: str) -> str:
    """Which canonicalization rule makes two differing spans read the same."""
    both = f"{first} {second}".lower()
    words = set(_WORD.findall(both))
    if _fold_accents(first) == _fold_accents(second):
        return "accents"
    if _TIME.search(both):
        return "times"
    has_number = bool(_DIGIT.search(both)) or not words.isdisjoint(_NUMBER_WORDS)
    if not words.isdisjoint(_MONTHS) and (has_number or not words.isdisjoint(_ORDINAL_WORDS)):
        return "dates"
    if _ORDINAL_DIGITS.search(both) or not words.isdisjoint(_ORDINAL_WORDS):
        return "ordinals"
    if _YEAR.search(both) and has_number:
        return "years"
    if has_number:
        return "numbers"
    if "'s" in both or "’s" in both:
        return "possessives"
    if _SPELLED.search(both):
        return "initialisms"
    return "abbreviations and spellings"


def rule_label(live_text: str, candidate_text: str) -> RuleLabel | None:
    """same_meaning with its reason when the two texts read the same after canonicalization, else None (the
    judge decides). Texts equal after the product's normalization are not differences and get None too."""
    if normalize(live_text) == normalize(candidate_text):
        return None
    if not same_text(live_text, candidate_text):
        return None
    spans = [(a, b) for a, b in differences(candidate_text, live_text) if a or b]
    rules = tuple(rule_of(a, b) for a, b in spans)
    parts = [f'{rule}: "{a}" = "{b}"' for rule, (a, b) in zip(rules, spans, strict=True)]
    shown = "; ".join(parts[:MAX_SPANS_IN_REASON]) + ("; …" if len(parts) > MAX_SPANS_IN_REASON else "")
    reason = (shown[:1].upper() + shown[1:] + ("" if shown.endswith("…") else ".")) if shown else "Same."
    return RuleLabel(SAME_MEANING, " ".join(reason.split()), rules)
