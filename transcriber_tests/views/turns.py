"""The turn table: every item of a bank in the window, a page at a time, each candidate's cell beside the live one,
filtered by tag, by what went wrong or by a pair of candidates that disagree; and its CSV."""

import hashlib
from dataclasses import dataclass
from datetime import date

from django.core.cache import cache
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from oncore.accounts.access import admin_required
from oncore.http import id_in, query_without_page
from oncore.jinja import rows_each, rows_html
from oncore.ratelimit import rate_limited

from .. import queries
from ..lib import alignment
from ..queries import lookups, people
from ..queries.cached import VERSION
from ..queries.cached import key as cache_key
from ..queries.results import RESULTS_CACHE_SECONDS
from ..shapes import exports
from ..templatetags.scores import row_cells
from .calls import PAGE_SIZE
from .results import WINDOWS, window_of

ROWS = "transcriber_tests/turn_rows.jinja"


@require_GET
@admin_required
@rate_limited("turns")
def turn_table(request, pk):
    bank = lookups.bank(request.org, pk)
    window = window_of(request)
    kind = request.GET.get("kind", "")
    kind = kind if kind in ("flags", "controls") else ""  # anything else lists both
    tag = request.GET.get("tag", "").replace("\x00", "")  # no tag holds one; PostgreSQL cannot compare it
    disagree = request.GET.get("disagree") == "1"
    pair, pair_of = _pair_filter(bank, request.GET)
    flagged_by = people.parse_flagger(request.GET.get("flagged_by", ""))
    candidates = list(queries.candidates_of(bank))
    filters = {"kind": kind, "tag": tag, "disagree": disagree, "pair": pair, "flagged_by": flagged_by}
    kept = _kept_page(bank, candidates, window, request.GET.get("page"), filters)
    return render(
        request,
        "transcriber_tests/turns.html",
        {
            "bank": bank,
            "page": kept.page,
            "candidates": candidates,
            "screen": kept,
            "window": window,
            "kind": kind,
            "tag": tag,
            "disagree": disagree,
            "query": query_without_page(request),
            "windows": WINDOWS,
            "pair": pair and alignment.parse_pair(pair[1]),
            "pair_of": pair_of,
            "pair_token": pair[1] if pair else "",
            "flaggers": people.flaggers(request.org),
            "flagged_by": request.GET.get("flagged_by", "") if flagged_by else "",
            "rows_html": mark_safe(kept.rows_html),  # rendered by turn_rows.jinja, escaped there
        },
    )


@dataclass(frozen=True)
class KeptPage:
    """Where a page of rows sits among the pages, as _pagination.html reads a Django Page (`paginator` is itself)."""

    number: int
    count: int
    num_pages: int

    @property
    def paginator(self):
        return self

    def has_previous(self) -> bool:
        return self.number > 1

    def has_next(self) -> bool:
        return self.number < self.num_pages

    def previous_page_number(self) -> int:
        return self.number - 1

    def next_page_number(self) -> int:
        return self.number + 1


@dataclass(frozen=True)
class RenderedPage:
    page: KeptPage
    rows: dict  # {queries.row_version of an item: its row's HTML}, in the page's order
    first_day: date
    last_day: date
    timezone: str
    versions: tuple  # the bank's results and picks versions it was made at

    @property
    def rows_html(self) -> str:
        return "".join(self.rows.values())


def _kept_page(bank, candidates, window: int, number, filters: dict) -> RenderedPage:
    """A page of the turn table, kept RESULTS_CACHE_SECONDS at most under what the request asked (the page, the
    window and filters) and what every row shows alike (the bank's settings, its candidates in their order, the
    organization's timezone), and served while the versions it was made at are the bank's: its results (every
    score write, flag edit and candidate change moves it) and its judge's picks. Once they moved, the page is made
    again from the rows it kept whose own versions did not (queries.row_version: a score written moves its flag's
    alone), the others rendered: a read after a score write renders that flag's rows."""
    depends = (
        bank.settings_version,
        bank.organization.timezone,
        tuple(c.transcriber_id for c in candidates),
        window,
        number,
        *(filters[k] for k in sorted(filters)),
    )  # hashed: the filters and page are what the request typed
    name = cache_key("turn-page", bank.pk, hashlib.sha256(repr(depends).encode()).hexdigest())
    versions = (bank.results_changed_at.isoformat(), bank.picks_changed_at.isoformat())
    if filters["tag"] or not (number is None or (number.isdecimal() and len(number) <= 6)):
        return _make_page(bank, candidates, window, number, filters, versions, {})  # free text: never a key
    kept = cache.get(name, version=VERSION)
    if kept is not None and kept.versions == versions:
        return kept
    page = _make_page(bank, candidates, window, number, filters, versions, kept.rows if kept else {})
    cache.set(name, page, RESULTS_CACHE_SECONDS, version=VERSION)
    return page


def _make_page(bank, candidates, window, number, filters, versions, kept_rows: dict) -> RenderedPage:
    """The page read now: its items, and their rows from `kept_rows` where kept under their versions, else
    rendered (turn_rows.jinja, a row at a time)."""
    screen = queries.turn_screen(bank, window, number, size=PAGE_SIZE, **filters)
    items = {queries.row_version(item): item for item in screen.page.object_list}
    missing = {key: item for key, item in items.items() if key not in kept_rows}
    made = queries.turn_rows(bank, list(missing.values()), candidates) if missing else []
    contexts = [
        {"rows": [row], "cells": [cells], "candidates": candidates, "tz": screen.timezone}
        for row, cells in zip(made, row_cells(made), strict=True)
    ]
    fresh = dict(zip(missing, map(str, rows_each(ROWS, contexts)), strict=True))
    rows = {key: kept_rows.get(key) or fresh[key] for key in items}
    if not rows:  # "No lines match."
        rows = {None: str(rows_html(ROWS, {"rows": [], "candidates": candidates}))}
    p = screen.page
    return RenderedPage(
        KeptPage(p.number, p.paginator.count, p.paginator.num_pages),
        rows,
        screen.first_day,
        screen.last_day,
        screen.timezone,
        versions,
    )


def _pair_filter(bank, params):
    """The turn table's confusion-pair filter (?transcriber=<id>&pair=s:for>four): ((transcriber id, pair),
    the candidate) when both name one of the bank's candidates and a valid pair, else (None, None)."""
    token = (params.get("pair") or "").strip()
    transcriber = id_in(params.get("transcriber"))
    if not token or transcriber is None or alignment.parse_pair(token) is None:
        return None, None
    found = next(
        (c.transcriber for c in queries.candidates_of(bank) if c.transcriber_id == transcriber), None
    )
    return ((transcriber, token), found) if found else (None, None)


@require_GET
@admin_required
@rate_limited("exports")
def export_turns(request, pk):
    bank = lookups.bank(request.org, pk)
    return exports.turns_csv(bank, window_of(request))
