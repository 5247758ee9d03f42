"""A bank's turn-by-turn table: every flagged line and control line in the window, newest flag first (each flag
before its controls), with the live transcript's score and each candidate's, and the judge's pick among matching
versions. One reader for the page and the API (`turn_items` then `turn_rows`, a page at a time) and the CSV file
(`all_turn_rows`, the whole window in chunks of flags, memory flat): the same rows in the same order."""

from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import NamedTuple

from django.core.paginator import Paginator
from django.db.models import Exists, F, OuterRef, Value
from django.db.models.functions import Coalesce

from oncore.transcribers.models import Transcriber

from ..lib import cells
from ..models import Bank, Flag, JudgePick, Score, Transcription
from . import totals
from .picks import picks_by_item
from .window import clamp_window, window_days_covered, window_start


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


def with_pair(items, transcriber_id: int, token: str):
    """Only the items on which this transcriber's scored text makes this confusion pair (alignment.pair_token,
    stored on its score)."""
    made = (
        Score.objects.filter(
            flag_id=OuterRef("flag_id"),
            source=Score.CANDIDATE,
            transcriber_id=transcriber_id,
            confusions__contains=f" {token} ",
        )
        .annotate(item=Coalesce("control_id", Value(0)))
        .filter(item=Coalesce(OuterRef("control_id"), Value(0)))
    )
    return items.filter(Exists(made))


def turn_items(
    bank: Bank,
    window_days: int,
    *,
    kind: str = "",
    tag: str = "",
    disagree: bool = False,
    pair: tuple[int, str] | None = None,
    flagged_by: tuple[str, int] | None = None,
):
    """The bank's items (flags and their controls), newest flag first, each as its id, versions (VERSION) and values
    (ITEM), for pagination: a page of them is read in one query, and `turn_rows` adds their candidates' cells.
    Every item has exactly one live score, written when it entered a bank, so live scores double as the item
    list; each carries whether the bank's candidates disagree on the item (aggregates).
    Pages are read along the bank's flags newest first (an index); the count comes from the per-day totals,
    except with a tag, a confusion pair (`pair`: a transcriber id and alignment.pair_token) or the person who
    flagged (`flagged_by`: ("user", id) or ("key", API key id)), counted in the database."""
    since = window_start(clamp_window(window_days), bank.organization.zone)
    items = Score.objects.filter(source=Score.LIVE, flag__bank=bank, flag__joined_at__gte=since)
    if kind == "flags":
        items = items.filter(control__isnull=True)
    elif kind == "controls":
        items = items.filter(control__isnull=False)
    if tag:
        items = items.filter(flag__tags__contains=f",{tag.strip().lower()},")
    if disagree:
        items = items.filter(disagree=True)
    if pair is not None:
        items = with_pair(items, *pair)
    if flagged_by is not None:
        who, pk = flagged_by
        items = items.filter(**{"flag__created_by_key_id" if who == "key" else "flag__created_by_id": pk})
    ordered = items.order_by(*NEWEST).values_list("id", *VERSION, *ITEM)
    if tag or pair is not None or flagged_by is not None:
        return ordered
    return KnownCount(ordered, totals.item_count(bank.pk, since, kind=kind, disagree=disagree))


def display_name(transcriber_id: int) -> str:
    """A transcriber's display name (the turn-table CSV's live transcriber that is no candidate)."""
    return Transcriber.objects.values_list("display_name", flat=True).get(pk=transcriber_id)


class Tenant(NamedTuple):
    """A row's tenant, read with the row (shapes.refs.tenant_ref names it as every payload does)."""

    id: int
    slug: str
    name: str

    @property
    def pk(self) -> int:
        return self.id


@dataclass(frozen=True, slots=True)
class TurnRow:
    """One item of the turn table: a flagged line (`control_id` None) or one of its control lines."""

    flag_id: int
    control_id: int | None
    line_id: int
    call_id: int
    tenant: Tenant
    call_started_at: datetime
    flagged_at: datetime
    joined_at: datetime  # when the flag joined the bank (made in it, or moved in): the day it counts on
    tags: list  # the flag's error tags; a control line carries none
    expected_text: str  # what was said (a control's: its live text)
    live_text: str  # the line's live transcript
    production: cells.ScoreCell  # the live transcript, scored as stored
    cells: list  # (transcriber, ScoreCell or None while waiting) in the candidates' order
    pick: JudgePick | None = None  # the judge's pick among matching versions, if any

    @property
    def is_control(self) -> bool:
        return self.control_id is not None


# An item as read from its live score: every item has exactly one, written when it entered a bank.
ITEM = (
    "flag_id",
    "control_id",
    "flag__line__call_id",
    "flag__line__call__tenant_id",
    "flag__line__call__tenant__slug",
    "flag__line__call__tenant__name",
    "flag__line__call__started_at",
    "flag__created_at",
    "flag__joined_at",
    "flag__tags",
    "flag__expected_text",
    "flag__line_id",
    "flag__line__text",
    "control__line_id",
    "control__expected_text",
    "control__line__text",
    "transcriber_id",
    *cells.COLUMNS,
)
NEWEST = ("-flag__joined_at", "-flag_id", F("control_id").asc(nulls_first=True))
# The versions of what an item's row shows, read with it: its flag's items (their scores, the judge's picks: moved
# by every write to them, aggregates.lock_call) and the flag's own (its expected text, tags, bank).
VERSION = ("flag__items_version", "flag__updated_at")


class _Item(NamedTuple):
    flag_id: int
    control_id: int | None


