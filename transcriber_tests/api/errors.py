"""Transcriber testing's API error codes: every code its actions (transcriber_tests.errors) and its routers can
answer, with the status and what to do, added to oncore.api's registry when this module loads. The routers take
`doc` from here, so every code they name is registered before their operations are described."""

from oncore.api import CSV_CONTENT, ERRORS, WAV_CONTENT, ErrorCode, doc, register_error_codes

__all__ = ["CSV_CONTENT", "ERRORS", "PRODUCT_ERROR_CODES", "WAV_CONTENT", "doc"]

PRODUCT_ERROR_CODES = [
    # Call import.
    ErrorCode(
        "import_format_error",
        400,
        "The calls file breaks the import format",
        "The message names the call and field. Fix the file (see the call import format) and upload "
        "it again; calls already imported are skipped, so uploading twice is safe.",
        "import",
    ),
    ErrorCode(
        "recording_missing",
        400,
        "A call names a recording that was not uploaded",
        "Upload every file named by a call's `recording`, as a `recordings` part whose file name is "
        "exactly that name (no folders).",
        "import",
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
    ),
    # Banks and candidates.
    ErrorCode(
        "bank_name_taken",
        409,
        "A bank with this name exists",
        "Bank names are unique in an organization: choose another name, or use the existing bank "
        "(`detail.bank` is its id).",
        "banks",
    ),
    ErrorCode(
        "bank_full",
        409,
        "The bank has eight candidates",
        "A bank compares at most eight transcribers. Remove a candidate first, or create another bank.",
        "candidates",
    ),
    ErrorCode(
        "candidate_exists",
        409,
        "The transcriber is already a candidate",
        "Nothing to do: it is already in the bank. `detail.candidate` gives its transcriber id and position.",
        "candidates",
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
    ),
    ErrorCode(
        "run_in_progress",
        409,
        "Another full-call run is queued or running",
        "An organization runs one full-call run at a time. `detail.run` is the run in progress: wait for "
        "it to finish (GET /runs/{id}), or cancel it, then start the new one.",
        "runs",
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
    ),
    ErrorCode(
        "run_has_no_lines",
        409,
        "The calls have no caller line with audio timing",
        "A run replays caller lines with start and end times; choose calls that have them.",
        "runs",
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
]
register_error_codes(*PRODUCT_ERROR_CODES)
