"""Which conditions predict errors on code-switched speech: the two-part model of
research/code-switching-metrics.md, fitted with statsmodels. Pure (no Django).

Per system and language pair, over its code-switched utterances only (monolingual clips would make the contrast
"code-switched or not" instead of "how much switching"; the report gives the n fitted):
1. "any error": logistic regression of (WER > 0) on the predictors;
2. "error size": ordinary least squares of WER on the same predictors, fitted only on the utterances with
   at least one error.
Predictors are named columns, one value per utterance: by default the ones the public benchmark names, built by
`predictor_table` from word language tags: the number of switch points, the Code-Mixing Index as the share of
words outside the utterance's matrix language (metrics.code_mixing_index: no switch-point term, so it does not
count the switches twice) and the utterance length in words. Add others as 0/1 columns, e.g. language_hint (1
when the run named the language). The public result to compare with: switch points predict whether an error
happens, the mixing density predicts how large it is.

Nothing here raises on awkward data. A part that cannot be fitted returns no coefficients and a `message`
saying why (no or too few utterances, every utterance with an error or none, perfect separation, no
convergence). A predictor that is constant, or a linear combination of the ones before it, is left out and
a `note` says so; a note also warns when there are fewer than 10 utterances (for the logistic part: of the
rarer outcome) per predictor. Programming errors (columns of different lengths) raise ValueError.
statsmodels is imported on the first fit (it takes seconds), not with this module.
"""

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..plural import counted
from .metrics import code_mixing_index, switch_points

PER_PREDICTOR = 10  # fewer utterances (of the rarer outcome, for the logistic part) per predictor: a note
DEFAULT_PREDICTORS = ("switch_points", "code_mixing_index", "words")  # the columns of predictor_table


def min_utterances(predictors: int = len(DEFAULT_PREDICTORS)) -> int:
    """The fewest utterances a part can be fitted on with this many predictors: one more than its terms (the
    intercept and the predictors). A part given fewer is "too little data" whatever else is wrong with it."""
    return predictors + 2


@dataclass(frozen=True, slots=True)
class Coefficient:
    """One term of a fitted part; the first term of every part is "intercept". Logistic estimates are
    log-odds (exp(estimate) is the odds ratio per unit of the predictor)."""

    name: str
    estimate: float
    std_error: float
    p_value: float


@dataclass(frozen=True, slots=True)
class PartFit:
    """One part of the model. `coefficients` is empty, and `message` says why, when it was not fitted.
    `n`: utterances the part saw; `notes`: caveats of a fit that did happen (or predictors left out)."""

    part: str
    n: int
    coefficients: tuple[Coefficient, ...]
    message: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def fitted(self) -> bool:
        return bool(self.coefficients)

    def coefficient(self, name: str) -> Coefficient | None:
        return next((c for c in self.coefficients if c.name == name), None)


@dataclass(frozen=True, slots=True)
class TwoPartModel:
    """`n` utterances, `with_errors` of them with WER > 0; `skipped` had a missing or non-finite value."""

    any_error: PartFit
    error_size: PartFit
    n: int
    with_errors: int
    skipped: int = 0

    @property
    def parts(self) -> tuple[PartFit, PartFit]:
        return self.any_error, self.error_size


ANY_ERROR = "any error (logistic regression of WER > 0)"
ERROR_SIZE = "error size (least squares of WER, utterances with an error)"


def predictor_table(
    tag_lists: Sequence[Sequence[str | None]], matrix_languages: Sequence[str], **extra: Sequence[float]
) -> dict[str, list[float]]:
    """The default predictor columns from each utterance's word language tags and its matrix language (switch
    points, the Code-Mixing Index as the share of words outside the matrix language, words = number of tags),
    plus any `extra` columns given (e.g. language_hint=[0, 1, ...])."""
    if len(matrix_languages) != len(tag_lists):
        raise ValueError(f"{len(matrix_languages)} matrix languages for {len(tag_lists)} utterances.")
    table = {
        "switch_points": [float(switch_points(tags)) for tags in tag_lists],
        "code_mixing_index": [
            code_mixing_index(tags, matrix) for tags, matrix in zip(tag_lists, matrix_languages, strict=True)
        ],
        "words": [float(len(tags)) for tags in tag_lists],
    }
    for name, values in extra.items():
        table[name] = [float(v) for v in values]
    return table


def _design(columns: dict[str, np.ndarray], n: int) -> tuple[np.ndarray, list[str], list[str]]:
    """Intercept plus each column that adds information; the notes name the columns left out."""
    names = ["intercept"]
    kept = [np.ones(n)]
    notes = []
    for name, values in columns.items():
        if np.ptp(values) == 0:
            notes.append(f"{name} is the same on every utterance here, so it was left out.")
            continue
        candidate = np.column_stack([*kept, values])
        if np.linalg.matrix_rank(candidate) < candidate.shape[1]:
            notes.append(f"{name} is a linear combination of the predictors before it, so it was left out.")
            continue
        kept.append(values)
        names.append(name)
    return np.column_stack(kept), names, notes


def _coefficients(result, names: list[str]) -> tuple[Coefficient, ...] | None:
    values = [np.asarray(result.params), np.asarray(result.bse), np.asarray(result.pvalues)]
    if not all(np.all(np.isfinite(v)) for v in values):
        return None
    return tuple(
        Coefficient(name, float(e), float(s), float(p)) for name, e, s, p in zip(names, *values, strict=True)
    )


