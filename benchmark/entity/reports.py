"""The numbers benchmark pages and the API show, read from stored SpanHit rows (no matching happens here).

Every function runs a fixed number of queries, whatever the number of runs or spans. Accuracies are
fractions (0..1); `tiers` is "A" (the default and the headline), "B" or "AB".
"""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Q

from ..models import BenchmarkRun, Hypothesis, SpanHit
from ..plural import counted
from . import actions, scoring


@dataclass(frozen=True)
class Headline:
    """ "entity accuracy, MLCommons_TestPortion, tier A, n=1086": the figure a run is quoted by."""

    run_id: int
    subset: str | None  # None: the dataset has no MLCommons subset, the figure covers every span
    tiers: str
    found: int
    n: int

    @property
    def accuracy(self) -> float | None:
        return self.found / self.n if self.n else None

    @property
    def text(self) -> str:
        return scoring.headline_text(self.subset, self.tiers, self.n, self.accuracy)


@dataclass(frozen=True)
class TypeRow:
    type: str
    by_subset: tuple[scoring.Accuracy, ...]  # in TypeTable.subsets order; n == 0 where the type is absent
    overall: scoring.Accuracy


@dataclass(frozen=True)
class TypeTable:
    tiers: str
    subsets: tuple[str, ...]
    rows: tuple[TypeRow, ...]


@dataclass(frozen=True)
class SubsetGap:
    """The headline (MLCommons) subset against the others pooled. `gap_points` = other - headline, in
    percentage points: a large positive gap is a lead on public-benchmark audio that independent audio
    does not confirm."""

    headline: scoring.Accuracy
    other: scoring.Accuracy

    @property
    def gap_points(self) -> float | None:
        if self.headline.accuracy is None or self.other.accuracy is None:
            return None
        return 100 * (self.other.accuracy - self.headline.accuracy)


# Columns of the span diff between two runs (the compare page's download and `benchmark_score --compare`).
DIFF_COLUMNS = [
    "span_key",
    "clip_id",
    "subset",
    "span",
    "type",
    "tier",
    "found_by_run",
    "missed_by_run",
    "missing_run_heard",
]


@dataclass(frozen=True)
class RunDiff:
    run_a: int
    run_b: int | str  # the other run's id, or the name of the hits CSV compared with
    tiers: str
    diff: scoring.SpanDiff
    heard_a: dict  # clip_id -> hypothesis text of run A (clips in the diff only)
    heard_b: dict

    def sides(self):
        """(spans, run that found them, run that missed them, what the missing run heard), A's then B's."""
        return (
            (self.diff.only_a, self.run_a, self.run_b, self.heard_b),
            (self.diff.only_b, self.run_b, self.run_a, self.heard_a),
        )

    def csv_rows(self):
        """The rows under DIFF_COLUMNS: each span one run found and the other missed."""
        for spans, finder, misser, heard in self.sides():
            for r in spans:
                yield [
                    r.span_id,
                    r.clip_id,
                    r.subset,
                    r.text,
                    r.type,
                    r.tier,
                    finder,
                    misser,
                    heard.get(r.clip_id) or "",
                ]


def _tiers(tiers: str) -> tuple[str, list[str]]:
    wanted = scoring.tier_set(tiers)
    return "".join(sorted(wanted)), sorted(wanted)


def _subset_counts(run_ids, tiers: str) -> dict:
    """{run_id: {subset: (found, n)}} in one query."""
    _, wanted = _tiers(tiers)
    rows = (
        SpanHit.objects.filter(run_id__in=list(run_ids), span__tier__in=wanted)
        .values("run_id", "span__clip__subset")
        .annotate(n=Count("id"), found=Count("id", filter=Q(found=True)))
        .values_list("run_id", "span__clip__subset", "found", "n")
    )
    result: dict = defaultdict(dict)
    for run_id, subset, found, n in rows:
        result[run_id][subset] = (found, n)
    return result


def _headline_from(run_id: int, counts: dict, tiers: str) -> Headline:
    subset = scoring.headline_subset_of(counts)
    if subset is None:
        found = sum(f for f, _ in counts.values())
        n = sum(n for _, n in counts.values())
    else:
        found, n = counts[subset]
    return Headline(run_id, subset, tiers, found, n)


def headlines(runs, tiers: str = "A") -> dict[int, Headline]:
    """The headline figure of each scored run given (runs or ids); unscored runs are left out. One query."""
    label, _ = _tiers(tiers)
    ids = [getattr(r, "pk", r) for r in runs]
    counts = _subset_counts(ids, tiers)
    return {run_id: _headline_from(run_id, counts[run_id], label) for run_id in ids if run_id in counts}


