"""The API's error codes and its one error shape: the registry both the API and the error guide page are built
from, the error the API layer raises, and `doc()`, which declares every error an operation can give.

The registry holds the API's own codes; the product apps add theirs with `register_error_codes`. Each code names
the shape of its `detail` (a Schema; `NoDetail` when it carries no facts), and an operation whose `detail` of a
code differs from that says so in `doc(..., details={code: Schema})` (`estimate_not_confirmed` carries a candidate
estimate on adding a candidate and a run estimate on starting a run). The schema (openapi.py) types every error
status of every operation with exactly its codes, each with its own `detail`."""

from dataclasses import dataclass
from typing import Any

from ninja import Field, Schema
from pydantic import ConfigDict


class Detail(Schema):
    """The facts of an error: only the fields listed (a client may rely on each)."""

    model_config = ConfigDict(extra="forbid")


class NoDetail(Detail):
    """No facts: `{}`."""


class FieldError(Schema):
    loc: list[str | int] = Field(description='Where: ["body", "expected_text"], ["query", "limit"], ...')
    msg: str
    type: str = Field(description="The kind of problem, e.g. missing, extra_forbidden, string_too_long.")


class ValidationDetail(Detail):
    errors: list[FieldError]


class RangeDetail(Detail):
    length: int = Field(description="The clip's size in bytes.")


class KeyReusedDetail(Detail):
    key: str = Field(description="The Idempotency-Key that was sent.")


class TooLargeDetail(Detail):
    size: int | None = Field(
        None, description="The uploaded file's size in bytes, when a file was too large."
    )


class AllowedDetail(Detail):
    allowed: list[str] = Field(description="The methods this path takes (also in the Allow header).")


class RateLimitDetail(Detail):
    group: str = Field(description="The group of endpoints the limit counts (results, turns, trust, ...).")
    limit: int = Field(description="Requests a key may send the group a minute.")
    retry_after: int = Field(description="Seconds to wait, as in the Retry-After header.")


class CallsNotFoundDetail(Detail):
    calls: list[int] | None = Field(None, description="The call ids not found in this organization.")


@dataclass(frozen=True)
class ErrorCode:
    code: str
    status: int
    title: str
    what_to_do: str
    source: str = "api"  # "api" here; an app's codes name their area ("flags", "runs", "import", ...)
    detail: type = NoDetail  # the shape of its `detail` (an operation may name another: doc(details=...))


# The codes of the API itself; each product app registers its own (register_error_codes) when its routers load.
ERROR_CODES = [
    # Authentication and requests.
    ErrorCode(
        "unauthorized",
        401,
        "No valid API key",
        "Send an active organization key in the header `Authorization: Bearer <key>`. Organization admins "
        "create keys under API keys in the dashboard, or with `manage.py create_api_key --org SLUG`. A key "
        "is shown once when it is created; a revoked or lost key cannot come back: create a new one.",
    ),
    ErrorCode(
        "tenant_key_not_allowed",
        403,
        "A tenant key was sent",
        "Transcriber testing spans every tenant of the organization, so this API takes organization keys "
        "only. Ask an organization admin for a key created without a tenant.",
    ),
    ErrorCode(
        "validation_error",
        422,
        "A parameter or field is invalid",
        '`detail.errors` lists each problem with its location (`loc`, e.g. ["body", "name"]), a message '
        "and a type. Fix those fields and send the request again.",
        detail=ValidationDetail,
    ),
    ErrorCode(
        "invalid_request",
        400,
        "The request cannot be used as sent",
        "The message says what is wrong, e.g. a body that is not JSON, or a new candidate order that does "
        "not list every current candidate exactly once (`detail.current` lists them).",
    ),
    ErrorCode(
        "not_found",
        404,
        "No such object in this organization",
        "Check the id and the path. Ids are stable, and every object belongs to one organization: an id "
        "of another organization answers 404, exactly like an id that never existed.",
    ),
    ErrorCode(
        "method_not_allowed",
        405,
        "Method not allowed on this path",
        "Use one of the methods in `detail.allowed` (also in the Allow header); the reference lists them.",
        detail=AllowedDetail,
    ),
    ErrorCode(
        "request_too_large",
        413,
        "The request or an uploaded file is too large",
        "The message gives the size and the limit. Send less at once: split a call import into several "
        "files, each with the recordings its calls name. The operator sets the limits "
        "(`ONCORE_MAX_REQUEST_MB`, `ONCORE_MAX_IMPORT_FILE_MB`).",
        detail=TooLargeDetail,
    ),
    ErrorCode(
        "range_not_satisfiable",
        416,
        "The audio range is outside the clip",
        "Ask for a byte range inside the clip; `detail.length` is its size in bytes. Omit the Range "
        "header to get the whole clip.",
        detail=RangeDetail,
    ),
    ErrorCode(
        "unsupported_media_type",
        415,
        "The body is not sent as JSON",
        "Send the JSON body with the header `Content-Type: application/json` (the call import alone is "
        "`multipart/form-data`).",
    ),
    ErrorCode(
        "idempotency_key_reused",
        409,
        "The Idempotency-Key was used for another request",
        "An `Idempotency-Key` stands for one request for 24 hours: sent again with the same body it replays the "
        "first answer, with another body it is refused. Use a new key (a random UUID) for each new request.",
        detail=KeyReusedDetail,
    ),
    ErrorCode(
        "rate_limited",
        429,
        "Too many requests for figures that cost the server",
        "A bank's results, turn table, trust figures, confusion pairs, expected texts to check and the CSV "
        "exports take work that grows with the data, so each key may send each group of them a number of "
        "requests a minute (60 unless the operator set `ONCORE_RATE_LIMIT_PER_MINUTE`). Wait the seconds in "
        "`Retry-After` (also `detail.retry_after`), then send the request again; poll no faster than you need.",
        detail=RateLimitDetail,
    ),
    ErrorCode(
        "internal_error",
        500,
        "Something failed on the server",
        "The error was logged. Retrying is safe for reads and for writes whose effect you can check "
        "first (list the flags, banks or candidates); if it keeps failing, report the time and request.",
    ),
]
ERRORS = {e.code: e for e in ERROR_CODES}