def _predictors(n: int) -> str:
    return counted(n, "predictor")


def _fit_any_error(y: np.ndarray, columns: dict[str, np.ndarray]) -> PartFit:
    import statsmodels.api as sm  # imported here: it takes seconds, and only a fit needs it
    from statsmodels.tools.sm_exceptions import (
        ConvergenceWarning,
        PerfectSeparationError,  # raised by statsmodels before 0.14
        PerfectSeparationWarning,  # warned since
    )

    n = len(y)
    if n == 0:
        return PartFit(ANY_ERROR, 0, (), "No utterances.")
    errors = int(y.sum())
    if errors == 0 or errors == n:
        which = "none" if errors == 0 else "every one"
        return PartFit(
            ANY_ERROR, n, (), f"Of {counted(n, 'utterance')} {which} has an error: nothing to contrast."
        )
    X, names, notes = _design(columns, n)
    if n <= X.shape[1]:
        return PartFit(
            ANY_ERROR,
            n,
            (),
            f"Too little data: {counted(n, 'utterance')} for {counted(X.shape[1], 'term')}.",
            tuple(notes),
        )
    rarer = min(errors, n - errors)
    if rarer < PER_PREDICTOR * (X.shape[1] - 1):
        notes.append(
            f"Only {counted(rarer, 'utterance')} of the rarer outcome for {_predictors(X.shape[1] - 1)} "
            f"(fewer than {PER_PREDICTOR} each): the estimates are unstable."
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = sm.Logit(y, X).fit(disp=0, maxiter=100)
        except (PerfectSeparationError, np.linalg.LinAlgError, ValueError) as e:
            return PartFit(ANY_ERROR, n, (), f"Could not fit: {e}", tuple(notes))
    kinds = {type(w.message) for w in caught}
    if PerfectSeparationWarning in kinds:
        return PartFit(
            ANY_ERROR,
            n,
            (),
            "Perfect separation: the predictors tell exactly which utterances have an error, so the "
            "coefficients are infinite. Compare the groups directly instead.",
            tuple(notes),
        )
    converged = result.mle_retvals.get("converged", True)
    if ConvergenceWarning in kinds or not converged:
        return PartFit(
            ANY_ERROR,
            n,
            (),
            "The logistic regression did not converge (often a sign of near-perfect separation).",
            tuple(notes),
        )
    coefficients = _coefficients(result, names)
    if coefficients is None:
        return PartFit(ANY_ERROR, n, (), "Could not estimate the standard errors.", tuple(notes))
    return PartFit(ANY_ERROR, n, coefficients, None, tuple(notes))


def _fit_error_size(wer: np.ndarray, columns: dict[str, np.ndarray]) -> PartFit:
    import statsmodels.api as sm

    n = len(wer)
    X, names, notes = _design(columns, n)
    if n <= X.shape[1]:
        return PartFit(
            ERROR_SIZE,
            n,
            (),
            f"Too little data: {counted(n, 'utterance')} with an error for {counted(X.shape[1], 'term')}.",
            tuple(notes),
        )
    if n < PER_PREDICTOR * (X.shape[1] - 1):
        notes.append(
            f"Only {counted(n, 'utterance')} with an error for {_predictors(X.shape[1] - 1)} "
            f"(fewer than {PER_PREDICTOR} each): the estimates are unstable."
        )
    try:
        result = sm.OLS(wer, X).fit()
    except (np.linalg.LinAlgError, ValueError) as e:
        return PartFit(ERROR_SIZE, n, (), f"Could not fit: {e}", tuple(notes))
    with np.errstate(all="ignore"):
        coefficients = _coefficients(result, names)
    if coefficients is None:
        return PartFit(
            ERROR_SIZE, n, (), "Could not estimate the standard errors (the fit is exact).", tuple(notes)
        )
    return PartFit(ERROR_SIZE, n, coefficients, None, tuple(notes))


def two_part_model(wers: Sequence[float], predictors: Mapping[str, Sequence[float]]) -> TwoPartModel:
    """Fit both parts on one system × pair. `wers[i]` and every `predictors[name][i]` describe utterance i;
    booleans count as 0/1. Utterances with a missing (None) or non-finite value anywhere are left out and
    counted in `skipped`. Raises ValueError when a column's length differs from len(wers)."""
    for name, values in predictors.items():
        if len(values) != len(wers):
            raise ValueError(f"Predictor {name!r} has {len(values)} values for {len(wers)} utterances.")
    rows = []
    for i, wer in enumerate(wers):
        row = [wer, *(values[i] for values in predictors.values())]
        if all(v is not None and math.isfinite(float(v)) for v in row):
            rows.append([float(v) for v in row])
    data = np.array(rows, dtype=float).reshape(len(rows), 1 + len(predictors))
    skipped = len(wers) - len(rows)
    wer = data[:, 0]
    columns = {name: data[:, 1 + j] for j, name in enumerate(predictors)}
    has_error = wer > 0
    any_error = _fit_any_error(has_error.astype(float), columns)
    if has_error.sum() == 0:
        error_size = PartFit(ERROR_SIZE, 0, (), "No utterance has an error.")
    else:
        error_size = _fit_error_size(wer[has_error], {name: v[has_error] for name, v in columns.items()})
    return TwoPartModel(any_error, error_size, len(rows), int(has_error.sum()), skipped)
