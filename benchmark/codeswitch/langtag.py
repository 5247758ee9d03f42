"""Word language tags from lingua-language-detector, for code-switched references that come without tags.

Pure (no Django). lingua ships its models in the wheel and runs offline. One detector is built per set of
languages and kept (building one takes well under a second; the models load on the first word, a few
seconds and ~170 MB for four languages).

How a word is tagged (`tag_words`):
1. Language-independent tokens get None: tokens with no letter (numbers, punctuation, "—"), tokens with a
   digit ("A4", "1.", "3pm"), e-mail addresses and web addresses, and all-capital acronyms of two or more
   letters ("VPN", "HR"). Names are not detected: "Laura" is tagged with whatever language it looks like.
2. Every other word (stripped of the punctuation around it) gets lingua's confidence for each language,
   restricted to the languages given; the confidences of a word sum to 1.
3. Smoothing: a single word is weak evidence ("me", "a", "on" exist in several languages), so each word's
   confidences are summed with its neighbours', weighted by distance: SMOOTHING_WEIGHTS = (1.0, 0.3, 0.1)
   means the word itself counts 1.0, the words next to it 0.3 each and the words two away 0.1 each.
   Neighbours are counted among the words that have confidences (None tokens are skipped) and stop at the
   ends of the list. The tag is the language with the highest sum (ties: the language listed first).
   The weights were chosen on the "tune" half of fixtures/codeswitch/hand_labelled.jsonl; see
   scripts/measure_langtag.py for the accuracy on the other half.

Short embedded words between matrix-language words are the hard case: smoothing fixes ambiguous function
words but can pull a single embedded word ("mi laptop no") towards the matrix language when lingua is unsure
of it.

Which languages a set of texts spans (`detect_languages`, for texts that come without any language, such as a
bank's flagged lines): every word is tagged as above over DETECTABLE_LANGUAGES, and a language counts when some
text holds MIN_RUN (4) consecutive words tagged with it. Mis-tags, a name or a short word lingua places in
another language, make short runs: on the English demo lines no run of another language is longer than two, on
500 lines of random English words and Irish names (transcriber_tests.actions.synthetic) none reaches four, while an
embedded span ("my laptop keeps crashing", "book a meeting room") or a whole line in another language does. An
embedded span of two or three words alone is not enough to call a set of texts bilingual.

Per-language WER of such texts (`language_wer`, a bank's flagged lines against a transcriber's texts): the
expected words tagged as above, with the code-switching metrics (benchmark.codeswitch.metrics).
"""

import re
from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache

from lingua import IsoCode639_1, LanguageDetector, LanguageDetectorBuilder

from .metrics import base_language, canonical_tag, per_language_errors, pooled_per_language_wer

SMOOTHING_WEIGHTS: tuple[float, ...] = (1.0, 0.3, 0.1)
# The languages `detect_languages` looks for: English and the languages of the code-switching benchmark's pairs,
# with the other large Western European languages callers use.
DETECTABLE_LANGUAGES: tuple[str, ...] = ("en", "es", "fr", "de", "it", "pt", "nl")
MIN_RUN = 4

_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")
_WEB = re.compile(r"@|://|^www\.", re.IGNORECASE)


def _iso_code(code: str) -> IsoCode639_1:
    try:
        return getattr(IsoCode639_1, code.upper())
    except AttributeError:
        raise ValueError(
            f"Unknown language code {code!r}: use ISO 639-1 codes such as 'en' or 'es'."
        ) from None


@lru_cache(maxsize=16)
def _detector(codes: tuple[str, ...]) -> LanguageDetector:
    return LanguageDetectorBuilder.from_iso_codes_639_1(*(_iso_code(c) for c in codes)).build()


def detector_for(languages: Sequence[str]) -> LanguageDetector:
    """The cached lingua detector for this set of languages (order and repeats do not matter)."""
    return _detector(tuple(sorted({code.lower() for code in languages})))


