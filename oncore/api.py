"""The REST API under /api/v1/: the NinjaAPI instance, organization-key authentication, the one error shape and
the registry of error codes that both the API and the error guide page are built from.

Every error, whatever raised it, answers {"error": {"code": ..., "message": ..., "detail": {...}}}:
actions' ActionErrors (oncore.errors) keep their own code and status, validation errors are 422
`validation_error`, unknown objects and paths 404 `not_found`, and an unexpected exception is logged and answered
500 `internal_error`. The registry holds the API's own codes; the product apps add theirs with
`register_error_codes`. The routers live in the product apps (transcriber_tests/api/), which mount them on `api`;
oncore/urls.py does that before it includes `urls()`."""

import functools
import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.db.models import Q
from django.http import Http404, HttpResponseNotAllowed, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.urls import re_path, reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.views.decorators.csrf import csrf_exempt
from ninja import Field, NinjaAPI, Schema
from ninja.errors import HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.openapi.docs import DocsBase
from ninja.parser import Parser
from ninja.renderers import JSONRenderer
from ninja.responses import NinjaJSONEncoder, Status
from ninja.security import HttpBearer
from pydantic import AfterValidator, ConfigDict

from oncore import idempotency
from oncore.accounts.models import ApiKey, hash_key
from oncore.errors import ActionError
from oncore.formats import iso_time
from oncore.http import MAX_ID
from oncore.middleware import too_large_message

log = logging.getLogger(__name__)

# ---------------------------------------------------------------- the registry of error codes


@dataclass(frozen=True)
class ErrorCode:
    code: str
    status: int
    title: str
    what_to_do: str
    source: str = "api"  # "api" here; an app's codes name their area ("flags", "runs", "import", ...)


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
    ),
    ErrorCode(
        "request_too_large",
        413,
        "The request or an uploaded file is too large",
        "The message gives the size and the limit. Send less at once: split a call import into several "
        "files, each with the recordings its calls name. The operator sets the limits "
        "(`ONCORE_MAX_REQUEST_MB`, `ONCORE_MAX_IMPORT_FILE_MB`).",
    ),
    ErrorCode(
        "range_not_satisfiable",
        416,
        "The audio range is outside the clip",
        "Ask for a byte range inside the clip; `detail.length` is its size in bytes. Omit the Range "
        "header to get the whole clip.",
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


def error_body(code: str, message: str, detail: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "detail": detail or {}}}


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


def doc(ok_status: int, ok_schema, ok_description: str, *codes: str, content: dict | None = None) -> dict:
    """Keyword arguments for a router decorator: the success response and every error the operation can give,
    each status described with its codes (also listed, for programs, in `x-error-codes`), so the reference lists
    them. `content` declares a body that is not JSON (CSV_CONTENT, WAV_CONTENT)."""
    by_status: dict[int, list[str]] = {}
    for code in (*COMMON_CODES, *codes):
        by_status.setdefault(ERRORS[code].status, [])
        if code not in by_status[ERRORS[code].status]:
            by_status[ERRORS[code].status].append(code)
    response = {ok_status: ok_schema, **dict.fromkeys(sorted(by_status), ErrorOut)}
    described = {ok_status: {"description": ok_description}}
    if content:
        described[ok_status]["content"] = content
    for status, status_codes in sorted(by_status.items()):
        described[status] = {"description": describe_codes(status_codes), "x-error-codes": status_codes}
    return {"response": response, "openapi_extra": {"responses": described}}


# ---------------------------------------------------------------- what every router uses

MAX_LIMIT = 200


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain the NUL character")
    return value


# Text the database can store on every backend (PostgreSQL refuses NUL characters).
Text = Annotated[str, AfterValidator(_no_nul)]
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
Money = Annotated[
    str, Field(pattern=r"^-?[0-9]+\.[0-9]{6}$", description="USD, a decimal string with six places.")
]


class BodyIn(Schema):
    """A JSON request body: a field it does not list is refused with 422 (`extra_forbidden`)."""

    model_config = ConfigDict(extra="forbid")


class PageIn(Schema):
    limit: int = Field(50, ge=1, le=MAX_LIMIT, description=f"Items per page, at most {MAX_LIMIT}.")
    offset: int = Field(0, ge=0, le=10**9, description="Items to skip.")


class Page(Schema):
    count: int = Field(description="Items matching the filters, on every page.")
    limit: int
    offset: int
    has_more: bool = Field(description="Whether items follow this page (ask again with offset + limit).")


