"""Every refusal of transcriber testing's actions (flags, banks, candidates, the queue and full-call runs). Each
has a stable code (the API's error codes, listed in transcriber_tests/api/errors.py) and a message that says what
to do. Views show the message; the API answers {"error": {"code", "message", "detail"}}."""

# The base of every refusal here, and the refusal of another organization's object; callers take them from here too.
from oncore.errors import ActionError, NotFound  # noqa: F401 (NotFound: re-exported)


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


class LineTooLong(ActionError):
    code = "line_too_long"
    status = 409


class FlagExists(ActionError):
    code = "flag_exists"
    status = 409


class ExpectedTextEmpty(ActionError):
    code = "expected_text_empty"
    status = 400


class ExpectedMatchesLive(ActionError):
    code = "expected_matches_production"
    status = 409


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
    """Carries the estimate itself (a page shows it) and, as its detail, the estimate's JSON (the API's)."""

    code = "estimate_not_confirmed"
    status = 409

    def __init__(self, message: str, estimate):
        super().__init__(message, estimate.as_dict())
        self.estimate = estimate


class QueueFull(ActionError):
    code = "queue_full"
    status = 429


class RunInProgress(ActionError):
    code = "run_in_progress"
    status = 409


# ---------------------------------------------------------------- full-call runs


class NoCallsChosen(ActionError):
    code = "no_calls"
    status = 400


class TooManyCalls(ActionError):
    code = "too_many_calls"
    status = 400


class RunHasNoLines(ActionError):
    code = "run_has_no_lines"
    status = 409


class NoCandidate(ActionError):
    code = "no_candidate"
    status = 409


class RunNotActive(ActionError):
    code = "run_not_active"
    status = 409


class JudgeNotFailed(ActionError):
    code = "judge_not_failed"
    status = 409


class NotInReviewSample(ActionError):
    code = "not_in_review_sample"
    status = 409


# ---------------------------------------------------------------- vocabularies


class VocabularyInvalid(ActionError):
    """No name, no terms, too many terms or a term too long for any vendor."""

    code = "vocabulary_invalid"
    status = 400


class VocabularyNameTaken(ActionError):
    code = "vocabulary_name_taken"
    status = 409


class VocabularyInUse(ActionError):
    code = "vocabulary_in_use"
    status = 409


class VocabularyNotAccepted(ActionError):
    """The transcriber's vendor would refuse the vocabulary (its limits, named), or takes none."""

    code = "vocabulary_not_accepted"
    status = 409
