"""Full-call runs: estimate, start, cancel, retry the judge, list per bank, detail (calibration, counts,
patterns, verdict), lines with labels, the review sample and submitting a review, and the lines CSV."""

from typing import Annotated, Literal

from django.urls import reverse
from ninja import Field, Query, Router
from pydantic import BeforeValidator

from oncore.api import created
from oncore.ratelimit import rate_limited
from transcriber_tests.actions import runs as actions
from transcriber_tests.models import Bank, Run
from transcriber_tests.queries import lookups
from transcriber_tests.queries import runs as queries
from transcriber_tests.shapes import exports

from ..shapes.runs import (
    API_LABEL,
    STATUSES,
    LabelIn,
    RunBrief,
    RunEstimateOut,
    RunLineOut,
    RunOut,
    new_word,
    run_brief,
    run_line_out,
    run_out,
    stored_label,
)
from .errors import CSV_CONTENT, RUN_CALL_DETAILS, doc
from .schemas import (
    BodyIn,
    CursorIn,
    CursorPage,
    Id,
    Page,
    PageIn,
    cursor_page,
    page,
)

router = Router(tags=["Full-call runs"])

# What the estimate and the start both refuse.
CALL_ERRORS = (
    "no_calls",
    "too_many_calls",
    "line_not_recorded",
    "live_transcriber_unknown",
    "recording_unavailable",
    "run_has_no_lines",
    "no_candidate",
    "transcriber_disabled",
)


class RunIn(BodyIn):
    call_ids: list[Id] = Field(
        description=f"The calls to replay: at least one (400 no_calls), at most {actions.MAX_CALLS} (400 "
        "too_many_calls)."
    )
    candidate_id: Id | None = Field(
        None, description="A candidate of the bank; omit to run the bank's leader."
    )


class RunStartIn(RunIn):
    confirm: bool = Field(False, description="Must be true: send once the estimate was accepted.")


class RunPage(CursorPage):
    items: list[RunBrief]


class RunLinePage(Page):
    items: list[RunLineOut]


# The lines filters in the API's words (production_right, not live_right); the old word is still read.
LineFilter = Annotated[
    Literal[tuple(API_LABEL.get(key, key) or "all" for key in queries.LINE_FILTERS)],
    BeforeValidator(new_word),
]


class RunLineFilters(PageIn):
    label: LineFilter = Field(
        "all",
        description="Which lines: a label (candidate_right, production_right, same_meaning, both_wrong; the old "
        "live_right is read as production_right), differing, identical, flagged, ...",
    )
    pattern: Id | None = Field(None, description="Only the lines of this pattern (pattern id).")


class ReviewFilters(PageIn):
    show: Literal[tuple(key or "all" for key in queries.REVIEW_FILTERS)] = Field(
        "all",
        description="all, todo (not reviewed yet), agreed or disagreed (reviewed: the label given matched the label the line got, or not).",
    )


class RunFilters(CursorIn):
    bank: Id | None = Field(None, description="Only this bank's runs (bank id).")
    status: STATUSES | None = Field(None, description="Only runs in this status.")


class ReviewIn(BodyIn):
    label: LabelIn = Field(
        description="The label you give the line, before seeing the label it got (the old live_right is read as "
        "production_right)."
    )


def _bank(request, bank_id) -> Bank:
    return lookups.bank(request.org, bank_id)


def _run(request, run_id) -> Run:
    """A run of the organization by id: readable even after its bank was deleted."""
    return lookups.run(request.org, run_id)


def _candidate(bank, candidate_id):
    if candidate_id is None:
        return None
    return lookups.candidate(bank, candidate_id)


def _briefs(run_list) -> list:
    counts = queries.counts_for_runs(run_list)
    return [run_brief(run, counts.get(run.pk, {})) for run in run_list]


def _run_page(qs, q: CursorIn) -> dict:
    return cursor_page(qs, q, _briefs, batch=True)


@router.get("/runs", **doc(200, RunPage, "The organization's runs, newest first."))
def list_all_runs(request, q: Query[RunFilters]):
    """Every run of the organization's banks, newest first. Deleting a bank takes its runs out of every list; a run
    still reads by its id (GET /runs/{id})."""
    return _run_page(queries.runs_list(request.org.pk, bank=q.bank, status=q.status), q)


@router.get("/banks/{int:bank_id}/runs", **doc(200, RunPage, "The bank's runs, newest first.", "not_found"))
def list_runs(request, bank_id: int, q: Query[CursorIn]):
    """The bank's runs. A deleted bank's runs stay in GET /runs and readable at /runs/{id}."""
    return _run_page(queries.runs_for_bank(_bank(request, bank_id)), q)


