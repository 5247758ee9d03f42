"""The one error shape of the site, and the refusal an action raises.

`ActionError`: a stable code, an HTTP status, a message that says what to do, and facts. Views show the
message; the API (oncore.api) answers `error_body(...)`, {"error": {"code", "message", "detail"}}, with the
status. The product apps subclass it, one class per refusal, each with its own code and status.

`NotFound` is the refusal of an object another organization owns (or none does), both an ActionError (the API
answers `not_found` with its message) and an Http404 (a page answers the site's 404); `find` raises it.

`error_body` and `too_large_message` are shared by the API and the site-wide request guards
(oncore.middleware), which answer a request over the size cap in the API's shape under /api/."""

from django.http import Http404


class ActionError(Exception):
    code = "invalid_request"
    status = 400

    def __init__(self, message: str, detail: dict | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail or {}


class NotFound(ActionError, Http404):
    code = "not_found"
    status = 404


MAX_ID = 2**63 - 1  # the database's bigint: no id is larger, so a larger one is refused, never looked up


def find(queryset, pk, what: str, field: str = "pk"):
    """The object with this id (in `field`) among `queryset` (already limited to the organization), else NotFound
    ("No bank with id 7 in this organization."): the one lookup of the pages and the API."""
    obj = queryset.filter(**{field: pk}).first() if isinstance(pk, int) and 0 < pk <= MAX_ID else None
    if obj is None:
        raise NotFound(f"No {what} with id {pk} in this organization.")
    return obj


def error_body(code: str, message: str, detail: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "detail": detail or {}}}


def too_large_message(size_bytes: int | None, limit_bytes: int, what: str = "The request") -> str:
    size = f" is {size_bytes / 2**20:.1f} MB;" if size_bytes is not None else " is too large:"
    return (
        f"{what}{size} at most {limit_bytes / 2**20:g} MB is accepted. Send less at once (e.g. split the "
        "import into several files, each with its own recordings)."
    )
