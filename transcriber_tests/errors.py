"""Every refusal an action can raise. Each has a stable code (the API's error codes) and a message that
says what to do. Views show the message; the API answers {"error": {"code", "message", "detail"}}."""


class ActionError(Exception):
    code = "invalid_request"
    status = 400

    def __init__(self, message: str, detail: dict | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail or {}


class NotFound(ActionError):
    code = "not_found"
    status = 404


class LineNotRecorded(ActionError):
    code = "line_not_recorded"
    status = 409


class RecordingUnavailable(ActionError):
    code = "recording_unavailable"
    status = 409


class LiveTranscriberUnknown(ActionError):
    code = "live_transcriber_unknown"
    status = 409


class LineNotCaller(ActionError):
    code = "line_not_caller"
    status = 409


class LineHasNoTiming(ActionError):
    code = "line_has_no_timing"
    status = 409


class FlagExists(ActionError):
    code = "flag_exists"
    status = 409


class ExpectedTextEmpty(ActionError):
    code = "expected_text_empty"
    status = 400


class BankFull(ActionError):
    code = "bank_full"
    status = 409


class BankNameTaken(ActionError):
    code = "bank_name_taken"
    status = 409


class CandidateExists(ActionError):
    code = "candidate_exists"
    status = 409


class TranscriberDisabled(ActionError):
    code = "transcriber_disabled"
    status = 409


class EstimateNotConfirmed(ActionError):
    code = "estimate_not_confirmed"
    status = 409


class QueueFull(ActionError):
    code = "queue_full"
    status = 429


class RunInProgress(ActionError):
    code = "run_in_progress"
    status = 409
