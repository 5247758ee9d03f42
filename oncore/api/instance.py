"""The NinjaAPI instance under /api/v1/, its renderer and body parser, and the exception handlers that give
every error, whatever raised it, the one error shape (oncore.errors.error_body); the URL patterns and the
error guide page.

Actions' ActionErrors (oncore.errors) keep their own code and status, validation errors are 422
`validation_error`, unknown objects and paths 404 `not_found`, and an unexpected exception is logged and
answered 500 `internal_error`."""

import copy
import functools
import json
import logging
from datetime import datetime

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpResponseNotAllowed, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.urls import re_path, reverse
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI
from ninja.errors import HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.parser import Parser
from ninja.renderers import JSONRenderer
from ninja.responses import NinjaJSONEncoder, Response

from oncore import idempotency
from oncore.errors import ActionError, error_body, too_large_message
from oncore.formats import iso_time

from .auth import OrganizationKey
from .errors import ERROR_CODES, ApiError
from .openapi import ReferencePage, code_spans, complete_schema
from .version import API_VERSION

log = logging.getLogger("oncore.api")  # the package's name, as the API has always logged under

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
    """ninja's API with what the schema says beyond it: the tags' descriptions (`describe_tag`), the webhooks
    (`add_webhook`) and servers from the request (`get_openapi_schema(request=...)`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tag_descriptions: dict[str, str] = {}
        self.webhooks: list[dict] = []
        self._schema = None  # the schema once built (get_openapi_schema); what changes it empties it
        self.rate_limited: set[str] = (
            set()
        )  # operation ids under oncore.ratelimit: they can answer rate_limited

    def describe_tag(self, name: str, description: str) -> None:
        self.tag_descriptions[name] = description
        self._schema = None

    def add_webhook(self, name: str, description: str, payload) -> None:
        """An event the server POSTs to webhook endpoints: its payload (a Schema), listed under `webhooks`."""
        if all(w["name"] != name for w in self.webhooks):
            self.webhooks.append({"name": name, "description": description, "payload": payload})
        self._schema = None

    def get_openapi_operation_id(self, operation) -> str:
        return operation.view_func.__name__  # unique across the routers; short ids for generated clients

    def add_router(self, prefix, router, **kwargs):
        """Every POST of every router honours an Idempotency-Key (oncore.idempotency); the operations under a
        rate limit (oncore.ratelimit) are noted, so the schema declares their 429 `rate_limited`."""
        for path_view in router.path_operations.values():
            for operation in path_view.operations:
                if getattr(operation.view_func, "rate_limit_group", None):
                    self.rate_limited.add(operation.view_func.__name__)
                if "POST" in operation.methods:
                    operation.view_func = idempotency.once(operation.view_func, self._render)
        super().add_router(prefix, router, **kwargs)
        self._schema = None

    def _render(self, value) -> str:
        return json.dumps(value, cls=ApiJSONEncoder)

    def create_temporal_response(self, request):
        """The response the operation's result is written into: kept on the request, so an operation can add
        headers to it (`created` sets Location; a replayed request sets Location and Idempotent-Replayed)."""
        response = super().create_temporal_response(request)
        request.api_response = response
        return response

    def get_openapi_schema(self, *, request=None, server: str | None = None, **kwargs):
        """The schema, its `servers` naming where it was asked for (the request's scheme and host, as Django
        sees them behind the proxy), or `server`. Built once per process (it took about a second, on every
        request of the reference page and of openapi.json): the routers are all mounted before the first
        request, and only `servers` differs from one request to the next."""
        if request is not None:
            server = request.build_absolute_uri("/").rstrip("/")
        servers = [{"url": server, "description": "This OnCore server"}] if server else []
        if kwargs.get("path_params") or self._schema is None:
            schema = super().get_openapi_schema(**kwargs)
            complete_schema(
                schema,
                servers=[],
                tags=self.tag_descriptions,
                events=self.webhooks,
                rate_limited=self.rate_limited,
            )
            if kwargs.get("path_params"):
                return {**schema, "servers": servers}
            self._schema = schema
        return {**copy.deepcopy(self._schema), "servers": servers}  # a caller may change its copy


api = OnCoreAPI(
    title="OnCore transcriber testing API",
    version=API_VERSION,
    description=(
        "Everything the transcriber testing dashboard does, over HTTP: calls, flags, banks, candidates, results, "
        "the turn-by-turn table, full-call runs, CSV exports, the queue and webhooks. Authenticate with an "
        "organization key (`Authorization: Bearer <key>`); tenant keys are refused. Errors share one shape, "
        '`{"error": {"code", "message", "detail"}}`; the error guide lists every code with what to do. Every POST '
        "takes an `Idempotency-Key` header, so a retry never does the work twice."
    ),
    urls_namespace="api",
    # No licence is granted to the API or its schema: they are the product's, for its customers' integrations.
    openapi_extra={
        "info": {"license": {"name": "Proprietary", "identifier": "LicenseRef-OnCore-Proprietary"}}
    },
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
    return _respond(
        request, 422, "validation_error", f"Invalid request: {shown.rstrip('.')}{more}.", {"errors": errors}
    )


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
            # no detail, as every not_found declares (a path that matches no route is often one operation's path
            # with an id its converter refuses, e.g. a negative one); the message names the reference
            f"No API endpoint at {request.path}. The reference at {reverse('api:openapi-view')} lists them all.",
        ),
        status=404,
    )


def openapi_json(request, **kwargs):
    """The OpenAPI schema, its `servers` naming this server as the request reached it."""
    return Response(api.get_openapi_schema(path_params=kwargs, request=request))


def urls():
    """The API's URL patterns for `path("api/v1/", ...)`, with every router the apps mounted on `api` before."""
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        if pattern.name == "openapi-json":
            pattern.callback = openapi_json
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
