"""Transcriber testing's API error codes: every code its actions (transcriber_tests.errors) and its routers can
answer, with the status and what to do, added to oncore.api's registry when this module loads. The routers take
`doc` from here, so every code they name is registered before their operations are described."""

from ninja import Field, Schema

from oncore.api import (
    CSV_CONTENT,
    ERRORS,
    WAV_CONTENT,
    CallsNotFoundDetail,
    Detail,
    ErrorCode,
    doc,
    register_error_codes,
)

from ..shapes.runs import STATUSES, LeftOutLineOut

__all__ = [
    "CSV_CONTENT",
    "ERRORS",
    "PRODUCT_ERROR_CODES",
    "RUN_CALL_DETAILS",
    "WAV_CONTENT",
    "CallsNotFoundDetail",
    "doc",
]

# ---------------------------------------------------------------- what each code's `detail` holds


class FieldProblem(Schema):
    loc: list[str | int] = Field(description='Where in the file: ["calls", 0, "lines", 2, "start_s"].')
    msg: str


class ImportProblemDetail(Detail):
    errors: list[FieldProblem] | None = Field(
        None, description="Each problem of the file with where it is, when the file broke its schema."
    )


class RecordingMissingDetail(Detail):
    missing: str = Field(description="The recording a call names that was not uploaded.")
    uploaded: list[str] = Field(description="The file names of the recordings that were uploaded.")


class RunCallDetail(Detail):
    call: int = Field(description="The call to leave out of the run.")


class FlagExistsDetail(Detail):
    line: int
    flag: int = Field(description="The line's flag: edit it (PATCH /flags/{id}).")


class MatchesProductionDetail(Detail):
    line: int
    production_text: str = Field(description="The line's production transcript, which the text equals.")


class BankTakenDetail(Detail):
    bank: int = Field(description="The bank that has the name.")


class CandidateRef(Schema):
    transcriber_id: int
    position: int


class CandidateExistsDetail(Detail):
    candidate: CandidateRef


class QueueFullDetail(Detail):
    pending: int = Field(description="Line transcriptions waiting for the organization.")
    limit: int = Field(description="Past this many waiting, work into banks is refused.")


class RunInProgressDetail(Detail):
    run: int | None = Field(None, description="The run queued or running (absent if it ended meanwhile).")
    status: STATUSES | None = None


class TooManyCallsDetail(Detail):
    calls: int = Field(description="Calls chosen.")
    limit: int = Field(description="The most a run covers.")


class NoLinesDetail(Detail):
    left_out: list[LeftOutLineOut] = Field(
        description="Every caller line of the calls, with why it is left out."
    )


class RunNotActiveDetail(Detail):
    run: int
    status: STATUSES


class VocabularyProblemsDetail(Detail):
    problems: list[str] | None = Field(
        None, description="Each problem, with the limit it passes and what to do."
    )
    transcriber_id: int | None = Field(
        None, description="The vocabulary candidate whose vendor would refuse the new list, when one would."
    )


class VocabularyInUseDetail(Detail):
    banks: list[int] = Field(description="The banks holding a candidate with the vocabulary.")


class OrderDetail(Detail):
    current: list[int] | None = Field(None, description="The current candidates' transcriber ids.")
    given: list[int] | None = Field(None, description="The ids the request listed.")


# What the runs' estimate and start answer about a call: it names the call (and not_found the missing calls).
RUN_CALL_DETAILS = {
    "not_found": CallsNotFoundDetail,
    "line_not_recorded": RunCallDetail,
    "live_transcriber_unknown": RunCallDetail,
    "recording_unavailable": RunCallDetail,
}

