"""Figures of a code-switched dataset, for its report page and downloads. (Per-language WER of texts in
several languages, a bank's flagged lines, is benchmark.codeswitch.langtag.language_wer.)

    report = dataset_report(dataset)            # a fixed number of queries, whatever the size
    pictures.report_pictures(report)            # its server-rendered pictures (benchmark.codeswitch.pictures)
    csv_rows(dataset), report_json(report)      # downloads

One row per run (system and language hint) and language pair:
- WER per condition, pooled over the clips the system transcribed: sum of (S+D+I) / sum of reference words.
- Per-language WER on the code-switched clips: substitutions and deletions charged to the language of the
  reference word, divided by that language's word count; insertions have no reference word and are left out
  (they count in the overall WER).
- Code-switching cost: mean over utterances of WER(code-switched) − WER(monolingual), once against the
  matrix language and once against English, over the utterances transcribed in both conditions.
- Where errors fall on the code-switched clips: errors / words on matrix-language and embedded-language words.
- Semantic WER and answer error rate on the code-switched clips, from the judgements under the current
  prompt versions (failed judge calls left out and counted); "judge not configured" without a key and
  without stored judgements.
- The two-part model (benchmark.codeswitch.stats) over the code-switched clips of the pair only (its n is
  shown): logistic regression of any error and least squares of WER on the clips with an error, on switch
  points, the Code-Mixing Index as the share of words outside the matrix language, and length in words.
  The Gambäck–Das index (with its switch-point term) is a descriptive column of the CSV only.
"""

import json
from collections import defaultdict
from dataclasses import dataclass, field

from ..caution import SMALL_N, outsized, over_100_caution
from ..models import CsJudgement, CsResult, CsUtterance
from .judge import (
    ANSWERS_PROMPT_VERSION,
    NOT_CONFIGURED,
    QUESTIONS_PROMPT_VERSION,
    SEMANTIC_PROMPT_VERSION,
    judge_configured,
)
from .metrics import (
    ErrorLocation,
    LanguageErrors,
    SwitchingCost,
    code_mixing_index,
    codeswitch_cost_by_utterance,
    pool_error_locations,
    pooled_per_language_wer,
    split_pair,
)
from .stats import PartFit, TwoPartModel, min_utterances, predictor_table, two_part_model

CONDITIONS = [c for c, _ in CsUtterance.CONDITIONS]
CS, L2, EN = CsUtterance.CODE_SWITCHED, CsUtterance.MONO_MATRIX, CsUtterance.MONO_ENGLISH
MIN_MODEL_CLIPS = min_utterances()  # fewer code-switched clips (with an error, for its second part): no fit


@dataclass(frozen=True)
class ModelCell:
    """One part of a row's two-part model as the summary table shows it: "fitted" (its coefficients follow),
    "too little data" (fewer than MIN_MODEL_CLIPS clips, whatever else), or "not fitted" with the reason."""

    status: str
    n: int
    message: str = ""

    @classmethod
    def of(cls, part: PartFit | None) -> "ModelCell":
        if part is None or part.n < MIN_MODEL_CLIPS:
            return cls("too little data", part.n if part else 0)
        if part.fitted:
            return cls("fitted", part.n)
        return cls("not fitted", part.n, part.message or "")


@dataclass(frozen=True)
class Judged:
    """A judge figure pooled over clips: `rate` = errors / total; `zero_share`: clips with no error."""

    rate: float | None
    clips: int
    zero_share: float | None
    failed: int


