"""A bank's results page (the cards, the figures, the expected texts to check, from its snapshot: queries/snapshots.py)
and its CSV; the window every bank screen reads."""

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from django_htmx.http import HTMX_STOP_POLLING

from oncore.accounts.access import admin_required
from oncore.ratelimit import rate_limited

from .. import queries
from ..forms import ResultsFilterForm
from ..queries import jobs, lookups, snapshots
from ..shapes import exports

WINDOWS = [7, 14, 30, 60, 90]


def window_of(request) -> int:
    return queries.clamp_window(request.GET.get("window", queries.DEFAULT_WINDOW_DAYS))


@require_GET
@admin_required
@rate_limited("results")
def bank_results(request, pk):
    """The bank's figures from their newest snapshot (queries/snapshots.py: computed when its results change), inside
    what is always fresh: the window, the filter and the work still waiting. The body polls (every 2 s) while
    work waits or newer figures are being computed, and stops (HTMX_STOP_POLLING) once neither is true."""
    bank = lookups.bank(request.org, pk)
    # ?tenant= or ?assistant=: the cards recomputed on that tenant's or assistant's calls.
    filters = ResultsFilterForm(request.GET, organization=request.org)
    frame = queries.results_frame(bank, window_of(request), filters.group)
    figures = snapshots.results_of(bank, frame.window_days, group=frame.group, data=False)
    context = {
        "bank": bank,
        "r": frame,
        "figures": figures,
        "windows": WINDOWS,
        "queue": jobs.queue_status(request.org.pk) if frame.pending else {},
        "filters": filters,
    }
    if request.htmx and request.GET.get("fragment") == "progress":
        done = not frame.pending and not figures.stale
        return render(
            request,
            "transcriber_tests/_results_body.html",
            context,
            status=HTMX_STOP_POLLING if done else 200,
        )
    return render(request, "transcriber_tests/results.html", context, status=422 if filters.errors else 200)


@require_GET
@admin_required
@rate_limited("exports")
def export_results(request, pk):
    bank = lookups.bank(request.org, pk)
    filters = ResultsFilterForm(request.GET, organization=request.org)
    if filters.errors:
        said = " ".join(message for errs in filters.errors.values() for message in errs)
        return HttpResponse(f"No results CSV for that filter: {said}", status=422, content_type="text/plain")
    return exports.results_csv(bank, window_of(request), filters.group)