def headline(run, tiers: str = "A") -> Headline | None:
    return headlines([run], tiers).get(run.pk)


def run_list(dataset=None, tiers: str = "A", limit: int = 100) -> list[tuple[BenchmarkRun, Headline | None]]:
    """Benchmark runs, newest first, each with its headline (None until scored). Two queries."""
    runs = BenchmarkRun.objects.select_related("dataset", "transcriber").order_by("-created_at", "-id")
    if dataset is not None:
        runs = runs.filter(dataset=dataset)
    runs = list(runs[:limit])
    figures = headlines(runs, tiers)
    return [(run, figures.get(run.pk)) for run in runs]


def type_table(run, tiers: str = "A") -> TypeTable:
    """Entity accuracy per type, per subset and over all subsets. One query."""
    label, wanted = _tiers(tiers)
    rows = (
        SpanHit.objects.filter(run=run, span__tier__in=wanted)
        .values("span__type", "span__clip__subset")
        .annotate(n=Count("id"), found=Count("id", filter=Q(found=True)))
        .values_list("span__type", "span__clip__subset", "found", "n")
    )
    cells: dict = defaultdict(dict)
    subsets = set()
    for type_, subset, found, n in rows:
        cells[type_][subset] = (found, n)
        subsets.add(subset)
    ordered = tuple(sorted(subsets, key=lambda s: (scoring.headline_subset_of([s]) is None, s)))
    table = []
    for type_ in sorted(cells):
        per = tuple(scoring.Accuracy(s, *cells[type_].get(s, (0, 0))) for s in ordered)
        overall = scoring.Accuracy(type_, sum(a.found for a in per), sum(a.n for a in per))
        table.append(TypeRow(type_, per, overall))
    return TypeTable(label, ordered, tuple(table))


def subset_gap(run, tiers: str = "A") -> SubsetGap | None:
    """MLCommons against the other subsets; None when the run is unscored or has no MLCommons subset."""
    counts = _subset_counts([run.pk], tiers).get(run.pk)
    if not counts:
        return None
    headline_subset = scoring.headline_subset_of(counts)
    if headline_subset is None:
        return None
    others = [s for s in counts if s != headline_subset]
    other = scoring.Accuracy(
        " + ".join(sorted(others)) or "none",
        sum(counts[s][0] for s in others),
        sum(counts[s][1] for s in others),
    )
    return SubsetGap(scoring.Accuracy(headline_subset, *counts[headline_subset]), other)


def _span_results(run, wanted) -> list[scoring.SpanResult]:
    rows = (
        SpanHit.objects.filter(run=run, span__tier__in=wanted)
        .order_by("span__clip_id", "span__index")
        .values_list(
            "span__clip__clip_id",
            "span__index",
            "span__clip__subset",
            "span__text",
            "span__type",
            "span__tier",
            "found",
            "matcher_version",
        )
    )
    return [
        scoring.SpanResult(actions.span_key(clip_id, index), clip_id, subset, text, type_, tier, found, True)
        for clip_id, index, subset, text, type_, tier, found, _ in rows
    ]


def span_diff(run_a, run_b, tiers: str = "A") -> RunDiff:
    """Span by span, what run A found and run B missed, and the reverse. Both runs must be scored, on one
    dataset, with one matcher version (ValueError otherwise). Four queries."""
    _, wanted = _tiers(tiers)
    if run_a.dataset_id != run_b.dataset_id:
        raise ValueError(
            f"Runs {run_a.pk} and {run_b.pk} are on different datasets; spans cannot be compared."
        )
    for run in (run_a, run_b):
        if not run.scored_at:
            raise ValueError(f"Run {run.pk} is not scored yet.")
    if run_a.matcher_version != run_b.matcher_version:
        raise ValueError(
            f"Run {run_a.pk} was scored with matcher {run_a.matcher_version} and run {run_b.pk} with "
            f"{run_b.matcher_version}: score both again with the same matcher before comparing."
        )
    found_b = {r.span_id: r.found for r in _span_results(run_b, wanted)}
    return _diff(run_a, run_b.pk, found_b, lambda clips: _heard(run_b, clips), tiers)


