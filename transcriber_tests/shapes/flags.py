"""A flag as the API and the flag.scored event show it."""

from datetime import datetime

from ninja import Field, Schema

from .refs import TenantRef, tenant_ref


class ControlOut(Schema):
    id: int
    line_id: int
    expected_text: str = Field(
        description="The control line's production transcript, stored when it was sampled."
    )


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
    controls: list[ControlOut]


def flag_out(flag) -> dict:
    line = flag.line
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
        "controls": [
            {"id": c.pk, "line_id": c.line_id, "expected_text": c.expected_text} for c in flag.controls.all()
        ],
    }
