"""A bank's turn-by-turn table: every flagged line and control line in the window, newest flag first, with the
live transcript's score and each candidate's, and the judge's pick among matching versions. The page, the API
and the CSV file read it here."""

from dataclasses import dataclass
from typing import NamedTuple

from django.db.models import F

from ..models import Bank, Score
from ..picks import picks_by_item
from . import totals
from .window import clamp_window, window_start


class KnownCount:
    """An ordered queryset whose count is already known (from the per-day totals), for Paginator and the API's
    pages: counting every item of a large bank would cost more than reading the page."""

    def __init__(self, queryset, count: int):
        self.queryset, self._count = queryset, count
        self.ordered = True

    def count(self) -> int:
        return self._count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, key):
        return self.queryset[key]

    def __iter__(self):
        return iter(self.queryset)


def turn_items(bank: Bank, window_days: int, *, kind: str = "", tag: str = "", disagree: bool = False):
    """Ids of the bank's items (flags and their controls), newest flag first, for pagination; `turn_rows` loads
    one page of them. Every item has exactly one live score, written when it entered a bank, so live scores
    double as the item list; each carries whether the bank's candidates disagree on the item (aggregates).
    Pages are read along the bank's flags newest first (an index); the count comes from the per-day totals,
    except with a tag (counted in the database)."""
    since = window_start(clamp_window(window_days))
    items = Score.objects.filter(source=Score.LIVE, flag__bank=bank, flag__created_at__gte=since)
    if kind == "flags":
        items = items.filter(control__isnull=True)
    elif kind == "controls":
        items = items.filter(control__isnull=False)
    if tag:
        items = items.filter(flag__tags__contains=f",{tag.strip().lower()},")
    if disagree:
        items = items.filter(disagree=True)
    ordered = items.order_by(
        "-flag__created_at", "-flag_id", F("control_id").asc(nulls_first=True)
    ).values_list("id", flat=True)
    if tag:
        return ordered
    return KnownCount(ordered, totals.item_count(bank.pk, since, kind=kind, disagree=disagree))


@dataclass(frozen=True)
class TurnRow:
    item: Score  # the live score of the item
    cells: list  # (transcriber, Cell or None) in candidate order
    pick: object = None  # the judge's pick among matching versions, if any

    @property
    def is_control(self) -> bool:
        return self.item.control_id is not None

    @property
    def line(self):
        return self.item.control.line if self.item.control_id else self.item.flag.line

    @property
    def expected(self) -> str:
        return self.item.control.expected_text if self.item.control_id else self.item.flag.expected_text


class Cell(NamedTuple):
    """What a turn-table cell shows of a candidate's score (the dashboard's and the API's): a Score's fields,
    read without building the model (a page has hundreds)."""

    flag_id: int
    control_id: int | None
    transcriber_id: int
    hypothesis: str
    failed: bool
    failure: str
    match: bool
    wer: float | None
    case_or_punctuation_only: bool


def turn_rows(bank: Bank, item_ids, candidates) -> list[TurnRow]:
    """Rows for one page of items (ids from turn_items), with each candidate's score and the judge's pick:
    three queries a page."""
    item_ids = list(item_ids)
    loaded = Score.objects.filter(pk__in=item_ids).select_related("flag__line__call__tenant", "control__line")
    by_id = {item.pk: item for item in loaded}
    items = [by_id[pk] for pk in item_ids]
    transcribers = [c.transcriber for c in candidates]
    scores = Score.objects.filter(
        source=Score.CANDIDATE, flag_id__in={i.flag_id for i in items}, transcriber__in=transcribers
    ).values_list(*Cell._fields)
    by_key = {(s.flag_id, s.control_id, s.transcriber_id): s for s in map(Cell._make, scores)}
    picks = picks_by_item(items)
    return [
        TurnRow(
            item,
            [(t, by_key.get((item.flag_id, item.control_id, t.pk))) for t in transcribers],
            picks.get((item.flag_id, item.control_id)),
        )
        for item in items
    ]