@dataclass(frozen=True)
class Row:
    run_id: int
    label: str
    system: str
    language_hint: bool
    pair: str
    clips: dict  # condition -> clips transcribed
    failed: int
    wer: dict  # condition -> pooled WER or None
    per_language: dict  # language -> pooled WER (code-switched clips)
    cost_vs_matrix: SwitchingCost
    cost_vs_english: SwitchingCost
    location: ErrorLocation
    semantic: Judged | None
    answers: Judged | None
    model: TwoPartModel | None

    @property
    def name(self) -> str:
        return f"{self.label} · {self.pair}"

    @property
    def by_condition(self) -> list[tuple[float | None, int]]:
        """(pooled WER, clips transcribed) per condition, in CONDITIONS order."""
        return [(self.wer[c], self.clips[c]) for c in CONDITIONS]

    @property
    def costs(self) -> tuple[SwitchingCost, SwitchingCost]:
        """(against the matrix language, against English)."""
        return self.cost_vs_matrix, self.cost_vs_english

    @property
    def pair_languages(self) -> tuple[str, str]:
        return split_pair(self.pair)

    @property
    def model_cells(self) -> tuple[ModelCell, ModelCell]:
        """(any error, error size) of the two-part model; both "too little data" when it was not fitted."""
        if self.model is None:
            return ModelCell("too little data", self.clips[CS]), ModelCell("too little data", 0)
        model = self.model
        if model.with_errors == 0 and model.n >= MIN_MODEL_CLIPS:  # enough clips, none with an error
            return ModelCell.of(model.any_error), ModelCell("not fitted", 0, model.error_size.message or "")
        return ModelCell.of(model.any_error), ModelCell.of(model.error_size)

    @property
    def fitted_parts(self) -> list[PartFit]:
        """The parts of the two-part model fitted on enough clips: the ones whose coefficients the page shows."""
        if self.model is None:
            return []
        cells = self.model_cells
        return [part for part, cell in zip(self.model.parts, cells, strict=True) if cell.status == "fitted"]

    def outsized_ns(self) -> list[int]:
        """The clip counts of this row's figures over 100% on too few clips (WER by condition, costs)."""
        figures = [*self.by_condition]
        figures += [(c.mean_delta, c.paired) for c in (self.cost_vs_matrix, self.cost_vs_english)]
        return [n for value, n in figures if outsized(value, n)]

    @property
    def judge_failed(self) -> int:
        return sum(judged.failed for judged in (self.semantic, self.answers) if judged is not None)

    @property
    def matrix_wer(self) -> float | None:
        loc = self.location
        return loc.matrix_errors / loc.matrix_words if loc.matrix_words else None

    @property
    def embedded_wer(self) -> float | None:
        loc = self.location
        return loc.embedded_errors / loc.embedded_words if loc.embedded_words else None


@dataclass(frozen=True)
class Report:
    dataset: object
    judge: str  # "configured", "stored" (judgements exist, no key now) or "not configured"
    rows: list = field(default_factory=list)
    languages: list = field(default_factory=list)
    problems: list = field(default_factory=list)

    @property
    def judge_shown(self) -> bool:
        return self.judge != "not configured"

    @property
    def wer_caution(self) -> str | None:
        """The one caution of the WER and cost table, when a figure in it is over 100% on too few clips."""
        return over_100_caution(n for row in self.rows for n in row.outsized_ns())

    @property
    def judge_caution(self) -> str | None:
        """The same for semantic WER (hallucinated words count there too)."""
        return over_100_caution(
            row.semantic.clips
            for row in self.rows
            if row.semantic is not None and outsized(row.semantic.rate, row.semantic.clips)
        )

    @property
    def model_too_little(self) -> bool:
        """Whether any row's two-part model lacks the clips for a part (shown as — with one explanation)."""
        return any(cell.status == "too little data" for row in self.rows for cell in row.model_cells)

    @property
    def min_model_clips(self) -> int:
        return MIN_MODEL_CLIPS

    @property
    def small_n(self) -> int:
        return SMALL_N


def _judged(judgements: list) -> Judged:
    good = [j for j in judgements if not j.error]
    errors, total = sum(j.errors for j in good), sum(j.total for j in good)
    zero = sum(j.errors == 0 for j in good)
    return Judged(
        errors / total if total else None,
        len(good),
        zero / len(good) if good else None,
        len(judgements) - len(good),
    )