def page(queryset, q: PageIn, convert) -> dict:
    """One page of an ordered queryset: two queries, whatever the page size."""
    return page_of(queryset.count(), q, [convert(obj) for obj in queryset[q.offset : q.offset + q.limit]])


def page_of(count: int, q: PageIn, items: list) -> dict:
    return {
        "count": count,
        "limit": q.limit,
        "offset": q.offset,
        "has_more": q.offset + len(items) < count,
        "items": items,
    }


def get_or_404(queryset, pk: int, what: str, field: str = "pk"):
    """The object with this id (in `field`) among `queryset` (already limited to the organization), else
    not_found."""
    obj = queryset.filter(**{field: pk}).first() if 0 < pk <= MAX_ID else None
    if obj is None:
        raise ApiError("not_found", f"No {what} with id {pk} in this organization.")
    return obj


# ---------------------------------------------------------------- authentication

TOUCH_EVERY = timedelta(minutes=1)


class OrganizationKey(HttpBearer):
    """`Authorization: Bearer <organization key>`. Sets request.org; a tenant key is refused with 403."""

    def __call__(self, request):
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if not header:
            raise ApiError(
                "unauthorized", "No API key: send your organization key as 'Authorization: Bearer <key>'."
            )
        if scheme.lower() != "bearer" or not token:
            raise ApiError("unauthorized", "The Authorization header must be 'Bearer <key>'.")
        return self.authenticate(request, token)

    def authenticate(self, request, token):
        key = ApiKey.objects.select_related("organization").filter(hashed_key=hash_key(token)).first()
        if key is None or not key.matches(token):
            raise ApiError(
                "unauthorized", "This API key is not known. Check it was copied whole, or create a new one."
            )
        if key.revoked_at is not None:
            raise ApiError("unauthorized", f"This API key ({key.prefix}…) was revoked; create a new one.")
        if key.tenant_id is not None:
            raise ApiError(
                "tenant_key_not_allowed",
                f"This is a tenant key ({key.prefix}…). Transcriber testing spans every tenant of the "
                "organization, so the API needs an organization key: create one without a tenant.",
            )
        now = timezone.now()
        if key.last_used_at is None or now - key.last_used_at >= TOUCH_EVERY:
            # One conditional UPDATE at most once a minute per key, however many requests arrive.
            ApiKey.objects.filter(pk=key.pk).filter(
                Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - TOUCH_EVERY)
            ).update(last_used_at=now)
        request.org = key.organization
        request.api_key = key
        return key


# ---------------------------------------------------------------- the reference page


class ReferencePage(DocsBase):
    """A server-rendered reference built from the OpenAPI schema: works offline, loads no script."""

    def render_page(self, request, api, **kwargs):
        schema = api.get_openapi_schema(path_params=kwargs)
        return render(request, "api/reference.html", reference_context(schema))


def code_spans(text: str) -> str:
    """Escape the text and show `backquoted` parts as code, for the reference and the error guide."""
    return mark_safe(re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text or "")))


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def type_label(schema: dict) -> str:
    """A short human name for a JSON schema: 'integer', 'FlagOut', 'array of string', 'string or null'."""
    if not schema:
        return "any"
    if "$ref" in schema:
        return _ref_name(schema["$ref"])
    for combo in ("anyOf", "oneOf", "allOf"):
        if combo in schema:
            return " or ".join(dict.fromkeys(type_label(s) for s in schema[combo]))
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    kind = schema.get("type", "object")
    if kind == "array":
        return f"array of {type_label(schema.get('items', {}))}"
    if schema.get("format"):
        return f"{kind} ({schema['format']})"
    return kind


def _limits(schema: dict) -> str:
    parts = []
    for key, label in (
        ("minimum", "≥"),
        ("maximum", "≤"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
    ):
        if key in schema:
            parts.append(f"{label} {schema[key]}")
    if "default" in schema:
        parts.append(f"default {schema['default']!r}")
    return ", ".join(parts)


def _fields(schema: dict) -> list[dict]:
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "type": type_label(prop),
            "required": name in required,
            "limits": _limits(prop),
            "description": code_spans(prop.get("description", "")),
        }
        for name, prop in schema.get("properties", {}).items()
    ]


