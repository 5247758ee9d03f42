"""Pure scoring core of the entity benchmark: span-level entity accuracy and pooled WER.

No Django here; the inputs are plain tuples and the results frozen dataclasses, so the same code scores a
run from the database (benchmark.entity.actions) and in the benchmark script (bench/score_benchmark.py).

- A span is found when `matcher.entity_found(span text, hypothesis)`. A clip without a hypothesis (the
  transcriber failed on it, or an imported file left it out) has all its spans counted as missed: n never
  shrinks because a system failed on hard clips. Such clips are counted in `Coverage`.
- Entity accuracy = found / n over the spans of the tiers asked for ("A" by default, "B", or "AB").
  Per subset, per entity type, and per subset and type; the headline is the subset whose name starts with
  "MLCommons" (the dataset card's advice), or every span when there is no such subset.
- WER is pooled over every transcribed clip: the sum of word errors over the sum of reference words,
  with transcriber_tests.lib.scoring's normalization. Clips whose reference has no words are left out of WER.
- Clips with zero entities are kept: they count for WER and are reported in `Coverage`.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from transcriber_tests.lib.scoring import NORMALIZER_VERSION, score_line

from . import matcher

HEADLINE_PREFIX = "MLCommons"
TIER_CHOICES = ("A", "B", "AB")


class ClipRow(NamedTuple):
    clip_id: str
    subset: str
    transcript: str
    hypothesis: str | None  # None when the clip has no hypothesis (failed or left out)


class SpanRow(NamedTuple):
    span_id: object  # anything hashable: a database id, or a (clip_id, index) pair
    clip_id: str
    text: str
    type: str
    tier: str


@dataclass(frozen=True, slots=True)
class SpanResult:
    span_id: object
    clip_id: str
    subset: str
    text: str
    type: str
    tier: str
    found: bool
    transcribed: bool  # whether the clip had a hypothesis


@dataclass(frozen=True, slots=True)
class Accuracy:
    """found / n over a group of spans; `accuracy` is a fraction, None when n == 0."""

    label: str
    found: int
    n: int

    @property
    def accuracy(self) -> float | None:
        return self.found / self.n if self.n else None


@dataclass(frozen=True, slots=True)
class Wer:
    """Pooled WER: errors / reference_words over `clips` transcribed clips; None when there are no words."""

    label: str
    errors: int
    reference_words: int
    clips: int

    @property
    def wer(self) -> float | None:
        return self.errors / self.reference_words if self.reference_words else None


@dataclass(frozen=True, slots=True)
class Coverage:
    clips: int
    transcribed: int
    without_hypothesis: int
    spans_on_clips_without_hypothesis: int  # of the tiers scored
    zero_entity_clips: int
    zero_entity_clips_transcribed: int
    empty_reference_clips: int  # left out of WER


@dataclass(frozen=True, slots=True)
class Scorecard:
    tiers: str
    headline_subset: str | None  # None: no MLCommons subset, the headline is every span
    headline: Accuracy
    overall: Accuracy
    by_subset: tuple[Accuracy, ...]
    by_type: tuple[Accuracy, ...]
    by_subset_type: tuple[tuple[str, Accuracy], ...]  # (subset, accuracy labelled with the type)
    by_tier: tuple[Accuracy, ...]  # A, B and AB over every subset, whatever `tiers` is
    wer: Wer
    wer_by_subset: tuple[Wer, ...]
    coverage: Coverage
    spans: tuple[SpanResult, ...]  # every span, every tier
    matcher_version: str
    normalizer_version: str

    @property
    def headline_text(self) -> str:
        return headline_text(self.headline_subset, self.tiers, self.headline.n, self.headline.accuracy)


def headline_text(subset: str | None, tiers: str, n: int, accuracy: float | None) -> str:
    """The sentence a run is quoted by: "entity accuracy, MLCommons_TestPortion, tier A, n=1086: 75.2%".
    The percentage is written as oncore's `pct` filter writes it ("n/a" without spans); this module stays
    free of Django, so it does not import that filter."""
    figure = "n/a" if accuracy is None else f"{100 * accuracy:.1f}%"
    return f"entity accuracy, {subset or 'all subsets'}, tier {tiers}, n={n}: {figure}"


def tier_set(tiers: str) -> frozenset:
    tiers = (tiers or "A").upper().replace("+", "")
    if tiers not in TIER_CHOICES:
        raise ValueError(f"Tiers must be one of {', '.join(TIER_CHOICES)}, not {tiers!r}.")
    return frozenset(tiers)


def headline_subset_of(subsets: Iterable[str]) -> str | None:
    """The subset the dataset card says to report: the first (sorted) whose name starts with MLCommons."""
    for subset in sorted(set(subsets)):
        if subset.startswith(HEADLINE_PREFIX):
            return subset
    return None


def match_spans(
    clips: Sequence[ClipRow],
    spans: Iterable[SpanRow],
    found: Callable[[str, str], bool] = matcher.entity_found,
) -> tuple[SpanResult, ...]:
    """Every span, matched against its clip's hypothesis. A span whose clip is not listed is a ValueError."""
    by_clip = {clip.clip_id: clip for clip in clips}
    results = []
    for span in spans:
        clip = by_clip.get(span.clip_id)
        if clip is None:
            raise ValueError(f"Span {span.span_id!r} belongs to clip {span.clip_id!r}, which is not listed.")
        hypothesis = clip.hypothesis
        hit = hypothesis is not None and found(span.text, hypothesis)
        results.append(
            SpanResult(
                span.span_id,
                span.clip_id,
                clip.subset,
                span.text,
                span.type,
                span.tier,
                hit,
                hypothesis is not None,
            )
        )
    return tuple(results)


