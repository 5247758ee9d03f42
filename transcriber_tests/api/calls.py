"""Catalogue, organization, calls (list, detail with lines, import) and a line's audio; what they answer is built
in shapes/calls.py and shapes/refs.py."""

import tempfile
import uuid
from pathlib import Path
from typing import Annotated

from ninja import Field, File, Header, Query, Router
from ninja.files import UploadedFile
from pydantic import AfterValidator, StringConstraints

from oncore import audio
from oncore.api import ApiError
from oncore.calls import importer
from oncore.http import clip_response
from oncore.transcribers.models import Transcriber
from oncore.transcribers.options import GENERIC_PROTOCOL
from transcriber_tests import queries
from transcriber_tests.queries import lookups
from transcriber_tests.queries.lines import live_transcriber_of

from ..shapes.calls import (
    AssistantOut,
    CallDetail,
    CallOut,
    ImportOut,
    OrganizationOut,
    assistant_out,
    call_out,
    line_out,
    organization_out,
)
from ..shapes.refs import (
    TranscriberOut,
    transcriber_out,
)
from .errors import WAV_CONTENT, doc
from .schemas import (
    CursorPage,
    DateRange,
    Id,
    Page,
    PageIn,
    Text,
    page,
    page_of,
)

catalogue = Router(tags=["Catalogue and organization"])
calls = Router(tags=["Calls"])

TenantKey = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[-a-zA-Z0-9_]+$")]


def _tenant_id(organization, value: str | None) -> int | None:
    """The id of the organization's tenant a filter names by id or slug; a tenant it does not have is refused
    (422 validation_error naming it), never answered with an empty list."""
    if value is None:
        return None
    found = lookups.tenant_id(organization, value)
    if found is None:
        message = f"No tenant {value!r} in this organization: name one by its id or slug (GET /organization lists them)."
        raise ApiError(
            "validation_error",
            f"Invalid request: query.tenant: {message}",
            {"errors": [{"loc": ["query", "tenant"], "msg": message, "type": "value_error"}]},
        )
    return found


# ---------------------------------------------------------------- catalogue and organization


class TranscriberFilters(PageIn):
    enabled: bool | None = Field(None, description="Only enabled (true) or disabled (false) transcribers.")
    provider: Text | None = Field(
        None, max_length=32, description="Only this provider, e.g. deepgram (any case)."
    )


class TranscriberPage(Page):
    items: list[TranscriberOut]


# What the catalogue operations say about where entries come from (docs/transcribers.md says the same).
CATALOGUE_NOTE = (
    "Read-only: an operator adds an entry on the server with `manage.py add_transcriber PROVIDER MODEL` (its "
    "price per minute with `--price-source` and `--price-date`, `--options` as JSON, `--no-enabled`), whose "
    "`--help` lists each provider's options; the options and the key's environment variable are not shown here. "
    f"Providers: {', '.join(p for p, _label in Transcriber.PROVIDERS)}. {GENERIC_PROTOCOL}"
)


@catalogue.get(
    "/transcribers",
    description="The transcribers a bank can compare (candidates) or a call can have run on (live "
    "transcribers), by display name; `enabled=true` lists those a bank can add. " + CATALOGUE_NOTE,
    **doc(200, TranscriberPage, "The catalogue, by display name."),
)
def list_transcribers(request, q: Query[TranscriberFilters]):
    return page(queries.catalogue(enabled=q.enabled, provider=q.provider), q, transcriber_out)


@catalogue.get(
    "/transcribers/{int:transcriber_id}",
    description="One catalogue entry: provider, model, list price with its source and date, deprecation date "
    "and whether banks can add it. " + CATALOGUE_NOTE,
    **doc(200, TranscriberOut, "The transcriber.", "not_found"),
)
def get_transcriber(request, transcriber_id: int):
    return transcriber_out(lookups.transcriber(transcriber_id))


@catalogue.get("/organization", **doc(200, OrganizationOut, "The key's organization and its tenants."))
def get_organization(request):
    """The organization the key belongs to. Use its tenant ids to filter calls."""
    return organization_out(request.org)


class AssistantFilters(PageIn):
    tenant: TenantKey | None = Field(None, description="Only this tenant's assistants (tenant id or slug).")


class AssistantPage(Page):
    items: list[AssistantOut]


@catalogue.get("/assistants", **doc(200, AssistantPage, "Assistants of every tenant, by name."))
def list_assistants(request, q: Query[AssistantFilters]):
    """The assistants of the organization's tenants, each with the transcriber it is set to and its recording
    setting (`records_from`, `records_until`), which decides whether an imported call without `recorded` was
    recorded."""
    qs = queries.assistants_of(request.org, tenant=_tenant_id(request.org, q.tenant))
    return page(qs, q, assistant_out)


# ---------------------------------------------------------------- calls


class CallFilters(PageIn, DateRange):
    tenant: TenantKey | None = Field(None, description="Only this tenant's calls (tenant id or slug).")
    external_id: Text | None = Field(
        None, max_length=200, description="Only the call with this id of yours (`external_id` at import)."
    )
    assistant: Id | None = Field(None, description="Only this assistant's calls (assistant id).")
    has_flags: bool | None = Field(
        None, description="true: only calls with a flagged line; false: only without."
    )
    after: (
        Annotated[str, StringConstraints(max_length=40), AfterValidator(queries.CallCursor.parse)] | None
    ) = Field(
        None,
        description="Start after this call: the `next_after` of the page before (keyset pages, as quick deep in "
        "the list as at its start; combine with the same filters, offset 0).",
    )