def register_error_codes(*codes: ErrorCode) -> None:
    """Add an app's own codes to the registry (the API answers with them, the error guide lists them). A code
    registered twice must not change: two apps cannot give one code two meanings."""
    for code in codes:
        if ERRORS.get(code.code, code) != code:
            raise ValueError(f"Error code {code.code!r} is already registered differently.")
        if code.code not in ERRORS:
            ERROR_CODES.append(code)
            ERRORS[code.code] = code


class ApiError(Exception):
    """An error raised by the API layer itself (authentication, uploads, ranges); `code` is in ERRORS."""

    def __init__(self, code: str, message: str, detail: dict | None = None, headers: dict | None = None):
        super().__init__(message)
        self.code = code
        self.status = ERRORS[code].status
        self.message = message
        self.detail = detail or {}
        self.headers = headers or {}


class ErrorBody(Schema):
    code: str
    message: str
    detail: dict[str, Any]


class ErrorOut(Schema):
    """The one error shape. `code` is stable; `message` says what to do; `detail` carries facts (may be {})."""

    error: ErrorBody


# Every operation can answer these.
COMMON_CODES = ("unauthorized", "tenant_key_not_allowed", "validation_error", "internal_error")


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def describe_codes(codes) -> str:
    """The description of an error status in the reference: its codes, each with its title."""
    return (
        "Error codes: "
        + "; ".join(f"`{c}` ({_lower_first(ERRORS[c].title)})" for c in codes)
        + ". See the error guide for what to do about each."
    )


# Bodies that are not JSON. CSV is text, so generated clients hand it over as a string; the audio is bytes, also
# declared as application/octet-stream so that clients which know only that media type read the same bytes.
CSV_CONTENT = {"text/csv": {"schema": {"type": "string"}}}
WAV_CONTENT = {
    media: {"schema": {"type": "string", "format": "binary"}}
    for media in ("audio/wav", "application/octet-stream")
}


# Detail schemas an operation names for a code (doc(details=...)), by name: the schema (openapi.py) reads them.
DETAIL_SCHEMAS: dict[str, type] = {}


def detail_name(schema: type) -> str:
    """A detail schema's name, registered so the OpenAPI schema can write it; two schemas cannot share a name."""
    name = schema.__name__
    if DETAIL_SCHEMAS.setdefault(name, schema) is not schema:
        raise ValueError(f"Two detail schemas are named {name}.")
    return name


def doc(
    ok_status: int,
    ok_schema,
    ok_description: str,
    *codes: str,
    content: dict | None = None,
    details: dict[str, type] | None = None,
) -> dict:
    """Keyword arguments for a router decorator: the success response and every error the operation can give,
    each status described with its codes (also listed, for programs, in `x-error-codes`), so the reference lists
    them and the schema types each status's body with exactly its codes. `content` declares a body that is not
    JSON (CSV_CONTENT, WAV_CONTENT); `details` names the `detail` shape of a code where this operation's differs
    from the code's own (ErrorCode.detail)."""
    by_status: dict[int, list[str]] = {}
    for code in (*COMMON_CODES, *codes):
        by_status.setdefault(ERRORS[code].status, [])
        if code not in by_status[ERRORS[code].status]:
            by_status[ERRORS[code].status].append(code)
    unknown = set(details or {}) - {c for cs in by_status.values() for c in cs}
    if unknown:
        raise ValueError(f"doc(details=...) names codes the operation does not give: {sorted(unknown)}")
    response = {ok_status: ok_schema, **dict.fromkeys(sorted(by_status), ErrorOut)}
    described = {ok_status: {"description": ok_description}}
    if content:
        described[ok_status]["content"] = content
    for status, status_codes in sorted(by_status.items()):
        described[status] = {"description": describe_codes(status_codes), "x-error-codes": status_codes}
        named = {c: detail_name(details[c]) for c in status_codes if c in (details or {})}
        if named:
            described[status]["x-error-details"] = named
    return {"response": response, "openapi_extra": {"responses": described}}
