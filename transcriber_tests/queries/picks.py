"""The judge's picks as the pages and the queue read them: the picks of a page of turn-table items, and the items
still waiting for one (work/picks.py asks the judge)."""

from django.db.models import Count, F, Q

from ..models import JudgePick, Score

CATCH_UP_LIMIT = 200  # items the minutely catch-up asks about at most


def missing(limit: int = CATCH_UP_LIMIT) -> list[tuple[int, int | None]]:
    """(flag id, control id or None) of items in a bank with no pick where two or more of the bank's candidates
    matched with different texts: those the judge may still have to pick among. Two queries."""
    matched = Score.objects.filter(
        source=Score.CANDIDATE,
        failed=False,
        match=True,
        flag__bank__isnull=False,
        transcriber__candidacies__bank=F("flag__bank"),
    )

    def several(qs, *keys):
        return qs.values(*keys).annotate(n=Count("hypothesis", distinct=True)).filter(n__gte=2)

    flags = several(matched.filter(control__isnull=True), "flag_id").exclude(
        flag_id__in=JudgePick.objects.filter(control__isnull=True).values("flag_id")
    )
    controls = several(matched.filter(control__isnull=False), "flag_id", "control_id").exclude(
        control_id__in=JudgePick.objects.filter(control__isnull=False).values("control_id")
    )
    items = [(f, None) for f in flags.order_by("flag_id").values_list("flag_id", flat=True)[:limit]]
    items += list(controls.order_by("control_id").values_list("flag_id", "control_id")[:limit])
    return items[:limit]


def picks_by_item(items) -> dict[tuple[int, int | None], JudgePick]:
    """The picks of a page of turn-table items (objects with flag_id and control_id), in one query."""
    items = list(items)
    flags = {i.flag_id for i in items if i.control_id is None}
    controls = {i.control_id for i in items if i.control_id is not None}
    if not flags and not controls:
        return {}
    picks = JudgePick.objects.filter(
        Q(flag_id__in=flags, control__isnull=True) | Q(control_id__in=controls)
    ).select_related("chosen")
    return {(p.flag_id, p.control_id): p for p in picks}
