"""The one error shape of the site, and the refusal an action raises.

`ActionError`: a stable code, an HTTP status, a message that says what to do, and facts. Views show the
message; the API (oncore.api) answers `error_body(...)`, {"error": {"code", "message", "detail"}}, with the
status. The product apps subclass it, one class per refusal, each with its own code and status.

`error_body` and `too_large_message` are shared by the API and the site-wide request guards
(oncore.middleware), which answer a request over the size cap in the API's shape under /api/."""


class ActionError(Exception):
    code = "invalid_request"
    status = 400

    def __init__(self, message: str, detail: dict | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail or {}


def error_body(code: str, message: str, detail: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "detail": detail or {}}}


def too_large_message(size_bytes: int | None, limit_bytes: int, what: str = "The request") -> str:
    size = f" is {size_bytes / 2**20:.1f} MB;" if size_bytes is not None else " is too large:"
    return (
        f"{what}{size} at most {limit_bytes / 2**20:g} MB is accepted. Send less at once (e.g. split the "
        "import into several files, each with its own recordings)."
    )
