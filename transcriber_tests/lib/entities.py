"""Entity accuracy on a bank's own lines: each score keeps the entities of its item's expected text (names, times,
dates, numbers, ids, found by the benchmark's matcher package, benchmark.selectors.entity_marks), each marked kept
or lost in its transcriber's text (`encode`, Score.entities); the turn table reads them back (`decode`) and a
bank's figures count them per candidate and category (`tally`). Pure."""

from dataclasses import dataclass
from typing import NamedTuple

# The categories, in the order the pages list them (benchmark.entity.matcher.CATEGORIES; a test ties the two).
CATEGORIES = ("name", "time", "date", "number", "id")
LABELS = {"name": "names", "time": "times", "date": "dates", "number": "numbers", "id": "ids"}


class Mark(NamedTuple):
    """One entity of what was said and whether the transcriber's text has it."""

    text: str
    category: str
    kept: bool


def encode(marks) -> str:
    """Marks [(text, category, kept)] as Score.entities keeps them: one a line, "number\\t1\\tfour"."""
    return "\n".join(
        f"{category}\t{int(bool(kept))}\t{' '.join(text.split())}" for text, category, kept in marks
    )


def decode(stored: str) -> tuple[Mark, ...]:
    """What encode wrote, back as marks ("" has none)."""
    if not stored:
        return ()
    marks = []
    for line in stored.split("\n"):
        category, kept, text = line.split("\t", 2)
        marks.append(Mark(text, category, kept == "1"))
    return tuple(marks)


@dataclass(frozen=True)
class CategoryCount:
    category: str
    right: int  # entities of what was said that the transcriber's text has
    n: int  # entities of what was said, on its scored lines

    @property
    def label(self) -> str:
        return LABELS.get(self.category, self.category)

    @property
    def accuracy(self) -> float | None:
        return self.right / self.n if self.n else None


@dataclass(frozen=True)
class EntityAccuracy:
    """One transcriber's entities right over a bank's scored lines: in all (`right` of `n`), and per category
    (`categories`: those with entities, in CATEGORIES' order)."""

    right: int = 0
    n: int = 0
    categories: tuple = ()  # CategoryCount
    lines: int = 0  # the scored lines whose expected text had entities

    @property
    def accuracy(self) -> float | None:
        return self.right / self.n if self.n else None

    def of(self, category: str) -> CategoryCount:
        """The count of one category (zero where the lines had none)."""
        return next((c for c in self.categories if c.category == category), CategoryCount(category, 0, 0))


def from_counts(counts: dict) -> EntityAccuracy:
    """The accuracy of per-category counts {category: (lines, right, n)}, "" counting every category (as the per-day
    entity totals keep them)."""
    lines, right, n = counts.get("", (0, 0, 0))
    categories = tuple(
        CategoryCount(c, counts[c][1], counts[c][2]) for c in CATEGORIES if counts.get(c, (0, 0, 0))[2]
    )
    return EntityAccuracy(right, n, categories, lines)


def tally(stored) -> EntityAccuracy:
    """Count the marks of a transcriber's scored lines (an iterable of Score.entities, one per line)."""
    right, n = dict.fromkeys(CATEGORIES, 0), dict.fromkeys(CATEGORIES, 0)
    lines = 0
    for kept in stored:
        lines += 1
        for mark in decode(kept):
            n[mark.category] = n.get(mark.category, 0) + 1
            right[mark.category] = right.get(mark.category, 0) + mark.kept
    categories = tuple(CategoryCount(c, right[c], n[c]) for c in n if n[c])
    return EntityAccuracy(sum(right.values()), sum(n.values()), categories, lines)