def span_diff_with_file(run_a, hits: actions.HitsFile, tiers: str = "A") -> RunDiff:
    """Span by span, what run A found and the run a hits CSV describes missed, and the reverse (the dataset
    card's `--compare reference/<run>.hits.csv`). Run A must be scored; every span of the tiers it scored must be
    in the file (ValueError otherwise: a file of another dataset). The file says nothing of the matcher that
    scored it. Three queries."""
    if not run_a.scored_at:
        raise ValueError(f"Run {run_a.pk} is not scored yet.")
    return _diff(run_a, hits.name, hits.found, lambda clips: hits.heard, tiers)


def _diff(run_a, name_b, found_b: dict, heard_b, tiers: str) -> RunDiff:
    label, wanted = _tiers(tiers)
    results_a = _span_results(run_a, wanted)
    missing = [r.span_id for r in results_a if r.span_id not in found_b]
    if missing:
        raise ValueError(
            f"{counted(len(missing), 'span')} run {run_a.pk} scored {'is' if len(missing) == 1 else 'are'} "
            f"not in {_named(name_b)} (the first: "
            f"{missing[0]}): is it a run on dataset {run_a.dataset}?"
        )
    diff = scoring.diff_spans(results_a, found_b)
    clips = {r.clip_id for r in diff.only_a + diff.only_b}
    return RunDiff(run_a.pk, name_b, label, diff, _heard(run_a, clips), heard_b(clips))


def _named(name_b) -> str:
    return f"run {name_b}" if isinstance(name_b, int) else name_b


def _heard(run, clips) -> dict:
    """clip_id -> what the run heard, on these clips."""
    return dict(
        Hypothesis.objects.filter(run=run, clip__clip_id__in=clips, status=Hypothesis.DONE).values_list(
            "clip__clip_id", "text"
        )
    )


@dataclass(frozen=True)
class LatestRun:
    """A transcriber's latest scored run, with what its page says about the dataset it ran on."""

    run_id: int
    dataset_clips: int
    dataset_source_files: list
    headline: Headline


def latest_headlines(transcriber_ids, dataset=None) -> dict[int, LatestRun]:
    """{transcriber id: its latest scored run and that run's headline (tier A, MLCommons where the dataset has
    it)}, on `dataset` when given, else on any dataset. Transcribers without a scored run are left out (and so
    is a run with no tier A span). Two queries."""
    runs = BenchmarkRun.objects.filter(transcriber_id__in=list(transcriber_ids), scored_at__isnull=False)
    if dataset is not None:
        runs = runs.filter(dataset=dataset)
    latest: dict[int, tuple] = {}
    rows = runs.order_by("-scored_at", "-id").values_list(
        "transcriber_id", "id", "dataset__clip_count", "dataset__source_files"
    )
    for transcriber_id, *run in rows:
        latest.setdefault(transcriber_id, run)
    figures = headlines([run_id for run_id, _, _ in latest.values()])
    return {
        transcriber_id: LatestRun(run_id, clips, source_files, figures[run_id])
        for transcriber_id, (run_id, clips, source_files) in latest.items()
        if run_id in figures and figures[run_id].n
    }


def scored_since(moment) -> list[tuple[int, object]]:
    """(transcriber id, scored at) of the runs scored after `moment`. One query."""
    return list(BenchmarkRun.objects.filter(scored_at__gt=moment).values_list("transcriber_id", "scored_at"))


def entity_accuracy_by_transcriber(transcriber_ids, dataset=None) -> dict[int, tuple[float | None, int, int]]:
    """{transcriber id: (headline entity accuracy, n, run id)} from each transcriber's latest scored run
    (see latest_headlines). Two queries. The product reads benchmark.selectors.entity_headlines instead, which
    also says whether the figure comes from the packaged fixture."""
    return {
        transcriber_id: (latest.headline.accuracy, latest.headline.n, latest.run_id)
        for transcriber_id, latest in latest_headlines(transcriber_ids, dataset).items()
    }


def hits_csv_for_run(run) -> str:
    """The per-span hits CSV of a scored run, from stored rows (every tier). Three queries."""
    results = _span_results(run, ["A", "B"])
    transcribed = dict(Hypothesis.objects.filter(run=run).values_list("clip__clip_id", "status"))
    results = [
        scoring.SpanResult(
            r.span_id,
            r.clip_id,
            r.subset,
            r.text,
            r.type,
            r.tier,
            r.found,
            transcribed.get(r.clip_id) == Hypothesis.DONE,
        )
        for r in results
    ]
    return actions.hits_csv(results, actions.run_hypotheses(run))
