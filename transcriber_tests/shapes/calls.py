"""The organization, its assistants, calls and their lines as the API shows them (GET /organization, /assistants,
/calls, /calls/{id}), and what a call import did (POST /calls/import)."""

from datetime import datetime
from typing import Literal

from django.urls import reverse
from ninja import Field, Schema

from .refs import AssistantRef, TenantRef, TranscriberRef, tenant_ref, transcriber_ref

# Every code a line can carry in `not_flaggable` (queries/lines.why_not_flaggable, and a line already flagged).
LINE_REASONS = Literal[
    "line_not_caller",
    "line_not_recorded",
    "live_transcriber_unknown",
    "line_has_no_timing",
    "line_too_long",
    "recording_unavailable",
    "flag_exists",
]


class Reason(Schema):
    code: LINE_REASONS = Field(
        description="The error code flagging this line would give; see the error guide."
    )
    message: str


class FlagBrief(Schema):
    id: int
    bank_id: int | None
    expected_text: str
    tags: list[str]


class OrganizationOut(Schema):
    id: int
    name: str
    slug: str
    tenants: list[TenantRef]


def organization_out(org) -> dict:
    return {
        "id": org.pk,
        "name": org.name,
        "slug": org.slug,
        "tenants": [tenant_ref(t) for t in org.tenants.order_by("name", "id")],
    }


class AssistantOut(Schema):
    id: int
    name: str
    tenant: TenantRef
    transcriber: TranscriberRef | None = Field(description="The transcriber the assistant is set to now.")
    records_from: datetime | None = Field(
        description="Recording: the assistant records calls that start from then on; null when it records none."
    )
    records_until: datetime | None = Field(
        description="When recording was turned off again (calls from then on are not recorded); null while it "
        "still records. A call imported without `recorded` is recorded when it started in this period."
    )


def assistant_out(a) -> dict:
    return {
        "id": a.pk,
        "name": a.name,
        "tenant": tenant_ref(a.tenant),
        "transcriber": transcriber_ref(a.transcriber),
        "records_from": a.records_from,
        "records_until": a.records_until,
    }


class CallOut(Schema):
    id: int
    external_id: str = Field(description="The caller system's id; empty when none was imported.")
    tenant: TenantRef
    assistant: AssistantRef | None
    started_at: datetime
    recorded: bool = Field(
        description="Whether the call was recorded: as its calls file said, or else whether it came with its "
        "recording or its assistant was recording calls when it started (`records_from`, `records_until`)."
    )
    has_recording: bool = Field(
        description="Whether its recording is here to replay: a call's lines can be tested only when it is "
        "(the lines' `not_flaggable` says why not)."
    )
    live_transcriber: TranscriberRef | None = Field(
        description="The transcriber the call ran on; null when only its name is known or nothing is."
    )
    live_transcriber_name: str = Field(description="For older calls: the live transcriber's name as stored.")
    lines: int = Field(description="Number of lines.")
    flags: int = Field(description="Number of flagged lines.")


def call_out(call, n_lines, n_flags) -> dict:
    return {
        "id": call.pk,
        "external_id": call.external_id,
        "tenant": tenant_ref(call.tenant),
        "assistant": {"id": call.assistant.pk, "name": call.assistant.name} if call.assistant_id else None,
        "started_at": call.started_at,
        "recorded": call.recorded,
        "has_recording": call.recorded and bool(call.recording),
        "live_transcriber": transcriber_ref(call.live_transcriber),
        "live_transcriber_name": call.live_transcriber_name,
        "lines": n_lines,
        "flags": n_flags,
    }


class LineOut(Schema):
    id: int
    position: int
    speaker: Literal["caller", "assistant"] = Field(
        description="Who spoke the line: only caller lines can be flagged."
    )
    text: str = Field(description="The line's production transcript (the live one), as stored.")
    start_s: float | None
    end_s: float | None
    flaggable: bool = Field(description="Whether POST /flags would accept this line now.")
    not_flaggable: Reason | None = Field(
        description="Why not, with the error code flagging would give; on a call without its recording "
        "(`line_not_recorded`) the message says what its assistant's recording setting was then."
    )
    flag: FlagBrief | None
    audio_url: str | None = Field(description="The line's audio (WAV); null when there is none to play.")


class CallDetail(CallOut):
    live_transcriber_known: bool = Field(description="Whether the live transcriber is in the catalogue.")
    line_items: list[LineOut]


def line_out(row) -> dict:
    line, flag = row.line, row.flag
    return {
        "id": line.pk,
        "position": line.position,
        "speaker": line.speaker,
        "text": line.text,
        "start_s": line.start_s,
        "end_s": line.end_s,
        "flaggable": row.flaggable,
        "not_flaggable": {"code": row.problem.code, "message": row.problem.message} if row.problem else None,
        "flag": {
            "id": flag.pk,
            "bank_id": flag.bank_id,
            "expected_text": flag.expected_text,
            "tags": flag.tag_list,
        }
        if flag
        else None,
        "audio_url": reverse("api:line_audio", args=[line.pk]) if row.playable else None,
    }


class ImportOut(Schema):
    tenants: int = Field(description="Tenants created.")
    assistants: int = Field(description="Assistants created.")
    calls: int = Field(description="Calls imported.")
    lines: int = Field(description="Lines imported.")
    skipped: int = Field(
        description="Calls skipped because they were imported before (same tenant, external_id)."
    )