@router.post(
    "/banks/{int:bank_id}/runs/estimate",
    **doc(
        200, RunEstimateOut, "What the run would cost.", "not_found", *CALL_ERRORS, details=RUN_CALL_DETAILS
    ),
)
def estimate_run(request, bank_id: int, body: RunIn):
    """The cost of a run before it starts: candidate audio (`lines` to transcribe; those it already transcribed,
    `already_transcribed`, are free), the calibration replays and the judge's expected and maximum tokens, and
    each caller line the run leaves out with why (`left_out`). Nothing is started."""
    bank = _bank(request, bank_id)
    return actions.estimate_run(bank, body.call_ids, _candidate(bank, body.candidate_id)).as_dict()


@router.post(
    "/banks/{int:bank_id}/runs",
    **doc(
        201,
        RunOut,
        "The run, queued.",
        "invalid_request",
        "not_found",
        *CALL_ERRORS,
        "estimate_not_confirmed",
        "run_in_progress",
        "queue_full",
        details={**RUN_CALL_DETAILS, "estimate_not_confirmed": RunEstimateOut},
    ),
)
def start_run(request, bank_id: int, body: RunStartIn):
    """Start a full-call run of the candidate (the bank's leader unless given) over the calls. Without
    `"confirm": true` nothing starts: the answer is 409 `estimate_not_confirmed` with the estimate in detail.
    One run per organization may be queued or running (409 `run_in_progress` names it)."""
    bank = _bank(request, bank_id)
    run = actions.do_start_run(
        bank, body.call_ids, candidate=_candidate(bank, body.candidate_id), confirmed=body.confirm
    )
    return created(request, reverse("api:get_run", args=[run.pk]), run_out(_run(request, run.pk)))


@router.get("/runs/{int:run_id}", **doc(200, RunOut, "The run.", "not_found"))
def get_run(request, run_id: int):
    """Status, counts (fixes, breaks, ...), calibration (audio path agreement), the review's agreement with the
    judge, the judge's tokens and cost, patterns and verdict. Poll it while the run is queued or running."""
    return run_out(_run(request, run_id))


@router.post(
    "/runs/{int:run_id}/cancel", **doc(200, RunOut, "The cancelled run.", "not_found", "run_not_active")
)
def cancel_run(request, run_id: int):
    """Cancel a queued or running run. What it transcribed is kept; its queued work is dropped."""
    return run_out(actions.do_cancel_run(_run(request, run_id)))


@router.post(
    "/runs/{int:run_id}/retry-judge",
    **doc(200, RunOut, "The run, judging again.", "not_found", "judge_not_failed", "run_in_progress"),
)
def retry_judge(request, run_id: int):
    """Give a finished run whose judge failed another go; labels already made are kept."""
    return run_out(actions.do_retry_judge(_run(request, run_id)))


@router.get("/runs/{int:run_id}/lines", **doc(200, RunLinePage, "The run's lines in order.", "not_found"))
def run_lines(request, run_id: int, q: Query[RunLineFilters]):
    """Every caller line of the run: the candidate's text beside the production transcript, its label and who
    gave it (a flag's score, the judge or the rule), the judge's reasoning, its pattern, calibration and review. A line of the review sample not reviewed yet shows
    no label, source, reasoning or pattern, and is left out of the filters by label and by pattern (the review is
    blind)."""
    run = _run(request, run_id)
    qs = queries.run_line_rows(run, "" if q.label == "all" else stored_label(q.label), pattern=q.pattern)
    return page(qs, q, run_line_out)


@router.get("/runs/{int:run_id}/review", **doc(200, RunLinePage, "The review sample's lines.", "not_found"))
def review_sample(request, run_id: int, q: Query[ReviewFilters]):
    """The lines labelled by the judge or by rule set aside for a person to check (up to 120, drawn from every
    label), to measure how far to trust the labels. Blind: a line's label, its source and its reasoning are
    empty until it is reviewed."""
    run = _run(request, run_id)
    return page(queries.review_lines(run, "" if q.show == "all" else q.show), q, run_line_out)


@router.post(
    "/runs/{int:run_id}/review/{int:run_line_id}",
    **doc(200, RunLineOut, "The reviewed line.", "invalid_request", "not_found", "not_in_review_sample"),
)
def review_line(request, run_id: int, run_line_id: int, body: ReviewIn):
    """Give your label to a line of the review sample; the answer shows the label it got and whether you agree.
    The first answer stands: one sent again, once the label was shown, is recorded as its correction."""
    run = _run(request, run_id)
    run_line = lookups.run_line(run, run_line_id)
    return run_line_out(actions.do_review_line(run_line, stored_label(body.label)))


@router.get(
    "/runs/{int:run_id}/lines.csv",
    **doc(200, None, "Every line of the run as CSV, streamed.", "not_found", content=CSV_CONTENT),
)
@rate_limited("exports")
def export_run(request, run_id: int):
    """The same CSV as the dashboard's run export."""
    return exports.run_csv(_run(request, run_id))