def dataset_report(dataset, *, fit_models: bool = True) -> Report:
    """Every figure of the dataset's runs; 3 queries."""
    results = list(
        CsResult.objects.filter(run__dataset=dataset)
        .select_related("run", "utterance")
        .order_by("run__created_at", "run_id", "utterance__line")
    )
    current = {
        CsJudgement.SEMANTIC: SEMANTIC_PROMPT_VERSION,
        CsJudgement.ANSWERS: ANSWERS_PROMPT_VERSION,
    }
    judgements: dict = defaultdict(list)
    for j in CsJudgement.objects.filter(result__run__dataset=dataset):
        if j.prompt_version == current[j.kind]:
            judgements[(j.result_id, j.kind)].append(j)
    problems = list(dataset.problems.all())
    if judge_configured():
        judge = "configured"
    else:
        judge = "stored" if judgements else "not configured"

    groups: dict = defaultdict(list)
    for r in results:
        groups[(r.run_id, r.utterance.pair)].append(r)
    rows, languages = [], []
    for (_, pair), items in groups.items():
        run = items[0].run
        done = [r for r in items if r.status == CsResult.DONE and r.wer is not None]
        by_condition = {c: [r for r in done if r.utterance.condition == c] for c in CONDITIONS}
        cs = by_condition[CS]
        per_language = pooled_per_language_wer(
            {lang: LanguageErrors(e, w) for lang, (e, w) in r.per_language.items()} for r in cs
        )
        for lang in per_language:
            if lang not in languages:
                languages.append(lang)
        wers = {c: {r.utterance.utterance_id: r.wer for r in by_condition[c]} for c in CONDITIONS}
        semantic = answers = None
        if judge != "not configured":
            semantic = _judged([j for r in cs for j in judgements[(r.pk, CsJudgement.SEMANTIC)]])
            answers = _judged([j for r in cs for j in judgements[(r.pk, CsJudgement.ANSWERS)]])
        model = None
        if fit_models and cs:
            predictors = predictor_table(
                [r.utterance.tags for r in cs], [r.utterance.matrix_language for r in cs]
            )
            model = two_part_model([r.wer for r in cs], predictors)
        rows.append(
            Row(
                run_id=run.pk,
                label=run.label,
                system=run.system_name,
                language_hint=run.language_hint,
                pair=pair,
                clips={c: len(by_condition[c]) for c in CONDITIONS},
                failed=sum(r.status == CsResult.FAILED for r in items),
                wer={c: _pooled(by_condition[c]) for c in CONDITIONS},
                per_language=per_language,
                cost_vs_matrix=codeswitch_cost_by_utterance(wers[CS], wers[L2]),
                cost_vs_english=codeswitch_cost_by_utterance(wers[CS], wers[EN]),
                location=pool_error_locations(ErrorLocation(**r.location) for r in cs),
                semantic=semantic,
                answers=answers,
                model=model,
            )
        )
    return Report(dataset, judge, rows, languages, problems)


def _pooled(results) -> float | None:
    errors = sum(r.substitutions + r.deletions + r.insertions for r in results)
    words = sum(r.reference_words for r in results)
    return errors / words if words else None


# ---------------------------------------------------------------- downloads

CSV_COLUMNS = [
    "run_id", "system", "model", "language_hint", "utterance_id", "pair", "condition", "status", "reference",
    "hypothesis", "substitutions", "deletions", "insertions", "reference_words", "wer", "per_language_wer",
    "matrix_errors", "embedded_errors", "switch_points", "code_mixing_index", "gamback_das_index_descriptive",
    "tags_source", "detected_language",
    "semantic_wer", "semantic_reasoning", "answer_error_rate", "normalizer_version", "error",
]  # fmt: skip


def _round(value, places=4):
    return "" if value is None else round(value, places)


