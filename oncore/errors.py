"""The refusal an action raises: a stable code, an HTTP status, a message that says what to do, and facts.

Views show the message; the API (oncore.api) answers {"error": {"code", "message", "detail"}} with the status.
The product apps subclass it, one class per refusal, each with its own code and status."""


class ActionError(Exception):
    code = "invalid_request"
    status = 400

    def __init__(self, message: str, detail: dict | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail or {}
