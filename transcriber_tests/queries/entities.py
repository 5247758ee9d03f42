"""Entity accuracy on a bank's own lines: per candidate, how many of the entities said on its scored lines (names,
times, dates, numbers, ids: the benchmark's matcher package read them in each item's expected text when the score
was written, Score.entities) its text kept, in all and per category, over the cards' window or period and
filter. Read when a bank's results snapshot is built (queries/snapshots.py), never in a request: one query."""

from ..lib import entities
from ..models import Score
from .window import period_bounds


def bank_entities(
    bank, transcriber_ids, window_days: int, *, date_from=None, date_to=None, group=None
) -> dict:
    """{transcriber id: lib.entities.EntityAccuracy} of each candidate on the bank's scored items (flagged lines and
    control lines; failed lines are left out, as from its accuracy) whose flags joined the bank in the period, of
    the group's calls with `group`. A candidate without entities on its lines has an empty EntityAccuracy."""
    since, until = period_bounds(window_days, date_from, date_to, bank.organization.zone)
    scores = Score.objects.filter(
        flag__bank=bank,
        flag__joined_at__gte=since,
        source=Score.CANDIDATE,
        failed=False,
        transcriber_id__in=transcriber_ids,
    ).exclude(entities="")
    if until is not None:
        scores = scores.filter(flag__joined_at__lt=until)
    if group is not None:
        scores = scores.filter(**group.call_filter("flag__line__call__"))
    found: dict[int, list] = {t: [] for t in transcriber_ids}
    for transcriber_id, stored in scores.values_list("transcriber_id", "entities").iterator(chunk_size=5000):
        found[transcriber_id].append(stored)
    return {t: entities.tally(kept) for t, kept in found.items()}