def csv_rows(dataset):
    """One row per run and clip, for the CSV download (2 queries)."""
    judgements = {
        (j.result_id, j.kind): j
        for j in CsJudgement.objects.filter(result__run__dataset=dataset)
        if j.prompt_version in (SEMANTIC_PROMPT_VERSION, ANSWERS_PROMPT_VERSION)
    }
    results = (
        CsResult.objects.filter(run__dataset=dataset)
        .select_related("run", "utterance")
        .order_by("run__created_at", "run_id", "utterance__line")
    )
    for r in results:
        u, run = r.utterance, r.run
        semantic = judgements.get((r.pk, CsJudgement.SEMANTIC))
        answers = judgements.get((r.pk, CsJudgement.ANSWERS))
        per_language = {lang: round(e / w, 4) for lang, (e, w) in r.per_language.items() if w}
        yield [
            run.pk, run.system_name, run.model, int(run.language_hint), u.utterance_id, u.pair, u.condition,
            r.status, u.reference, r.text, r.substitutions, r.deletions, r.insertions, r.reference_words,
            _round(r.wer), json.dumps(per_language), r.location.get("matrix_errors", ""),
            r.location.get("embedded_errors", ""), u.switch_points,
            round(code_mixing_index(u.tags, u.matrix_language), 2), round(u.cmi, 2), u.tags_source,
            r.detected_language, _round(semantic.rate if semantic else None),
            semantic.reasoning if semantic else "", _round(answers.rate if answers else None),
            r.normalizer_version, r.error,
        ]  # fmt: skip


def _model_json(model: TwoPartModel | None):
    if model is None:
        return None

    def part(p):
        return {
            "part": p.part,
            "n": p.n,
            "message": p.message,
            "notes": list(p.notes),
            "coefficients": [
                {"name": c.name, "estimate": c.estimate, "std_error": c.std_error, "p_value": c.p_value}
                for c in p.coefficients
            ],
        }

    return {"n": model.n, "with_errors": model.with_errors, "any_error": part(model.any_error),
            "error_size": part(model.error_size)}  # fmt: skip


def _cost_json(cost: SwitchingCost):
    return {"mean_delta_wer": cost.mean_delta, "paired": cost.paired, "unpaired": cost.unpaired}


def _judged_json(judged: Judged | None, judge: str):
    if judged is None:
        return NOT_CONFIGURED if judge == "not configured" else None
    return {"rate": judged.rate, "clips": judged.clips, "zero_error_share": judged.zero_share,
            "failed": judged.failed}  # fmt: skip


def report_json(report: Report) -> dict:
    d = report.dataset
    return {
        "dataset": {
            "name": d.name,
            "source_file": d.source_file,
            "sha256": d.source_sha256,
            "clips": d.utterance_count,
            "excluded": d.excluded_count,
            "packaged_fixture": d.is_fixture,
        },  # fmt: skip
        "excluded": [
            {"line": p.line, "utterance_id": p.utterance_id, "reason": p.reason} for p in report.problems
        ],
        "notes": [
            "WER pooled: sum of (S+D+I) / sum of reference words, OnCore normalization.",
            "Per-language WER charges substitutions and deletions to the reference word's language; insertions "
            "are left out of it but counted in the overall WER.",
        ],
        "prompt_versions": {
            "semantic": SEMANTIC_PROMPT_VERSION,
            "questions": QUESTIONS_PROMPT_VERSION,
            "answers": ANSWERS_PROMPT_VERSION,
        },  # fmt: skip
        "rows": [
            {
                "run_id": row.run_id,
                "system": row.system,
                "language_hint": row.language_hint,
                "pair": row.pair,
                "clips": row.clips,
                "failed": row.failed,
                "wer": row.wer,
                "per_language_wer": row.per_language,
                "cost_vs_matrix": _cost_json(row.cost_vs_matrix),
                "cost_vs_english": _cost_json(row.cost_vs_english),
                "error_location": {**vars_of(row.location), "embedded_share": row.location.embedded_share},
                "semantic_wer": _judged_json(row.semantic, report.judge),
                "answer_error_rate": _judged_json(row.answers, report.judge),
                "two_part_model": _model_json(row.model),
            }
            for row in report.rows
        ],
    }


def vars_of(location: ErrorLocation) -> dict:
    return {name: getattr(location, name) for name in ErrorLocation.__slots__}