def _row(v, candidate_cells, pick) -> TurnRow:
    """A turn row from an item's values (ITEM), its candidates' cells [(transcriber, cell or None)] and its pick."""
    flag_id, control_id, call_id, tenant_id, slug, name, started_at, flagged_at, joined_at, tags = v[:10]
    expected, line_id, live_text, control_line_id, control_expected, control_live_text = v[10:16]
    if control_id is not None:
        line_id, expected, live_text = control_line_id, control_expected, control_live_text
    return TurnRow(
        flag_id,
        control_id,
        line_id,
        call_id,
        Tenant(tenant_id, slug, name),
        started_at,
        flagged_at,
        joined_at,
        [] if control_id is not None else Flag.decode_tags(tags),
        expected,
        live_text,
        cells.cell(v[16], *v[17:]),
        candidate_cells,
        pick,
    )


def row_version(item) -> tuple:
    """An item of turn_items': its flag's and control's ids, and the versions of what its row shows (VERSION)."""
    items_version, updated_at = item[1 : 1 + len(VERSION)]
    return item[1 + len(VERSION)], item[2 + len(VERSION)], items_version, updated_at.isoformat()


def turn_rows(bank: Bank, items, candidates) -> list[TurnRow]:
    """Rows for one page of items (from turn_items: their ids, versions and values), in its order, with each
    candidate's cell (the bank's candidates, in their order) and the judge's pick: two queries a page, the scores
    and the picks (a third only with failed cells)."""
    candidates = [c.transcriber for c in candidates]
    item_values = [v[1 + len(VERSION) :] for v in items]
    scores = Score.objects.filter(
        source=Score.CANDIDATE, flag_id__in={v[0] for v in item_values}, transcriber__in=candidates
    ).values_list(*cells.KEYS, *cells.COLUMNS)
    by_key = {(v[0], v[1], v[2]): cells.cell(v[2], *v[3:]) for v in scores}
    picks = picks_by_item(_Item(v[0], v[1]) for v in item_values)
    rows = [
        _row(v, [(t, by_key.get((v[0], v[1], t.pk))) for t in candidates], picks.get((v[0], v[1])))
        for v in item_values
    ]
    return _with_reasons(rows)


def _with_reasons(rows: list[TurnRow]) -> list[TurnRow]:
    """A page's failed cells with the engine's error as their reason, where one came back (one query)."""
    wanted = {
        (row.line_id, cell.transcriber_id)
        for row in rows
        for _, cell in row.cells
        if cell is not None and cell.failed and cell.failure == Score.ERROR
    }
    if not wanted:
        return rows
    errors = {
        (line_id, transcriber_id): error
        for line_id, transcriber_id, error in Transcription.objects.filter(
            line_id__in={line for line, _ in wanted}, transcriber_id__in={t for _, t in wanted}
        ).values_list("line_id", "transcriber_id", "error")
    }
    return [
        replace(
            row,
            cells=[
                (t, c and cells.with_reason(c, errors.get((row.line_id, t.pk), ""))) for t, c in row.cells
            ],
        )
        for row in rows
    ]


FETCH_ROWS = 5000  # rows all_turn_rows fetches from each of its two streams per round trip


def all_turn_rows(bank: Bank, window_days: int, transcribers):
    """Every row of the bank's turn table in the window, in its order, with the cells of these transcribers (in
    the order given). Two streams read side by side in the table's order, FETCH_ROWS rows at a time (server-side
    cursors on PostgreSQL): the items (their live scores) and the candidates' scores, each item's scores following
    one another; memory stays flat at any bank size (the judge's picks, few, are read first)."""
    since = window_start(clamp_window(window_days), bank.organization.zone)
    in_window = {"flag__bank": bank, "flag__joined_at__gte": since}
    items = Score.objects.filter(source=Score.LIVE, **in_window).order_by(*NEWEST).values_list(*ITEM)
    scores = (
        Score.objects.filter(source=Score.CANDIDATE, transcriber__in=transcribers, **in_window)
        .order_by(*NEWEST, "transcriber_id")
        .values_list(*cells.KEYS, *cells.COLUMNS)
        .iterator(chunk_size=FETCH_ROWS)
    )
    picks = {
        (p.flag_id, p.control_id): p for p in JudgePick.objects.filter(**in_window).select_related("chosen")
    }
    waiting = next(scores, None)
    for v in items.iterator(chunk_size=FETCH_ROWS):
        key = (v[0], v[1])
        found = {}
        while waiting is not None and (waiting[0], waiting[1]) == key:
            found[waiting[2]] = cells.cell(waiting[2], *waiting[3:])
            waiting = next(scores, None)
        yield _row(v, [(t, found.get(t.pk)) for t in transcribers], picks.get(key))


@dataclass(frozen=True)
class TurnScreen:
    page: object  # a Paginator page of items (turn_items' values): turn_rows makes their rows
    first_day: date  # the window's days (in `timezone`, the organization's)
    last_day: date
    timezone: str


def turn_screen(
    bank: Bank,
    window_days: int,
    number=None,
    *,
    size: int,
    kind="",
    tag="",
    disagree=False,
    pair=None,
    flagged_by=None,
) -> TurnScreen:
    """Page `number` (of `size` items) of the bank's turn table with the filters, as the page shows it."""
    items = turn_items(
        bank, window_days, kind=kind, tag=tag, disagree=disagree, pair=pair, flagged_by=flagged_by
    )
    page = Paginator(items, size).get_page(number)
    first, last = window_days_covered(clamp_window(window_days), bank.organization.zone)
    return TurnScreen(page, first, last, bank.organization.timezone)