def reference_context(schema: dict) -> dict:
    components = schema.get("components", {}).get("schemas", {})

    def resolved(s: dict) -> dict:
        return components.get(_ref_name(s["$ref"]), {}) if "$ref" in s else s

    operations = []
    for path, methods in schema.get("paths", {}).items():
        for method, op in methods.items():
            body = None
            if "requestBody" in op:
                content_type, media = next(iter(op["requestBody"]["content"].items()))
                body_schema = media.get("schema", {})
                body = {
                    "content_type": content_type,
                    "type": type_label(body_schema),
                    "fields": _fields(resolved(body_schema)),
                }
            operations.append(
                {
                    "id": op.get("operationId", ""),
                    "method": method.upper(),
                    "path": path,
                    "tag": (op.get("tags") or ["API"])[0],
                    "summary": op.get("summary", ""),
                    "description": code_spans(op.get("description", "")),
                    "parameters": [
                        {
                            "name": p["name"],
                            "in": p["in"],
                            "required": p.get("required", False),
                            "type": type_label(p.get("schema", {})),
                            "limits": _limits(p.get("schema", {})),
                            "description": code_spans(p.get("description", "")),
                        }
                        for p in op.get("parameters", [])
                    ],
                    "body": body,
                    "responses": [
                        {
                            "status": status,
                            "description": code_spans(r.get("description", "")),
                            "types": [
                                f"{ct}: {type_label(m.get('schema', {}))}"
                                for ct, m in r.get("content", {}).items()
                            ],
                        }
                        for status, r in sorted(
                            op.get("responses", {}).items(), key=lambda item: str(item[0])
                        )
                    ],
                }
            )
    tags: dict[str, list] = {}
    for op in operations:
        tags.setdefault(op["tag"], []).append(op)
    info = schema.get("info", {})
    return {
        "info": {**info, "description": code_spans(info.get("description", ""))},
        "tags": list(tags.items()),
        "schemas": [
            {
                "name": name,
                "description": code_spans(s.get("description", "")),
                "fields": _fields(s),
                "type": type_label(s) if "properties" not in s else "object",
            }
            for name, s in sorted(components.items())
        ],
        "openapi_url": reverse("api:openapi-json"),
        "errors_url": reverse("api_errors"),
    }


# ---------------------------------------------------------------- the API and its error handlers


# Seconds a client is asked to wait after 429 (queue_full): the queue drains in minutes, not seconds.
RETRY_AFTER_S = 60


class ApiJSONEncoder(NinjaJSONEncoder):
    """Times as the CSV downloads and webhooks write them (oncore.formats)."""

    def default(self, o):
        if isinstance(o, datetime):
            return iso_time(o)
        return super().default(o)


class ApiRenderer(JSONRenderer):
    encoder_class = ApiJSONEncoder


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or content_type.endswith("+json")


class JsonBodyParser(Parser):
    """A JSON body must say so in its Content-Type (ninja wraps what this raises in a 400; `_http_error` answers
    the ApiError it carries)."""

    def parse_body(self, request):
        if not _is_json(request.content_type or ""):
            raise ApiError(
                "unsupported_media_type",
                f"The body was sent as {request.content_type or 'no Content-Type'}; send it as JSON with "
                "`Content-Type: application/json`.",
            )
        return super().parse_body(request)


class OnCoreAPI(NinjaAPI):
    def get_openapi_operation_id(self, operation) -> str:
        return operation.view_func.__name__  # unique across the routers; short ids for generated clients

    def add_router(self, prefix, router, **kwargs):
        """Every POST of every router honours an Idempotency-Key (oncore.idempotency)."""
        for path_view in router.path_operations.values():
            for operation in path_view.operations:
                if "POST" in operation.methods:
                    operation.view_func = idempotency.once(operation.view_func, self._render)
        super().add_router(prefix, router, **kwargs)

    def _render(self, value) -> str:
        return json.dumps(value, cls=ApiJSONEncoder)

    def create_temporal_response(self, request):
        """The response the operation's result is written into: kept on the request, so an operation can add
        headers to it (`created` sets Location; a replayed request sets Location and Idempotent-Replayed)."""
        response = super().create_temporal_response(request)
        request.api_response = response
        return response

    def get_openapi_schema(self, **kwargs):
        schema = super().get_openapi_schema(**kwargs)
        complete_schema(schema)
        return schema


def created(request, location: str, value) -> Status:
    """201 with a Location header naming the new object's URL."""
    request.api_response["Location"] = location
    return Status(201, value)


# ---------------------------------------------------------------- what the schema says beyond ninja's own