PRODUCT_ERROR_CODES = [
    # Call import.
    ErrorCode(
        "import_format_error",
        400,
        "The calls file breaks the import format",
        "The message names the call and field. Fix the file (see the call import format) and upload "
        "it again; calls already imported are skipped, so uploading twice is safe.",
        "import",
        detail=ImportProblemDetail,
    ),
    ErrorCode(
        "recording_missing",
        400,
        "A call names a recording that was not uploaded",
        "Upload every file named by a call's `recording`, as a `recordings` part whose file name is "
        "exactly that name (no folders).",
        "import",
        detail=RecordingMissingDetail,
    ),
    # Flags.
    ErrorCode(
        "line_not_caller",
        409,
        "Assistant lines cannot be flagged",
        "Flag caller lines only; the call's lines say which speaker each one is.",
        "flags",
    ),
    ErrorCode(
        "line_not_recorded",
        409,
        "The call was not recorded",
        "Only recorded calls can be tested. Turn recording on for the assistant; it covers calls from "
        "then on, not calls that already happened.",
        "flags",
    ),
    ErrorCode(
        "recording_unavailable",
        409,
        "The recording cannot be read for this line",
        "The recording file is missing, damaged, or shorter than the line's timing. Re-import the call "
        "with its recording, or flag another line (a run names the call in `detail.call`: leave it out).",
        "flags",
    ),
    ErrorCode(
        "live_transcriber_unknown",
        409,
        "The call's live transcriber is unknown",
        "There is nothing to compare against. Add the transcriber the call ran on to the catalogue "
        "(matching the name stored on the call), or re-import the call with its live transcriber.",
        "flags",
    ),
    ErrorCode(
        "line_has_no_timing",
        409,
        "The line has no audio timing",
        "A line needs the start and end of the caller's speech to cut its audio. Re-import the call with "
        "`start_s` and `end_s` on its lines, or flag another line.",
        "flags",
    ),
    ErrorCode(
        "line_too_long",
        409,
        "The line is longer than a line may be",
        "A line longer than the limit (120 s unless the operator set `ONCORE_MAX_LINE_S`) cannot be flagged "
        "or replayed in a run: its timing most likely spans several turns. Re-import the call with the "
        "caller's turns timed one by one, or flag another line.",
        "flags",
    ),
    ErrorCode(
        "flag_exists",
        409,
        "The line already has a flag",
        "Each line carries one flag. Edit that flag instead (PATCH /flags/{id}): `detail.flag` is its id, "
        "`detail.line` the line's.",
        "flags",
        detail=FlagExistsDetail,
    ),
    ErrorCode(
        "expected_text_empty",
        400,
        "The expected text has no words",
        "Type what the caller actually said, word for word; an empty text or punctuation alone does not count.",
        "flags",
    ),
    ErrorCode(
        "expected_matches_production",
        409,
        "The expected text is what the production transcript already says",
        "After normalization the expected text equals the line's production transcript "
        "(`detail.production_text`), so the line was not wrong. Type what the caller actually said; to flag it with this text anyway, send the "
        'same request with `"confirm_matches_production": true`.',
        "flags",
        detail=MatchesProductionDetail,
    ),
    # Banks and candidates.
    ErrorCode(
        "bank_name_taken",
        409,
        "A bank with this name exists",
        "Bank names are unique in an organization: choose another name, or use the existing bank "
        "(`detail.bank` is its id).",
        "banks",
        detail=BankTakenDetail,
    ),
    ErrorCode(
        "bank_full",
        409,
        "The bank has eight candidates",
        "A bank compares at most eight transcribers. Remove a candidate first, or create another bank.",
        "candidates",
    ),
    ErrorCode(
        "vocabulary_invalid",
        400,
        "The vocabulary cannot be saved",
        "Give it a name and at least one term (one per line in the dashboard), at most 1,000 terms of at most 100 "
        "characters; `detail.problems` lists what to fix.",
        "vocabularies",
        detail=VocabularyProblemsDetail,
    ),
    ErrorCode(
        "vocabulary_name_taken",
        409,
        "A vocabulary with this name exists",
        "Vocabulary names are unique in an organization: choose another name, or edit that vocabulary.",
        "vocabularies",
    ),
    ErrorCode(
        "vocabulary_in_use",
        409,
        "A bank holds a candidate with this vocabulary",
        "Remove those candidates first (`detail.banks` are the banks' ids); their scores are kept.",
        "vocabularies",
        detail=VocabularyInUseDetail,
    ),
    ErrorCode(
        "vocabulary_not_accepted",
        409,
        "The transcriber's vendor would refuse this vocabulary",
        "The message names the vendor's limit (terms, words or characters per term, tokens, models): shorten "
        "the list, or choose a transcriber that takes it; `detail.problems` lists each limit passed.",
        "vocabularies",
        detail=VocabularyProblemsDetail,
    ),
    ErrorCode(
        "candidate_exists",
        409,
        "The transcriber is already a candidate",
        "Nothing to do: it is already in the bank. `detail.candidate` gives its transcriber id and position.",
        "candidates",
        detail=CandidateExistsDetail,
    ),
    ErrorCode(
        "transcriber_disabled",
        409,
        "The transcriber is disabled in the catalogue",
        "Choose an enabled transcriber from the catalogue (GET /transcribers?enabled=true).",
        "candidates",
    ),
    ErrorCode(
        "estimate_not_confirmed",
        409,
        "Adding a candidate or starting a run needs a confirmed estimate",
        "`detail` holds the estimate, in the shape the estimate endpoints answer (a candidate's: lines to "
        "transcribe, audio minutes, cost in USD; a run's: audio, calibration and the judge). Show it to the person "
        'adding the candidate or starting the run, then send the same request with `"confirm": true`.',
        "candidates",
        detail=None,
    ),
    # Queue and runs.
    ErrorCode(
        "queue_full",
        429,
        "Too much work is waiting for this organization",
        "New flags into banks, moves into banks and backfills are refused until the queue drains; "
        "`detail.pending` and `detail.limit` say how far over it is. Retry later (GET /queue shows "
        "progress). Flags into no bank are still accepted.",
        "queue",
        detail=QueueFullDetail,
    ),
    ErrorCode(
        "run_in_progress",
        409,
        "Another full-call run is queued or running",
        "An organization runs one full-call run at a time. `detail.run` is the run in progress: wait for "
        "it to finish (GET /runs/{id}), or cancel it, then start the new one.",
        "runs",
        detail=RunInProgressDetail,
    ),
    ErrorCode(
        "no_calls",
        400,
        "No calls were chosen for the run",
        "Send at least one call id in `call_ids` (and whole numbers only).",
        "runs",
    ),
    ErrorCode(
        "too_many_calls",
        400,
        "Too many calls for one run",
        "A run covers at most ten calls (`detail.limit`): send fewer, or start another run afterwards.",
        "runs",
        detail=TooManyCallsDetail,
    ),
    ErrorCode(
        "run_has_no_lines",
        409,
        "The calls have no caller line with audio timing",
        "A run replays caller lines with start and end times; choose calls that have them.",
        "runs",
        detail=NoLinesDetail,
    ),
    ErrorCode(
        "no_candidate",
        409,
        "The bank has no leader to run",
        "No candidate has a scored line yet. Name the candidate with `candidate_id`, or flag lines first.",
        "runs",
    ),
    ErrorCode(
        "run_not_active",
        409,
        "The run is not queued or running",
        "Only a queued or running run can be cancelled; `detail.status` says where it is. Nothing to do "
        "if it already finished.",
        "runs",
        detail=RunNotActiveDetail,
    ),
    ErrorCode(
        "judge_not_failed",
        409,
        "The run's judge has not failed",
        "Only a finished run whose judge failed can retry it; GET /runs/{id} shows `judge.status`.",
        "runs",
    ),
    ErrorCode(
        "not_in_review_sample",
        409,
        "The line is not in the review sample",
        "Review only the lines listed by GET /runs/{id}/review.",
        "runs",
    ),
    # Figures computed by the queue (queries/snapshots.py).
    ErrorCode(
        "figures_computing",
        503,
        "These figures are being computed for the first time",
        "A bank's trust figures are computed by the queue, never inside a request; this window was not asked "
        "for before. Ask again after the Retry-After header's seconds; from then on the answer is immediate "
        "and kept up to date as scores arrive (`figures` says as of when).",
        "results",
    ),
]
register_error_codes(*PRODUCT_ERROR_CODES)
