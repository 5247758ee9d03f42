"""The results page's second part, loaded after the page (htmx, or a link without JavaScript): why candidates
fail (each one's confusion pairs, each pair opening the turn-table lines where it happens) and how far to trust
the lead (call-level bootstrap intervals beside the Wilson intervals and the McNemar test, and about how many more
flags would make the lead clear); and the confusion pairs as CSV. Parse, look up, read once (queries), render."""

from django.shortcuts import render
from django.views.decorators.http import require_GET
from django_htmx.http import HTMX_STOP_POLLING

from oncore.accounts.access import admin_required
from oncore.ratelimit import rate_limited

from ..queries import lookups, snapshots
from ..shapes import exports
from .results import window_of


@require_GET
@admin_required
@rate_limited("trust")
def bank_trust(request, pk):
    """The trust figures from their newest snapshot (queries/snapshots.py); the section polls while newer ones are being
    computed (the first time: "computing"), and the poll stops (HTMX_STOP_POLLING) once they have landed."""
    bank = lookups.bank(request.org, pk)
    window = window_of(request)
    figures = snapshots.trust_of(bank, window, data=False)
    context = {"bank": bank, "window": window, "figures": figures}
    if request.htmx:
        status = 200 if figures.stale else HTMX_STOP_POLLING
        return render(request, "transcriber_tests/_trust_body.html", context, status=status)
    return render(request, "transcriber_tests/trust.html", context)


@require_GET
@admin_required
@rate_limited("exports")
def export_confusions(request, pk):
    bank = lookups.bank(request.org, pk)
    return exports.confusions_csv(bank, window_of(request))
