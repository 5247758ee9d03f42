"""Who typed what: the person (or API key) who made a flag, who edited it and how (FlagEdit), named as the pages
and the API name them, and the people a turn table can be filtered by."""

from dataclasses import dataclass
from datetime import datetime

from oncore.accounts.models import ApiKey, Membership

from ..models import Flag, FlagEdit
from ..models.history import key_name, name_of

__all__ = [
    "Edit",
    "History",
    "edit_of",
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
    """A flag's maker and its edits, oldest first; `typed_by` is who typed its current expected text."""

    flagged_by: str
    flagged_at: datetime
    edits: list  # Edit

    @property
    def typed_by(self) -> str:
        for edit in reversed(self.edits):
            if edit.field == FlagEdit.EXPECTED_TEXT:
                return edit.by
        return self.flagged_by


def edit_of(e: FlagEdit) -> Edit:
    return Edit(e.at, e.by_name or name_of(e.by, e.by_key), e.field, e.old, e.new)


def history_of(flag: Flag) -> History:
    """A flag's history, from its maker and its edits (prefetch `edits`, `created_by` and `created_by_key` for a
    list: no query per flag)."""
    return History(
        name_of(flag.created_by, flag.created_by_key),
        flag.created_at,
        [edit_of(e) for e in flag.edits.all()],
    )


def histories(flag_ids) -> dict[int, History]:
    """{flag id: History} of these flags, in two queries."""
    flags = Flag.objects.filter(pk__in=list(flag_ids)).select_related("created_by", "created_by_key")
    return {f.pk: history_of(f) for f in flags.prefetch_related("edits__by", "edits__by_key")}


def flaggers(organization) -> list[tuple[str, str]]:
    """The people who can flag in this organization (its admins, then its organization API keys), as the turn
    table's filter offers them: [(value, name)] with values "user:<id>" and "key:<id>"."""
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