def word_core(token: str) -> str | None:
    """The part of a token lingua should see, or None when the token is language-independent."""
    if _WEB.search(token):
        return None
    core = _EDGE_PUNCTUATION.sub("", token)
    if not any(c.isalpha() for c in core) or any(c.isdigit() for c in core):
        return None
    letters = [c for c in core if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return None
    return core


def confidences(words: Sequence[str], languages: Sequence[str]) -> list[dict[str, float] | None]:
    """lingua's confidence per language (ISO 639-1 codes) for each word; None for language-independent ones."""
    codes = [code.lower() for code in languages]
    if not codes:
        raise ValueError("Give at least one language to tag words with.")
    for code in codes:
        _iso_code(code)
    cores = [word_core(w) for w in words]
    if len(set(codes)) == 1:
        return [None if core is None else {codes[0]: 1.0} for core in cores]
    key = tuple(sorted(set(codes)))
    result: list[dict[str, float] | None] = []
    for core in cores:
        if core is None:
            result.append(None)
            continue
        values = dict(zip(key, _word_confidences(key, core), strict=True))
        result.append({code: values[code] for code in codes})
    return result


@lru_cache(maxsize=50_000)
def _word_confidences(codes: tuple[str, ...], core: str) -> tuple[float, ...]:
    """lingua's confidences of one word over sorted codes, remembered: words repeat across lines and pages."""
    values = {
        c.language.iso_code_639_1.name.lower(): c.value
        for c in detector_for(codes).compute_language_confidence_values(core)
    }
    return tuple(values.get(code, 0.0) for code in codes)


def tag_words(
    words: Sequence[str], languages: Sequence[str], *, weights: Sequence[float] = SMOOTHING_WEIGHTS
) -> list[str | None]:
    """One of `languages` (as metrics.canonical_tag writes it: "es", "fr-CA") or None per word; see the module
    docstring. A tag with a region is detected as its language ("fr-CA" as French), so the languages given
    must be different languages. `weights=(1.0,)` turns smoothing off. Raises ValueError on an unknown or
    missing language code."""
    codes = list(dict.fromkeys(canonical_tag(code) for code in languages))
    base = {code: base_language(code) for code in codes}
    if len(set(base.values())) < len(codes):
        raise ValueError(f"Give different languages to tag words with, not {', '.join(codes)}.")
    scores = confidences(words, list(base.values()))
    tagged = [i for i, s in enumerate(scores) if s is not None]
    tags: list[str | None] = [None] * len(words)
    for j, i in enumerate(tagged):
        total = dict.fromkeys(codes, 0.0)
        for distance, weight in enumerate(weights):
            for k in {j - distance, j + distance}:
                if 0 <= k < len(tagged):
                    found = scores[tagged[k]]
                    for code in codes:
                        total[code] += weight * found[base[code]]
        tags[i] = max(codes, key=total.__getitem__)
    return tags


def load_models() -> None:
    """Load lingua's models for DETECTABLE_LANGUAGES now (a few seconds and about 200 MB, once per process)
    rather than on the first words a request asks about."""
    detect_languages(["the language models load on the first words they see"])


def detect_languages(
    texts, languages: Sequence[str] = DETECTABLE_LANGUAGES, *, min_run: int = MIN_RUN
) -> list[str]:
    """The languages the texts span, in order of first appearance: those with `min_run` consecutive words
    tagged with them in some text (language-independent words neither break nor extend a run). See the module
    docstring."""
    found: list[str] = []
    for text in texts:
        run_tag, run = None, 0
        for tag in tag_words(text.split(), languages):
            if tag is None:
                continue
            run = run + 1 if tag == run_tag else 1
            run_tag = tag
            if run >= min_run and tag not in found:
                found.append(tag)
    return found


# ---------------------------------------------------------------- texts in several languages (a bank's flagged lines)


def language_wer(languages, pairs) -> dict:
    """Per-language WER of (expected, hypothesis) texts whose expected words are in `languages` (ISO 639-1
    codes, e.g. those detect_languages found in them): {lang: (wer, words)}, pooled over the pairs.

    The expected texts' words are tagged with `tag_words` over `languages` (lingua loads its models on first
    use). Insertions are left out, as in every per-language WER. Languages with no words are absent."""
    languages = list(languages)
    counts = [
        per_language_errors(expected, tag_words(expected.split(), languages), hypothesis)
        for expected, hypothesis in pairs
    ]
    pooled = pooled_per_language_wer(counts)
    words: dict = defaultdict(int)
    for c in counts:
        for lang, e in c.items():
            words[lang] += e.words
    return {lang: (pooled[lang], words[lang]) for lang in pooled}