IDEMPOTENCY_PARAMETER = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Any unique string up to 255 characters (a random UUID). The same key and request within 24 "
    "hours replays the first answer without doing the work again; the same key with another request is refused "
    "(409 `idempotency_key_reused`).",
    "schema": {"type": "string", "minLength": 1, "maxLength": idempotency.MAX_KEY_LENGTH},
}
HEADERS = {
    "RequestId": (
        "X-Request-Id",
        "The request's id: the one the client sent in X-Request-Id, else a new one. It is in the server's log "
        "line of the request; quote it when reporting a problem.",
    ),
    "Location": ("Location", "The URL of the new object."),
    "RetryAfter": ("Retry-After", "Seconds to wait before trying again."),
    "WWWAuthenticate": ("WWW-Authenticate", "`Bearer`: send an organization key as a bearer token."),
}
HEADERS_BY_STATUS = {"201": ["Location"], "429": ["RetryAfter"], "401": ["WWWAuthenticate"]}
_ERROR_CONTENT = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}


def _add_codes(responses: dict, *codes: str) -> None:
    for code in codes:
        status = str(ERRORS[code].status)
        response = responses.setdefault(status, {"content": _ERROR_CONTENT, "x-error-codes": []})
        if code not in response["x-error-codes"]:  # a new list: the operation's own stays as declared
            response["x-error-codes"] = [*response["x-error-codes"], code]
        response["description"] = describe_codes(response["x-error-codes"])


def _prune_components(schema: dict) -> None:
    """Drop the component schemas no operation reaches (ninja lists the query parameter models too)."""
    components = schema.get("components", {}).get("schemas", {})
    refs = re.compile(r'"#/components/schemas/([^"]+)"')
    reached, todo = set(), set(refs.findall(json.dumps(schema["paths"])))
    while todo:
        name = todo.pop()
        reached.add(name)
        todo |= set(refs.findall(json.dumps(components.get(name, {})))) - reached
    for name in set(components) - reached:
        del components[name]


def complete_schema(schema: dict) -> None:
    """What ninja does not write itself: the Idempotency-Key of every POST, the 415 of every JSON body, the
    response headers, every error code as the enum of `ErrorBody.code`, and no unused components."""
    for item in schema["paths"].values():
        for method, op in item.items():
            responses = {str(status): response for status, response in op["responses"].items()}
            if method == "post":
                op.setdefault("parameters", []).append(IDEMPOTENCY_PARAMETER)
                _add_codes(responses, "invalid_request", "idempotency_key_reused")
            if "application/json" in op.get("requestBody", {}).get("content", {}):
                _add_codes(responses, "unsupported_media_type")
            op["responses"] = dict(sorted(responses.items()))
            for status, response in op["responses"].items():
                names = ["RequestId", *HEADERS_BY_STATUS.get(status, [])]
                response["headers"] = {HEADERS[n][0]: {"$ref": f"#/components/headers/{n}"} for n in names}
    components = schema.setdefault("components", {})
    components["headers"] = {
        name: {"description": description, "schema": {"type": "string"}}
        for name, (_header, description) in HEADERS.items()
    }
    error_body = components["schemas"]["ErrorBody"]
    error_body["properties"]["code"] = {
        "type": "string",
        "enum": [e.code for e in ERROR_CODES],
        "description": "Stable: branch on it. The error guide says what to do about each.",
    }
    _prune_components(schema)


api = OnCoreAPI(
    title="OnCore transcriber testing API",
    version="1",
    description=(
        "Everything the transcriber testing dashboard does, over HTTP: calls, flags, banks, candidates, results, "
        "the turn-by-turn table, full-call runs, CSV exports, the queue and webhooks. Authenticate with an "
        "organization key (`Authorization: Bearer <key>`); tenant keys are refused. Errors share one shape, "
        '`{"error": {"code", "message", "detail"}}`; the error guide lists every code with what to do. Every POST '
        "takes an `Idempotency-Key` header, so a retry never does the work twice."
    ),
    urls_namespace="api",
    auth=OrganizationKey(),
    docs=ReferencePage(),
    renderer=ApiRenderer(),
    parser=JsonBodyParser(),
)


def _respond(request, status: int, code: str, message: str, detail=None, headers=None):
    response = api.create_response(request, error_body(code, message, detail), status=status)
    if status == 401:
        response["WWW-Authenticate"] = "Bearer"
    if status == 429:
        response["Retry-After"] = str(RETRY_AFTER_S)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


