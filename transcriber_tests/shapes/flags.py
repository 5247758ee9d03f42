"""A flag as the API and the flag.scored event show it."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from ..queries.people import RECENT_EDITS, History, edit_of, histories
from .refs import TenantRef, tenant_ref


class ControlOut(Schema):
    id: int
    line_id: int
    expected_text: str = Field(
        description="The control line's production transcript, stored when it was sampled."
    )


class FlagEditOut(Schema):
    at: datetime
    by: str | None = Field(
        description='Who edited it: a user name, or "API key <name> (<prefix>…)"; null if unknown.'
    )
    field: Literal["expected_text", "tags", "note"]
    old: str = Field(description="Before the edit (tags space-separated).")
    new: str = Field(description="After the edit.")


class FlagOut(Schema):
    id: int
    line_id: int
    call_id: int
    tenant: TenantRef
    bank_id: int | None = Field(description="Null while the flag waits in no bank, unscored.")
    expected_text: str
    production_text: str = Field(description="The line's production transcript (the live one), as stored.")
    tags: list[str]
    note: str
    created_at: datetime
    updated_at: datetime
    flagged_by: str | None = Field(
        description='Who made the flag: a user name (the dashboard) or "API key <name> (<prefix>…)"; null for a '
        "flag made before who flagged was recorded, or whose maker was deleted."
    )
    typed_by: str | None = Field(
        description="Who typed its current expected text: the last person to edit it, else who made the flag."
    )
    history: list[FlagEditOut] = Field(
        description=f"Its latest edits of its expected text, tags or note (at most {RECENT_EDITS}), oldest first: "
        "who, when, old and new. GET /flags/{flag_id}/history pages through every one."
    )
    history_count: int = Field(description="How many edits it has had in all (`history` shows the latest).")
    controls: list[ControlOut]


def edit_out(e) -> dict:
    """An edit (queries.people.Edit, or a FlagEdit row) as the API shows it."""
    e = e if hasattr(e, "field_label") else edit_of(e)
    return {"at": e.at, "by": e.by or None, "field": e.field, "old": e.old, "new": e.new}


def flags_out(flags) -> list[dict]:
    """Several flags, their histories read together (one query, whatever their edits)."""
    found = histories(flags)
    return [flag_out(f, found[f.pk]) for f in flags]


def flag_out(flag, history: History | None = None) -> dict:
    line = flag.line
    history = history or histories([flag])[flag.pk]
    return {
        "id": flag.pk,
        "line_id": line.pk,
        "call_id": line.call_id,
        "tenant": tenant_ref(line.call.tenant),
        "bank_id": flag.bank_id,
        "expected_text": flag.expected_text,
        "production_text": line.text,
        "tags": flag.tag_list,
        "note": flag.note,
        "created_at": flag.created_at,
        "updated_at": flag.updated_at,
        "flagged_by": history.flagged_by or None,
        "typed_by": history.typed_by or None,
        "history": [edit_out(e) for e in history.edits],
        "history_count": history.count,
        "controls": [
            {"id": c.pk, "line_id": c.line_id, "expected_text": c.expected_text} for c in flag.controls.all()
        ],
    }
