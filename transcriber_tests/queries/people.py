"""Who typed what: the person (or API key) who made a flag, who edited it and how (FlagEdit), named as the pages
and the API name them, and the people a turn table can be filtered by."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.core.cache import cache
from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber

from oncore.accounts.models import ApiKey, Membership

from ..models import Flag, FlagEdit
from ..models.history import key_name, name_of

RECENT_EDITS = 5  # a flag's edits shown with it (the API's flag, the call page); the rest a page at a time

__all__ = [
    "RECENT_EDITS",
    "Edit",
    "History",
    "edit_of",
    "edits_of",
    "flaggers",
    "histories",
    "history_of",
    "key_name",
    "name_of",
    "parse_flagger",
]


@dataclass(frozen=True, slots=True)
class Edit:
    at: datetime
    by: str  # "" when not recorded
    field: str  # FlagEdit.EXPECTED_TEXT, TAGS or NOTE
    old: str
    new: str

    @property
    def field_label(self) -> str:
        return dict(FlagEdit.FIELDS)[self.field].lower()


@dataclass(frozen=True)
class History:
    """A flag's maker and its latest edits (at most RECENT_EDITS, oldest first) with how many there are in all: a
    flag edited thousands of times shows the same few (edits_of pages through all of them). `typed_by` is who
    typed its current expected text."""

    flagged_by: str
    flagged_at: datetime
    edits: list  # Edit: the latest RECENT_EDITS, oldest first
    count: int = 0  # every edit of the flag
    text_edited_by: str | None = (
        None  # who made the last edit of its expected text; None when nobody edited it
    )

    @property
    def typed_by(self) -> str:
        return self.flagged_by if self.text_edited_by is None else self.text_edited_by

    @property
    def more(self) -> int:
        """Edits not among `edits`."""
        return self.count - len(self.edits)


def edit_of(e: FlagEdit) -> Edit:
    return Edit(e.at, e.by_name or name_of(e.by, e.by_key), e.field, e.old, e.new)


def _newest_first(*partition) -> Window:
    return Window(
        RowNumber(), partition_by=[F(p) for p in partition], order_by=[F("at").desc(), F("id").desc()]
    )


def histories(flag_ids) -> dict[int, History]:
    """{flag id: History} of these flags (ids, or Flag objects with `created_by` and `created_by_key` selected):
    one query when none was edited, three whatever the number of edits (one more with ids: the flags and their
    makers are read first)."""
    flags = list(flag_ids)
    if flags and not isinstance(flags[0], Flag):
        flags = list(Flag.objects.filter(pk__in=flags).select_related("created_by", "created_by_key"))
    ids = [f.pk for f in flags]
    counts = dict(
        FlagEdit.objects.filter(flag_id__in=ids)
        .order_by()
        .values("flag_id")
        .annotate(n=Count("id"))
        .values_list("flag_id", "n")
    )
    ranks = {}
    if counts:
        ranks = dict(
            FlagEdit.objects.filter(flag_id__in=list(counts))
            .order_by()
            .annotate(rank=_newest_first("flag_id"), rank_in_field=_newest_first("flag_id", "field"))
            .filter(Q(rank__lte=RECENT_EDITS) | Q(field=FlagEdit.EXPECTED_TEXT, rank_in_field=1))
            .values_list("id", "rank")
        )
    recent, typed = defaultdict(list), {}
    edits = FlagEdit.objects.filter(pk__in=list(ranks)) if ranks else FlagEdit.objects.none()
    for e in edits.select_related("by", "by_key").order_by("flag_id", "at", "id"):
        edit = edit_of(e)
        if ranks[e.pk] <= RECENT_EDITS:
            recent[e.flag_id].append(edit)
        if e.field == FlagEdit.EXPECTED_TEXT:  # the last of its field, or it would be among the latest only
            typed[e.flag_id] = edit.by
    return {
        f.pk: History(
            name_of(f.created_by, f.created_by_key),
            f.created_at,
            recent[f.pk],
            counts.get(f.pk, 0),
            typed.get(f.pk),
        )
        for f in flags
    }


def new_history(flag: Flag) -> History:
    """The History of a flag its request has just made (no query: nobody has edited it yet)."""
    return History(name_of(flag.created_by, flag.created_by_key), flag.created_at, [])


def history_of(flag: Flag) -> History:
    """One flag's History (one query; its `created_by` and `created_by_key` are read unless selected)."""
    return histories([flag])[flag.pk]


def edits_of(flag: Flag):
    """Every edit of the flag, for a page at a time newest first (oncore.api.cursor_page on `at`)."""
    return FlagEdit.objects.filter(flag=flag).select_related("by", "by_key")


FLAGGERS_CACHE_S = 60  # a new admin or key joins the turn table's filter within a minute


def flaggers(organization) -> list[tuple[str, str]]:
    """The people who can flag in this organization (its admins, then its organization API keys), as the turn
    table's filter offers them: [(value, name)] with values "user:<id>" and "key:<id>". Kept a minute in the
    cache: every read of the turn table offers them."""
    return cache.get_or_set(f"flaggers:{organization.pk}", lambda: _flaggers(organization), FLAGGERS_CACHE_S)


def _flaggers(organization) -> list[tuple[str, str]]:
    admins = (
        Membership.objects.filter(organization=organization, role=Membership.ADMIN)
        .select_related("user")
        .order_by("user__username")
    )
    keys = ApiKey.objects.filter(organization=organization, tenant__isnull=True).order_by("name", "prefix")
    return [(f"user:{m.user_id}", m.user.get_username()) for m in admins] + [
        (f"key:{k.pk}", key_name(k)) for k in keys
    ]


def parse_flagger(value: str) -> tuple[str, int] | None:
    """ "user:3" or "key:5" as the turn table's filter takes it: ("user", 3), ("key", 5); None otherwise."""
    who, _, pk = (value or "").partition(":")
    if who not in ("user", "key") or not pk.isdigit() or len(pk) > 18:
        return None
    return who, int(pk)