class CallPage(CursorPage):
    items: list[CallOut]


@calls.get("/calls", **doc(200, CallPage, "Calls, newest first."))
def list_calls(request, q: Query[CallFilters]):
    """Every tenant's calls, newest first, filtered like the dashboard's calls page."""
    found = queries.calls_page(
        request.org,
        after=q.after,
        offset=q.offset,
        size=q.limit,
        exact=True,
        tenant=_tenant_id(request.org, q.tenant),
        external_id=q.external_id,
        assistant=q.assistant,
        date_from=q.date_from,
        date_to=q.date_to,
        has_flags=q.has_flags,
    )
    items = [call_out(c, c.n_lines, c.n_flags) for c in found.calls]
    return {
        **page_of(found.total, q, items),
        "has_more": found.next_after is not None,
        "next_after": str(found.next_after) if found.next_after else None,
    }


@calls.get("/calls/{int:call_id}", **doc(200, CallDetail, "The call with its lines.", "not_found"))
def get_call(request, call_id: int):
    """The call and every line in order, each with whether it can be flagged and, if not, why."""
    call = lookups.call(request.org, call_id)
    items = [line_out(row) for row in queries.line_rows(call)]
    out = call_out(call, len(items), sum(1 for i in items if i["flag"]))
    out.update(live_transcriber_known=live_transcriber_of(call) is not None, line_items=items)
    return out


@calls.post(
    "/calls/import",
    **doc(
        200,
        ImportOut,
        "Counts of what was imported.",
        "invalid_request",
        "import_format_error",
        "recording_missing",
        "request_too_large",
    ),
)
def import_calls(request, file: File[UploadedFile], recordings: File[list[UploadedFile]] = None):
    """Import calls in the documented JSON format (`oncore-calls/1`), as multipart/form-data: the JSON as the
    `file` part and each recording a call names as a `recordings` part whose file name is that name.
    Calls already imported (same tenant and external_id) are skipped, so importing twice changes nothing."""
    try:
        importer.check_file_size(file.size, file.name)
    except importer.ImportFormatError as exc:
        raise ApiError("request_too_large", str(exc), {"size": file.size}) from None
    uploaded = {f.name: f for f in recordings or []}
    with tempfile.TemporaryDirectory(prefix="oncore-import-") as folder:
        for name, upload in uploaded.items():
            if not importer.plain_file_name(name):
                raise ApiError(
                    "import_format_error", f"The recording {name!r} must be sent under a plain file name."
                )
            with (Path(folder) / name).open("wb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
        path = Path(folder) / f"calls-{uuid.uuid4().hex}.json"
        with path.open("wb") as out:
            for chunk in file.chunks():
                out.write(chunk)
        try:
            return importer.do_import_calls(path, request.org, name=file.name)
        except importer.RecordingMissing as exc:
            raise ApiError(
                "recording_missing", str(exc), {"missing": exc.missing, "uploaded": sorted(uploaded)}
            ) from None
        except importer.ImportFormatError as exc:
            raise ApiError(
                "import_format_error", str(exc), {"errors": exc.errors} if exc.errors else None
            ) from None
        except audio.AudioError as exc:
            raise ApiError("import_format_error", str(exc)) from None


# ---------------------------------------------------------------- a line's audio

_audio_doc = doc(
    200,
    None,
    "The whole clip (WAV).",
    "not_found",
    "line_not_recorded",
    "line_has_no_timing",
    "recording_unavailable",
    "range_not_satisfiable",
    content=WAV_CONTENT,
)
_audio_doc["response"][206] = None
_audio_doc["openapi_extra"]["responses"][206] = {
    "description": "The requested byte range of the clip (WAV), with Content-Range.",
    "content": WAV_CONTENT,
}
OCTET_STREAM = "application/octet-stream"


@calls.get("/lines/{int:line_id}/audio", url_name="line_audio", **_audio_doc)
def line_audio(
    request,
    line_id: int,
    range: str | None = Header(  # noqa: A002 (the header's name)
        None,
        alias="Range",
        max_length=200,
        description="`bytes=START-END`, `bytes=START-` or `bytes=-SUFFIX`: part of the clip (206), for seeking.",
    ),
):
    """The line's clip as played on the dashboard: both channels, with the margin on each side. Send a
    `Range: bytes=START-END` header to get part of it (206), e.g. for seeking in a player. The body is a WAV file,
    sent as audio/wav, or as application/octet-stream to a client that accepts only that."""
    line = lookups.line(request.org, line_id)
    clip = queries.line_clip(line)
    try:
        response = clip_response(request, clip)
    except ValueError:
        raise ApiError(
            "range_not_satisfiable",
            f"The clip is {clip.wav_size} bytes; that range is outside it.",
            {"length": clip.wav_size},
            {"Content-Range": f"bytes */{clip.wav_size}"},
        ) from None
    accepted = request.headers.get("Accept", "")
    if OCTET_STREAM in accepted and "audio/" not in accepted:
        response["Content-Type"] = OCTET_STREAM
    return response