def _tally(label_of, results) -> tuple[Accuracy, ...]:
    found: dict = defaultdict(int)
    n: dict = defaultdict(int)
    for result in results:
        key = label_of(result)
        n[key] += 1
        found[key] += result.found
    return tuple(Accuracy(key, found[key], n[key]) for key in sorted(n))


def _accuracy(label, results) -> Accuracy:
    return Accuracy(label, sum(r.found for r in results), len(results))


def pooled_wer(clips: Iterable[ClipRow]) -> tuple[Wer, tuple[Wer, ...], int]:
    """(WER over every transcribed clip, WER per subset, clips left out: their reference has no words)."""
    errors: dict = defaultdict(int)
    words: dict = defaultdict(int)
    counted: dict = defaultdict(int)
    empty = 0
    for clip in clips:
        if clip.hypothesis is None:
            continue
        try:
            score = score_line(clip.transcript, clip.hypothesis)
        except ValueError:
            empty += 1
            continue
        errors[clip.subset] += score.substitutions + score.deletions + score.insertions
        words[clip.subset] += score.reference_words
        counted[clip.subset] += 1
    per_subset = tuple(Wer(s, errors[s], words[s], counted[s]) for s in sorted(counted))
    total = Wer("all", sum(errors.values()), sum(words.values()), sum(counted.values()))
    return total, per_subset, empty


def score(
    clips: Sequence[ClipRow],
    spans: Sequence[SpanRow],
    tiers: str = "A",
    found: Callable[[str, str], bool] = matcher.entity_found,
    matcher_version: str = matcher.MATCHER_VERSION,
) -> Scorecard:
    """Score a run: clips with their hypotheses, and every annotated span of the dataset (all tiers)."""
    wanted = tier_set(tiers)
    tiers = "".join(sorted(wanted))
    results = match_spans(clips, spans, found)
    selected = [r for r in results if r.tier in wanted]
    headline_subset = headline_subset_of(c.subset for c in clips)
    if headline_subset is None:
        headline = _accuracy("all subsets", selected)
    else:
        headline = _accuracy(headline_subset, [r for r in selected if r.subset == headline_subset])

    subset_type = tuple(
        (a.label[0], Accuracy(a.label[1], a.found, a.n))
        for a in _tally(lambda r: (r.subset, r.type), selected)
    )
    by_tier = (
        _accuracy("A", [r for r in results if r.tier == "A"]),
        _accuracy("B", [r for r in results if r.tier == "B"]),
        _accuracy("AB", [r for r in results if r.tier in ("A", "B")]),
    )
    wer, wer_by_subset, empty_reference = pooled_wer(clips)

    entity_clips = {r.clip_id for r in results}
    without = {c.clip_id for c in clips if c.hypothesis is None}
    zero = [c for c in clips if c.clip_id not in entity_clips]
    coverage = Coverage(
        clips=len(clips),
        transcribed=len(clips) - len(without),
        without_hypothesis=len(without),
        spans_on_clips_without_hypothesis=sum(1 for r in selected if not r.transcribed),
        zero_entity_clips=len(zero),
        zero_entity_clips_transcribed=sum(1 for c in zero if c.hypothesis is not None),
        empty_reference_clips=empty_reference,
    )
    return Scorecard(
        tiers=tiers,
        headline_subset=headline_subset,
        headline=headline,
        overall=_accuracy("all subsets", selected),
        by_subset=_tally(lambda r: r.subset, selected),
        by_type=_tally(lambda r: r.type, selected),
        by_subset_type=subset_type,
        by_tier=by_tier,
        wer=wer,
        wer_by_subset=wer_by_subset,
        coverage=coverage,
        spans=results,
        matcher_version=matcher_version,
        normalizer_version=NORMALIZER_VERSION,
    )


