"""Flags: create, read, list with filters, edit, move to a bank, delete."""

from django.urls import reverse
from ninja import Field, Query, Router
from ninja.responses import Status
from pydantic import model_validator

from oncore.api import created
from transcriber_tests import actions, queries
from transcriber_tests.models import Flag
from transcriber_tests.queries import lookups

from ..queries.people import edits_of
from ..shapes.flags import FlagEditOut, FlagOut, edit_out, flag_out, flags_out
from .errors import doc
from .schemas import BodyIn, CursorIn, CursorPage, DateRange, Id, Text, cursor_page

router = Router(tags=["Flags"])

TAGS_HELP = "Error tags: name, time, spelling, or your own words (lowercased; commas become spaces)."
CONFIRM_HELP = (
    "An expected text equal to the line's production transcript after normalization says the line was not "
    "wrong: "
    "it is refused (409 expected_matches_production) unless this is true."
)


def _check_tags(tags):
    if tags is not None:
        if any(len(t) > 50 for t in tags):
            raise ValueError("each tag is at most 50 characters")
        if len(Flag.encode_tags(tags)) > Flag._meta.get_field("tags").max_length:
            raise ValueError("the tags together are too long")
    return tags


EXPECTED_HELP = (
    "What the caller said, word for word. Text with no words (empty, or punctuation only) is refused with "
    "400 expected_text_empty."
)


class FlagIn(BodyIn):
    line_id: Id = Field(description="The caller line to flag (from a call's line_items).")
    expected_text: Text = Field(max_length=5000, description=EXPECTED_HELP)
    bank_id: Id | None = Field(None, description="The bank to score it in; omit or null to decide later.")
    tags: list[Text] = Field([], max_length=20, description=TAGS_HELP)
    note: Text = Field("", max_length=2000)
    confirm_matches_production: bool = Field(False, description=CONFIRM_HELP)

    @model_validator(mode="after")
    def _tags_fit(self):
        _check_tags(self.tags)
        return self


class FlagEdit(BodyIn):
    expected_text: Text | None = Field(
        None,
        max_length=5000,
        description="A new expected text re-scores every transcriber against it. " + EXPECTED_HELP,
    )
    tags: list[Text] | None = Field(None, max_length=20, description=TAGS_HELP + " Replaces the tags.")
    note: Text | None = Field(None, max_length=2000)
    confirm_matches_production: bool = Field(False, description=CONFIRM_HELP)

    @model_validator(mode="after")
    def _tags_fit(self):
        _check_tags(self.tags)
        return self


class MoveIn(BodyIn):
    bank_id: Id | None = Field(
        description="The bank to move the flag into, or null to take it out of every bank."
    )


class FlagFilters(CursorIn, DateRange):
    bank: Id | None = Field(None, description="Only flags in this bank (bank id).")
    unbanked: bool | None = Field(
        None, description="true: only flags in no bank; false: only flags in a bank."
    )
    tag: Text | None = Field(None, max_length=50, description="Only flags carrying this tag.")
    call: Id | None = Field(None, description="Only flags on this call's lines (call id).")


class FlagPage(CursorPage):
    items: list[FlagOut]


class FlagEditPage(CursorPage):
    items: list[FlagEditOut]


def _flags(request, **filters):
    return (
        queries.flags_list(request.org, **filters)
        .select_related("created_by", "created_by_key")
        .prefetch_related("controls")
    )


def _bank(request, bank_id):
    return None if bank_id is None else lookups.bank(request.org, bank_id)


FLAG_LINE_ERRORS = (
    "invalid_request",
    "not_found",
    "line_not_caller",
    "line_not_recorded",
    "recording_unavailable",
    "live_transcriber_unknown",
    "line_has_no_timing",
    "line_too_long",
    "flag_exists",
    "expected_text_empty",
    "expected_matches_production",
    "queue_full",
)


@router.post("/flags", **doc(201, FlagOut, "The new flag.", *FLAG_LINE_ERRORS))
def create_flag(request, body: FlagIn):
    """Flag a caller line with what was actually said. Into a bank, its control lines are sampled, the
    production transcript is scored at once and every candidate is queued; into no bank, it waits unscored."""
    line = lookups.line(request.org, body.line_id)
    flag = actions.do_flag_line(
        line,
        body.expected_text,
        bank=_bank(request, body.bank_id),
        tags=body.tags,
        note=body.note,
        key=request.api_key,
        confirm_matches_live=body.confirm_matches_production,
    )
    return created(
        request, reverse("api:get_flag", args=[flag.pk]), flag_out(_flags(request).get(pk=flag.pk))
    )


@router.get("/flags", **doc(200, FlagPage, "Flags, newest first."))
def list_flags(request, q: Query[FlagFilters]):
    """The organization's flags, newest first, filtered by bank (or in no bank: the unbanked flags page), tag,
    call and the days they were made; a cursor page at a time (`after`)."""
    qs = _flags(
        request,
        bank=q.bank,
        unbanked=q.unbanked,
        tag=q.tag or "",
        call=q.call,
        date_from=q.date_from,
        date_to=q.date_to,
    )
    return cursor_page(qs, q, flags_out, batch=True)


@router.get("/flags/{int:flag_id}", **doc(200, FlagOut, "The flag.", "not_found"))
def get_flag(request, flag_id: int):
    """One flag: its line, what was said, the production transcript, tags, note, its bank, who flagged it, its
    edit history and its control lines."""
    return flag_out(lookups.flag(request.org, flag_id))


@router.get(
    "/flags/{int:flag_id}/history",
    **doc(200, FlagEditPage, "The flag's edits, newest first.", "not_found"),
)
def flag_history(request, flag_id: int, q: Query[CursorIn]):
    """Every edit of the flag's expected text, tags or note, newest first, a cursor page at a time (`after`): who,
    when, old and new. The flag itself carries its latest edits (`history`, at most five) and
    how many there are (`history_count`)."""
    return cursor_page(edits_of(lookups.flag(request.org, flag_id)), q, edit_out, field="at")


@router.patch(
    "/flags/{int:flag_id}",
    **doc(
        200,
        FlagOut,
        "The edited flag.",
        "invalid_request",
        "not_found",
        "expected_text_empty",
        "expected_matches_production",
    ),
)
def edit_flag(request, flag_id: int, body: FlagEdit):
    """Change the expected text, tags or note; fields left out stay as they are. A new expected text re-scores
    the line and asks the judge for a new pick."""
    flag = lookups.flag(request.org, flag_id)
    actions.do_edit_flag(
        flag,
        expected_text=body.expected_text,
        tags=body.tags,
        note=body.note,
        confirm_matches_live=body.confirm_matches_production,
        key=request.api_key,
    )
    return flag_out(_flags(request).get(pk=flag.pk))


@router.post(
    "/flags/{int:flag_id}/move",
    **doc(200, FlagOut, "The moved flag.", "invalid_request", "not_found", "queue_full"),
)
def move_flag(request, flag_id: int, body: MoveIn):
    """Move the flag into a bank (scored there with that bank's candidates) or out of every bank."""
    flag = lookups.flag(request.org, flag_id)
    actions.do_move_flag(flag, _bank(request, body.bank_id))
    return flag_out(_flags(request).get(pk=flag.pk))


@router.delete("/flags/{int:flag_id}", **doc(204, None, "Deleted.", "not_found"))
def delete_flag(request, flag_id: int):
    """Delete the flag with its control lines and scores."""
    actions.do_delete_flag(lookups.flag(request.org, flag_id))
    return Status(204, None)
