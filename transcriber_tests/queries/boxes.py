"""A flag's box on the call page (flag_box.jinja: all of it but its actions, which carry the request's token): its
bank, tags, expected text, note, history and results per candidate. Rendered when its flag's items change, and
read by key.

A box's key (`key`) is the versions of what it shows, read with the flag and its bank: the flag's items (every
write to its controls, their scores and picks and its line's scores moves it under the call's lock:
aggregates.lock_call, and every judge's pick), the flag's own (every edit and move saves it; settling it marks it
settled) and its bank's settings (its name, number of controls, candidates and their names:
scores.settings_changed). A write to one flag of a call leaves the call's other boxes as they are; a pending cell
moves on only by a score's write (a transcription's outcome is written with its scores), so a box waiting for its
candidates is kept too.

The queue renders the boxes of the calls whose flags' items it has just changed (`build`: at the end of a chain
of transcriptions once the call has none waiting, after the judge's picks of a line, after settling a flag, after a
person's edit or move: handles.BUILD_BOXES) and stores them (FlagBox), so a call page read after its
scores landed finds them with its lines. A read renders the boxes not stored under their current key (`render`:
a write the queue has not built since); views/calls.py keeps those in the cache a minute. A stored box is never
served under another key: a write that lands while it is rendered moves its flag's version past it, and `build`
stores it only while the flag's version is still the one it rendered. A transcriber or person renamed in the
Django admin shows in a stored box at its flag's next change, as in a bank's snapshots."""

import logging

from django.db import DatabaseError, connection, transaction
from markupsafe import Markup

from oncore.calls.models import Call, Line
from oncore.jinja import rows_html

from ..models import Flag, FlagBox, Transcription
from ..templatetags import scores
from . import cached, people
from .flags import flag_results

log = logging.getLogger(__name__)

HELPERS = {  # what flag_results.jinja calls to write a score's cell (templatetags/scores.py)
    "score_cell": scores.score_cell,
    "marks_legend": scores.marks_legend,
    "entity_legend": scores.entity_legend,
}


def key(flag: Flag) -> str:
    """The versions of what the flag's box shows (the module says which writes move each)."""
    bank = flag.bank
    return cached.key(
        "flag-box",
        flag.pk,
        flag.items_version,
        flag.updated_at.isoformat(),
        flag.settled,
        flag.bank_id,
        bank.settings_version if bank else "",
    )


def stored(flag: Flag, current: str) -> Markup | None:
    """The flag's box as the queue stored it, when it was stored under the `current` key (read with the flag:
    `select_related("flag__box")`, or one query), else None."""
    try:
        box = flag.box
    except FlagBox.DoesNotExist:
        return None
    return Markup(box.html) if box.key == current else None


def render(flags, call: Call, results=None, histories=None) -> dict[int, Markup]:
    """{flag id: its box's HTML}, rendered now; `results` and `histories`: what the caller has read of them
    already (flags.FlagResults, people.History by flag id). The rest is read in a few queries, whatever the number
    of flags."""
    results, histories = dict(results or {}), dict(histories or {})
    unread = [flag for flag in flags if flag.pk not in histories]
    if unread:
        results.update(flag_results([flag for flag in unread if flag.pk not in results]))
        histories.update(people.histories([flag.pk for flag in unread]))
    return {
        flag.pk: rows_html(
            "transcriber_tests/flag_box.jinja",
            {"flag": flag, "h": histories.get(flag.pk), "res": results.get(flag.pk), "call": call, **HELPERS},
        )
        for flag in flags
    }


def build(call_ids) -> int:
    """The queue's part: render and store the boxes of these calls' flags that are not stored under their current
    key, once none of the calls' line transcriptions is waiting or running (the one that finishes last builds them:
    a box built before would be rendered again, pending cells and all). Returns how many were stored. A call
    written to meanwhile is left to its next build (or read)."""
    ids = set(call_ids)
    busy = Transcription.objects.filter(line__call_id__in=ids, status__in=Transcription.ACTIVE)
    ids -= set(busy.values_list("line__call_id", flat=True))
    built = 0
    for call in Call.objects.filter(pk__in=ids).only("pk"):
        try:
            flags = Flag.objects.filter(line__call=call).select_related("line", "bank", "box").order_by("pk")
            keys = {flag.pk: key(flag) for flag in flags}
            stale = [flag for flag in flags if stored(flag, keys[flag.pk]) is None]
            if stale:
                boxes = render(stale, call)
                built += _store(call, {flag: (keys[flag.pk], boxes[flag.pk]) for flag in stale})
        except Exception:  # a box not stored costs a read's render, never the work that asked for it
            log.exception("the flag boxes of call %s were not built", call.pk)
    return built


def build_line(line_id: int) -> int:
    """build() for the call of a line."""
    return build(Line.objects.filter(pk=line_id).values_list("call_id", flat=True))


def build_flag(flag_id: int) -> int:
    """build() for the call of a flag's line."""
    return build(Line.objects.filter(flag=flag_id).values_list("call_id", flat=True))


def _store(call: Call, boxes: dict) -> int:
    """Store {flag: (key, html)} rendered at each flag's items version, those of flags no write has moved since.
    The call's row is held in share mode meanwhile, so every write to its flags (each locks it first) waits, and
    none is in flight: a flag deleted since is skipped."""
    try:
        with transaction.atomic():
            share = " FOR SHARE" if connection.features.has_select_for_update else ""
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT id FROM {Call._meta.db_table} WHERE id = %s{share}", [call.pk])
            now = dict(
                Flag.objects.filter(pk__in=[flag.pk for flag in boxes]).values_list("pk", "items_version")
            )
            rows = [
                FlagBox(flag_id=flag.pk, key=k, html=str(html))
                for flag, (k, html) in sorted(boxes.items(), key=lambda item: item[0].pk)
                if now.get(flag.pk) == flag.items_version
            ]
            FlagBox.objects.bulk_create(
                rows, update_conflicts=True, unique_fields=["flag"], update_fields=["key", "html"]
            )
            return len(rows)
    except DatabaseError:  # a race lost (a deadlock, a flag's row gone): the next build or read has it
        log.warning("the flag boxes of call %s were not stored", call.pk, exc_info=True)
        return 0