@dataclass(frozen=True, slots=True)
class SpanDiff:
    """Span by span, what run A found that B missed, and the reverse. Rows are the spans' SpanResults in A."""

    only_a: tuple[SpanResult, ...]
    only_b: tuple[SpanResult, ...]
    both_found: int
    both_missed: int


def diff_spans(a: Iterable[SpanResult], b: Mapping[object, bool]) -> SpanDiff:
    """Compare run A's span results with run B's found flags by span id. Spans B lacks are a ValueError."""
    only_a, only_b = [], []
    both_found = both_missed = 0
    for result in a:
        if result.span_id not in b:
            raise ValueError(
                f"Span {result.span_id!r} was not scored in the other run: are they on one dataset?"
            )
        other = b[result.span_id]
        if result.found and not other:
            only_a.append(result)
        elif other and not result.found:
            only_b.append(result)
        elif result.found:
            both_found += 1
        else:
            both_missed += 1
    return SpanDiff(tuple(only_a), tuple(only_b), both_found, both_missed)


def summary_dict(card: Scorecard) -> dict:
    """The summary JSON: every figure of the scorecard, fractions rounded to 4 places."""

    def acc(a: Accuracy) -> dict:
        value = a.accuracy
        return {"found": a.found, "n": a.n, "accuracy": None if value is None else round(value, 4)}

    def wer(w: Wer) -> dict:
        value = w.wer
        return {
            "errors": w.errors,
            "reference_words": w.reference_words,
            "clips": w.clips,
            "wer": None if value is None else round(value, 4),
        }

    per_subset_type: dict = defaultdict(dict)
    for subset, a in card.by_subset_type:
        per_subset_type[subset][a.label] = acc(a)
    cov = card.coverage
    return {
        "headline": card.headline_text,
        "tiers": card.tiers,
        "headline_subset": card.headline_subset,
        "entity_accuracy": {
            "headline": acc(card.headline),
            "all_subsets": acc(card.overall),
            "by_subset": {a.label: acc(a) for a in card.by_subset},
            "by_type": {a.label: acc(a) for a in card.by_type},
            "by_subset_and_type": dict(per_subset_type),
            "by_tier_all_subsets": {a.label: acc(a) for a in card.by_tier},
        },
        "wer": {"all": wer(card.wer), "by_subset": {w.label: wer(w) for w in card.wer_by_subset}},
        "clips": {
            "total": cov.clips,
            "transcribed": cov.transcribed,
            "without_hypothesis": cov.without_hypothesis,
            "spans_on_clips_without_hypothesis": cov.spans_on_clips_without_hypothesis,
            "zero_entity_clips": cov.zero_entity_clips,
            "zero_entity_clips_transcribed": cov.zero_entity_clips_transcribed,
            "empty_reference_clips": cov.empty_reference_clips,
        },
        "rules": (
            "Span-level entity accuracy = spans found / spans (n) of the tiers named; spans on clips "
            "without a hypothesis count as missed. WER pooled over every transcribed clip = word errors / "
            "reference words, "
            "after lowercasing and removing punctuation (no number or spelling normalization)."
        ),
        "matcher_version": card.matcher_version,
        "normalizer_version": card.normalizer_version,
    }
