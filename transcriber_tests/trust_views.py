"""The results page's second part, loaded after the page (htmx, or a link without JavaScript): why candidates
fail (each one's confusion pairs, each pair opening the turn-table lines where it happens) and how far to trust
the lead (call-level bootstrap intervals beside the Wilson intervals and the McNemar test, and about how many more
flags would make the lead clear); and the confusion pairs as CSV. Parse, look up, read once (queries), render."""

from django.shortcuts import render
from django.views.decorators.http import require_GET

from oncore.accounts.access import admin_required
from oncore.ratelimit import rate_limited

from . import exports, lookups, queries, uncertainty
from .queries import confusion, trust


def _window(request) -> int:
    return queries.clamp_window(request.GET.get("window", queries.DEFAULT_WINDOW_DAYS))


@require_GET
@admin_required
@rate_limited("trust")
def bank_trust(request, pk):
    bank = lookups.bank(request.org, pk)
    window = _window(request)
    context = {
        "bank": bank,
        "window": window,
        "trust": trust.bank_trust(bank, window),
        "confusions": confusion.confusion_pairs(bank, window),
        "top": confusion.TOP,
        "flag_limit": uncertainty.FLAG_LIMIT,
    }
    template = "transcriber_tests/_trust.html" if request.htmx else "transcriber_tests/trust.html"
    return render(request, template, context)


@require_GET
@admin_required
@rate_limited("exports")
def export_confusions(request, pk):
    bank = lookups.bank(request.org, pk)
    return exports.confusions_csv(bank, _window(request))
