"""The REST API under /api/v1/: the NinjaAPI instance, organization-key authentication, the one error shape
and the registry of error codes that both the API and the error guide page are built from.

    instance.py   the NinjaAPI instance (`api`), its renderer, body parser and exception handlers; urls(),
                  errors_page (the error guide)
    auth.py       OrganizationKey: `Authorization: Bearer <organization key>`, tenant keys refused
    errors.py     ErrorCode, ERROR_CODES, register_error_codes, ApiError, ErrorOut, doc() (what an operation
                  answers, every error included)
    openapi.py    the reference page and what the schema says beyond ninja's own (complete_schema)
    version.py    API_VERSION (semantic; the schema's info.version and every answer's OnCore-API-Version) and
                  the deprecated words still read (answered with Deprecation and Sunset headers)
    schemas.py    what every router uses: BodyIn, PageIn, Page, page(), get_or_404(), created(), and the
                  Id, Money and Text field types

Every error, whatever raised it, answers {"error": {"code": ..., "message": ..., "detail": {...}}}
(oncore.errors.error_body). The registry holds the API's own codes; the product apps add theirs with
`register_error_codes`. The routers live in the product apps (transcriber_tests/api/) and in oncore/webhooks/;
oncore/urls.py mounts them on `api` before it includes `urls()`.

This module only names what the routers and oncore/urls.py import from `oncore.api`."""

from .auth import OrganizationKey
from .errors import (
    CSV_CONTENT,
    ERROR_CODES,
    ERRORS,
    WAV_CONTENT,
    ApiError,
    CallsNotFoundDetail,
    Detail,
    ErrorCode,
    ErrorOut,
    NoDetail,
    describe_codes,
    doc,
    register_error_codes,
)
from .instance import ApiJSONEncoder, api, errors_page, urls
from .schemas import (
    MAX_LIMIT,
    BodyIn,
    Cursor,
    CursorIn,
    CursorPage,
    Day,
    Id,
    Money,
    Page,
    PageIn,
    Text,
    created,
    cursor_page,
    get_or_404,
    page,
    page_of,
)

__all__ = [
    "CSV_CONTENT",
    "ERRORS",
    "ERROR_CODES",
    "MAX_LIMIT",
    "WAV_CONTENT",
    "ApiError",
    "ApiJSONEncoder",
    "BodyIn",
    "CallsNotFoundDetail",
    "Cursor",
    "CursorIn",
    "CursorPage",
    "Day",
    "Detail",
    "ErrorCode",
    "ErrorOut",
    "Id",
    "Money",
    "NoDetail",
    "OrganizationKey",
    "Page",
    "PageIn",
    "Text",
    "api",
    "created",
    "cursor_page",
    "describe_codes",
    "doc",
    "errors_page",
    "get_or_404",
    "page",
    "page_of",
    "register_error_codes",
    "urls",
]
