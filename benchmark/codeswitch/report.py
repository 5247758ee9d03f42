"""Figures of a code-switched dataset, for its report page and downloads, and per-language WER of texts in
several languages (a bank's flagged lines).

    report = dataset_report(dataset)            # a fixed number of queries, whatever the size
    heat_map_svg(...), cost_bars_svg(...)      # server-rendered pictures
    csv_rows(dataset), report_json(report)      # downloads
    language_wer(languages, pairs)              # {lang: (wer, words)} of texts in those languages

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
import math
from collections import defaultdict
from dataclasses import dataclass, field
from html import escape

from oncore.templatetags.oncore_tags import percent

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
    per_language_errors,
    pool_error_locations,
    pooled_per_language_wer,
)
from .stats import TwoPartModel, predictor_table, two_part_model

CONDITIONS = [c for c, _ in CsUtterance.CONDITIONS]
CS, L2, EN = CsUtterance.CODE_SWITCHED, CsUtterance.MONO_MATRIX, CsUtterance.MONO_ENGLISH


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


# ---------------------------------------------------------------- pictures


def _color(value: float | None) -> str:
    """White (0) through orange to red (1 or more); grey when there is no figure."""
    if value is None:
        return "#eeeeee"
    t = max(0.0, min(value, 1.0))
    green_blue = int(255 - 200 * t), int(255 - 230 * t)
    return f"rgb(255,{green_blue[0]},{green_blue[1]})"


def heat_map_svg(title: str, row_labels: list, column_labels: list, values: list) -> str:
    """A table of coloured cells: values[i][j] (fractions, None for no figure) for row i, column j."""
    left, top, cell_w, cell_h = 260, 46, 90, 28
    width = left + cell_w * max(len(column_labels), 1) + 10
    height = top + cell_h * max(len(row_labels), 1) + 10
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<text x="4" y="16" font-weight="bold">{escape(title)}</text>',
    ]
    for j, column in enumerate(column_labels):
        x = left + j * cell_w + cell_w / 2
        parts.append(f'<text x="{x:.0f}" y="{top - 8}" text-anchor="middle">{escape(str(column))}</text>')
    for i, row in enumerate(row_labels):
        y = top + i * cell_h
        parts.append(f'<text x="{left - 8}" y="{y + 18}" text-anchor="end">{escape(str(row))}</text>')
        for j, value in enumerate(values[i]):
            x, figure = left + j * cell_w, percent(value, 0)
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{_color(value)}">'
                f"<title>{escape(str(row))}, {escape(str(column_labels[j]))}: {figure}</title></rect>"
                f'<text x="{x + cell_w / 2 - 1:.0f}" y="{y + 18}" text-anchor="middle">{figure}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def cost_bars_svg(title: str, labels: list, series: dict) -> str:
    """Horizontal bars around a zero line: for each label one bar per series ({name: [value or None]}),
    in WER points; positive (to the right) means code-switching costs accuracy."""
    names = list(series)
    colors = ["#d9822b", "#4a7ebb", "#6aa84f"]
    finite = [abs(v) for values in series.values() for v in values if v is not None and math.isfinite(v)]
    scale_max = max(finite + [0.05])
    left, top, bar_h, half = 260, 50, 14, 180
    group_h = bar_h * len(names) + 10
    width = left + 2 * half + 70
    height = top + group_h * max(len(labels), 1) + 10
    zero = left + half
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<text x="4" y="16" font-weight="bold">{escape(title)}</text>',
    ]
    for k, name in enumerate(names):
        x = left + k * 170
        parts.append(
            f'<rect x="{x}" y="26" width="10" height="10" fill="{colors[k % 3]}"/>'
            f'<text x="{x + 14}" y="35">{escape(name)}</text>'
        )
    parts.append(f'<line x1="{zero}" y1="{top - 4}" x2="{zero}" y2="{height - 6}" stroke="#333"/>')
    for i, label in enumerate(labels):
        y0 = top + i * group_h
        parts.append(
            f'<text x="{left - 8}" y="{y0 + bar_h + 2}" text-anchor="end">{escape(str(label))}</text>'
        )
        for k, name in enumerate(names):
            value = series[name][i]
            y = y0 + k * bar_h
            if value is None:
                parts.append(f'<text x="{zero + 4}" y="{y + bar_h - 3}" fill="#777">no pairs</text>')
                continue
            length = half * min(abs(value), scale_max) / scale_max
            x = zero if value >= 0 else zero - length
            text_x = zero + length + 4 if value >= 0 else zero - length - 4
            anchor = "start" if value >= 0 else "end"
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{length:.1f}" height="{bar_h - 2}" fill="{colors[k % 3]}">'
                f"<title>{escape(str(label))}, {escape(name)}: {value * 100:+.1f} points</title></rect>"
                f'<text x="{text_x:.1f}" y="{y + bar_h - 3}" text-anchor="{anchor}">{value * 100:+.1f}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def report_pictures(report: Report) -> dict:
    labels = [row.name for row in report.rows]
    return {
        "per_language": heat_map_svg(
            "Per-language WER, code-switched clips",
            labels,
            report.languages,
            [[row.per_language.get(lang) for lang in report.languages] for row in report.rows],
        ),
        "location": heat_map_svg(
            "Errors per word, matrix vs embedded language",
            labels,
            ["matrix", "embedded"],
            [[row.matrix_wer, row.embedded_wer] for row in report.rows],
        ),
        "cost": cost_bars_svg(
            "Code-switching cost: mean delta WER (points)",
            labels,
            {
                "vs matrix language": [row.cost_vs_matrix.mean_delta for row in report.rows],
                "vs English": [row.cost_vs_english.mean_delta for row in report.rows],
            },
        ),
    }


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


# ---------------------------------------------------------------- texts in several languages (a bank's flagged lines)


def language_wer(languages, pairs) -> dict:
    """Per-language WER of (expected, hypothesis) texts whose expected words are in `languages` (ISO 639-1
    codes, e.g. those langtag.detect_languages found in them): {lang: (wer, words)}, pooled over the pairs.

    The expected texts' words are tagged with benchmark.codeswitch.langtag over `languages` (lingua loads its
    models on first use). Insertions are left out, as in every per-language WER. Languages with no words are
    absent."""
    from .langtag import tag_words

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
