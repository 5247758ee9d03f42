"""Entity accuracy on a bank's own lines: per candidate, how many of the entities said on its scored lines (names,
times, dates, numbers, ids: the benchmark's matcher package read them in each item's expected text when the score
was written, Score.entities) its text kept, in all and per category, over the cards' window or period and
filter. Read from the per-day entity totals (EntityTotal, kept with every score write) when a bank's results
snapshot is built (queries/snapshots.py), never in a request: one query, whatever the bank's size."""

from collections import defaultdict

from django.db.models import Sum

from ..lib import entities
from ..models import EntityTotal
from .totals import _days
from .window import period_bounds


def bank_entities(
    bank, transcriber_ids, window_days: int, *, date_from=None, date_to=None, group=None
) -> dict:
    """{transcriber id: lib.entities.EntityAccuracy} of each candidate on the bank's scored items (flagged lines and
    control lines; failed lines are left out, as from its accuracy) whose flags joined the bank in the period, of
    the group's calls with `group`. A candidate without entities on its lines has an empty EntityAccuracy."""
    since, until = period_bounds(window_days, date_from, date_to, bank.organization.zone)
    qs = EntityTotal.objects.filter(bank_id=bank.pk, transcriber_id__in=transcriber_ids)
    qs = group.rows(qs) if group is not None else qs.filter(tenant_id=0, assistant_id=0)
    counts = defaultdict(dict)
    for r in (
        _days(qs, since, until)
        .values("transcriber_id", "category")
        .annotate(lines_=Sum("lines"), right_=Sum("right"), n_=Sum("n"))
    ):
        counts[r["transcriber_id"]][r["category"]] = (int(r["lines_"]), int(r["right_"]), int(r["n_"]))
    return {t: entities.from_counts(counts.get(t, {})) for t in transcriber_ids}
