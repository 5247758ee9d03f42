"""The turn table: every item of a bank in the window, a page at a time, each candidate's cell beside the live one,
filtered by tag, by what went wrong or by a pair of candidates that disagree; and its CSV."""

from django.shortcuts import render
from django.views.decorators.http import require_GET

from oncore.accounts.access import admin_required
from oncore.http import id_in, query_without_page
from oncore.jinja import rows_html
from oncore.ratelimit import rate_limited

from .. import queries
from ..lib import alignment
from ..queries import lookups, people
from ..shapes import exports
from ..templatetags.scores import row_cells
from .calls import PAGE_SIZE
from .results import WINDOWS, window_of


@require_GET
@admin_required
@rate_limited("turns")
def turn_table(request, pk):
    bank = lookups.bank(request.org, pk)
    window = window_of(request)
    kind = request.GET.get("kind", "")
    tag = request.GET.get("tag", "").replace("\x00", "")  # no tag holds one; PostgreSQL cannot compare it
    disagree = request.GET.get("disagree") == "1"
    pair, pair_of = _pair_filter(bank, request.GET)
    flagged_by = people.parse_flagger(request.GET.get("flagged_by", ""))
    screen = queries.turn_screen(
        bank,
        window,
        request.GET.get("page"),
        size=PAGE_SIZE,
        kind=kind,
        tag=tag,
        disagree=disagree,
        pair=pair,
        flagged_by=flagged_by,
    )
    return render(
        request,
        "transcriber_tests/turns.html",
        {
            "bank": bank,
            "page": screen.page,
            "rows": screen.rows,
            "candidates": screen.candidates,
            "screen": screen,
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
            "rows_html": rows_html(
                "transcriber_tests/turn_rows.jinja",
                {
                    "rows": screen.rows,
                    "cells": row_cells(screen.rows),
                    "candidates": screen.candidates,
                    "tz": screen.timezone,
                },
            ),
        },
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
