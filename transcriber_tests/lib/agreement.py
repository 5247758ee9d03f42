"""PURE: how far two labellers agree (the judge against a person, or the judge against itself): accuracy, Cohen's
kappa and the confusion matrix. Used by the run's review and by scripts/measure_judge.py. No Django."""

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Agreement:
    n: int
    agree: int
    kappa: float | None  # None with no pairs, or when chance agreement is total (one label everywhere)
    confusion: dict  # (reference label, other label) -> count

    @property
    def accuracy(self) -> float | None:
        return self.agree / self.n if self.n else None


def agreement(pairs) -> Agreement:
    """Agreement of (reference, other) label pairs. Cohen's kappa = (p_o - p_e) / (1 - p_e), where p_o is the
    share of pairs that agree and p_e the agreement expected by chance from each side's label shares."""
    pairs = list(pairs)
    n = len(pairs)
    confusion = Counter(pairs)
    agree = sum(count for (a, b), count in confusion.items() if a == b)
    if n == 0:
        return Agreement(0, 0, None, {})
    reference = Counter(a for a, _ in pairs)
    other = Counter(b for _, b in pairs)
    p_o = agree / n
    p_e = sum(reference[label] * other[label] for label in reference) / (n * n)
    kappa = None if p_e == 1 else (p_o - p_e) / (1 - p_e)
    return Agreement(n, agree, kappa, dict(confusion))


def confusion_table(result: Agreement, labels) -> list[list]:
    """Rows of the confusion matrix: a header row, then one row per reference label (counts of each other
    label), for printing."""
    rows = [["reference \\ judge", *labels]]
    for a in labels:
        rows.append([a, *(result.confusion.get((a, b), 0) for b in labels)])
    return rows