@api.exception_handler(ActionError)
def _action_error(request, exc: ActionError):
    return _respond(request, exc.status, exc.code, exc.message, exc.detail)


@api.exception_handler(ApiError)
def _api_error(request, exc: ApiError):
    return _respond(request, exc.status, exc.code, exc.message, exc.detail, exc.headers)


def _loc(loc) -> list:
    """Where a field is, as documented: ["body", "expected_text"], ["query", "limit"], ["body", "file"] (ninja
    writes the body parameter's name after "body", and "file" for a multipart file part)."""
    loc = list(loc)
    if loc[:2] == ["body", "body"]:
        return ["body", *loc[2:]]
    if loc[:1] == ["file"]:
        return ["body", *loc[1:]]
    return loc


@api.exception_handler(NinjaValidationError)
def _validation_error(request, exc: NinjaValidationError):
    errors = [
        {"loc": _loc(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in exc.errors
    ]
    shown = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors[:3])
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return _respond(request, 422, "validation_error", f"Invalid request: {shown}{more}.", {"errors": errors})


@api.exception_handler(Http404)
def _not_found(request, exc: Http404):
    return _respond(request, 404, "not_found", "Not found in this organization.")


HTTP_ERROR_CODES = {400: "invalid_request", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed"}


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    if isinstance(exc.__cause__, ApiError):  # raised while the body was parsed (JsonBodyParser)
        return _api_error(request, exc.__cause__)
    code = HTTP_ERROR_CODES.get(exc.status_code, "invalid_request")
    message = exc.message
    if code == "unauthorized":
        message = "No API key: send your organization key as 'Authorization: Bearer <key>'."
    return _respond(request, exc.status_code, code, message)


@api.exception_handler(RequestDataTooBig)
def _too_big(request, exc: RequestDataTooBig):
    """A JSON body or form fields over DATA_UPLOAD_MAX_MEMORY_SIZE (uploaded files do not count)."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return _respond(
        request, 413, "request_too_large", too_large_message(None, limit, "The body (without its files)")
    )


@api.exception_handler(SuspiciousOperation)
@api.exception_handler(MultiPartParserError)
def _bad_upload(request, exc: Exception):
    """A request Django refuses to parse (malformed multipart, too many fields or files, too large)."""
    return _respond(request, 400, "invalid_request", f"The request body cannot be read: {exc}")


@api.exception_handler(Exception)
def _unexpected(request, exc: Exception):
    log.exception(
        "API error on %s %s (request_id=%s)",
        request.method,
        request.path,
        getattr(request, "request_id", "-"),
    )
    return _respond(
        request,
        500,
        "internal_error",
        "Something failed on the server. It was logged; retry later, and report it if it persists.",
    )


# ---------------------------------------------------------------- URLs


def _json_errors(view):
    """Outside the operations too (the API root, a known path with the wrong method) errors keep the shape."""

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            response = view(request, *args, **kwargs)
        except Http404:
            return not_found(request)
        if isinstance(response, HttpResponseNotAllowed):
            allowed = [m.strip() for m in response["Allow"].split(",") if m.strip()]
            out = JsonResponse(
                error_body(
                    "method_not_allowed",
                    f"{request.method} is not allowed here; use {' or '.join(allowed)}.",
                    {"allowed": allowed},
                ),
                status=405,
            )
            out["Allow"] = response["Allow"]
            return out
        return response

    return wrapper


@csrf_exempt
def not_found(request, *args, **kwargs):
    return JsonResponse(
        error_body(
            "not_found",
            f"No API endpoint at {request.path}. The reference lists them all.",
            {"reference": reverse("api:openapi-view")},
        ),
        status=404,
    )


def urls():
    """The API's URL patterns for `path("api/v1/", ...)`, with every router the apps mounted on `api` before."""
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        pattern.callback = _json_errors(pattern.callback)
    return [*patterns, re_path(r"^", not_found)], app_name, namespace


def errors_page(request):
    """The error guide: every code, its status and what to do, from ERROR_CODES (the apps' codes included)."""
    errors = [
        {"code": e.code, "status": e.status, "title": e.title, "what_to_do": code_spans(e.what_to_do)}
        for e in ERROR_CODES
    ]
    return render(
        request, "api/errors.html", {"errors": errors, "reference_url": reverse("api:openapi-view")}
    )
