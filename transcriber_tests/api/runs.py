"""Full-call runs: estimate, start, cancel, retry the judge, list per bank, detail (calibration, counts,
patterns, verdict), lines with labels, the review sample and submitting a review, and the lines CSV."""

from datetime import datetime
from typing import Any, Literal

from ninja import Field, Query, Router, Schema
from ninja.responses import Status

from oncore.transcribers.models import Transcriber
from transcriber_tests import exports
from transcriber_tests.models import Bank, Run
from transcriber_tests.runs import actions, queries

from .errors import doc
from .schemas import Id, Page, PageIn, TranscriberRef, get_or_404, page, transcriber_ref

router = Router(tags=["Full-call runs"])

CALL_ERRORS = (
    "no_calls",
    "too_many_calls",
    "line_not_recorded",
    "live_transcriber_unknown",
    "no_candidate",
    "transcriber_disabled",
)


class RunIn(Schema):
    call_ids: list[Id] = Field(
        min_length=1,
        max_length=actions.MAX_CALLS,
        description=f"The calls to replay, at most {actions.MAX_CALLS}.",
    )
    candidate_id: Id | None = Field(
        None, description="A candidate of the bank; omit to run the bank's leader."
    )


class RunStartIn(RunIn):
    confirm: bool = Field(False, description="Must be true: send once the estimate was accepted.")


class RunEstimateOut(Schema):
    candidate_id: int
    calls: int
    lines: int = Field(description="Caller lines with audio timing the candidate transcribes.")
    already_transcribed: int = Field(description="Lines it already has text for: free.")
    audio_seconds: float
    audio_minutes: float
    price_per_minute: str
    audio_cost: str
    calibration_lines: int = Field(description="Lines replayed through the live transcriber.")
    calibration_audio_seconds: float
    calibration_cost: str
    judge_configured: bool = Field(description="Whether the judge (language model) is set up on the server.")
    flagged_lines: int
    differ_rate: float | None = Field(
        description="Share of the bank's control lines where the candidate differed."
    )
    rule_share: float | None = Field(
        description="Share of those differing lines the rule labels same_meaning without the judge."
    )
    expected_rule_lines: int = Field(description="Differing lines expected to be labelled by rule: free.")
    expected_judged_lines: int
    judge_requests: int = Field(description="Label requests expected (several lines of one call each).")
    judge_input_tokens: int
    judge_output_tokens: int
    judge_cost: str
    max_judge_input_tokens: int
    max_judge_output_tokens: int
    max_judge_cost: str
    total_cost: str = Field(description="Expected total in USD: audio, calibration and the judge.")
    max_total_cost: str


class RunBrief(Schema):
    id: int
    bank_id: int | None = Field(description="Null once the bank was deleted; the run stays readable by id.")
    bank_name: str
    candidate: TranscriberRef
    status: Literal["queued", "transcribing", "judging", "done", "cancelled", "failed"]
    judge_status: Literal["pending", "done", "not_configured", "failed", "skipped"]
    created_at: datetime
    finished_at: datetime | None
    calls: int
    lines: int
    fixes: int = Field(description="Lines the candidate got right and the live transcript wrong.")
    breaks: int = Field(description="Lines the live transcript got right and the candidate wrong.")
    audio_path_agreement: float | None = Field(
        description="Calibration: share of replays equal to the live text."
    )
    calibration_low: bool


class RunPage(Page):
    items: list[RunBrief]


class PatternOut(Schema):
    id: int
    name: str
    description: str
    count: int


class Counts(Schema):
    lines: int
    compared: int
    identical: int
    differing: int
    candidate_failed: int
    fixes: int
    breaks: int
    same_meaning: int
    both_wrong: int
    unlabelled: int = Field(
        description="Differing lines with no label (judge not configured, failed or pending)."
    )
    rule_labelled: int = Field(
        description="Differing lines labelled same_meaning by rule, never sent to the judge."
    )
    judge_gave_up: int = Field(description="Lines left unlabelled after the judge answered invalidly twice.")
    judge_calls_saved: int = Field(description="Label requests the rule labels spared the judge.")
    judge_requests: int = Field(description="Label requests sent to the judge.")
    flagged: int
    transcriptions: int
    transcriptions_finished: int


class Calibration(Schema):
    sampled: int
    compared: int
    matched: int
    failed: int
    audio_path_agreement: float | None
    warn_below: float
    low: bool = Field(description="Agreement under warn_below: the run's numbers deserve less weight.")


class VersionAgreementOut(Schema):
    prompt_version: str = Field(description="The judge's prompt version, or the rule's (rule:...).")
    reviewed: int
    agrees: int
    kappa: float | None = Field(
        description="Cohen's kappa of the reviewer's labels against the labels given."
    )


class Review(Schema):
    sample: int
    reviewed: int
    agrees: int
    judge_human_agreement: float | None
    by_prompt_version: list[VersionAgreementOut]


class Judge(Schema):
    status: Literal["pending", "done", "not_configured", "failed", "skipped"]
    error: str
    model: str
    prompt_version: str
    input_tokens: int
    output_tokens: int
    cost: str


class RunOut(Schema):
    id: int
    bank_id: int | None
    bank_name: str
    candidate: TranscriberRef
    status: Literal["queued", "transcribing", "judging", "done", "cancelled", "failed"]
    error: str
    created_at: datetime
    finished_at: datetime | None
    call_ids: list[int]
    estimate: dict[str, Any] = Field(description="The estimate shown before the run started.")
    counts: Counts
    calibration: Calibration
    review: Review
    judge: Judge
    patterns: list[PatternOut]
    verdict: str


class RunLineOut(Schema):
    id: int = Field(description="The run line's id (used to review it).")
    position: int
    line_id: int
    call_id: int
    line_position: int
    start_s: float | None
    end_s: float | None
    compared: bool
    live_text: str
    candidate_text: str
    candidate_failed: bool
    candidate_error: str
    differs: bool
    flag_id: int | None
    expected_text: str = Field(description="What was said, on flagged lines.")
    candidate_match: bool | None
    live_match: bool | None
    candidate_wer: float | None
    live_wer: float | None
    label: Literal["", "candidate_right", "live_right", "same_meaning", "both_wrong"] = Field(
        description="In the review sample, empty until the line is reviewed (the review is blind)."
    )
    label_source: Literal["", "flag", "judge", "rule"]
    reasoning: str
    label_prompt_version: str
    label_error: str = Field(description="Why the judge left the line unlabelled, when it did.")
    pattern_id: int | None
    calibration: bool
    replay_text: str
    replay_failed: bool
    replay_matches: bool | None
    in_review: bool
    human_label: Literal["", "candidate_right", "live_right", "same_meaning", "both_wrong"]
    review_agrees: bool | None
    reviewed_at: datetime | None


class RunLinePage(Page):
    items: list[RunLineOut]


LineFilter = Literal[tuple(key or "all" for key in queries.LINE_FILTERS)]


class RunLineFilters(PageIn):
    label: LineFilter = Field("all", description="Which lines: a label, differing, identical, flagged, ...")
    pattern: Id | None = Field(None, description="Only the lines of this pattern (pattern id).")


class ReviewFilters(PageIn):
    show: Literal[tuple(key or "all" for key in queries.REVIEW_FILTERS)] = "all"


class ReviewIn(Schema):
    label: Literal["candidate_right", "live_right", "same_meaning", "both_wrong"] = Field(
        description="The label you give the line, before seeing the label it got."
    )


def _bank(request, bank_id) -> Bank:
    return get_or_404(Bank.objects.filter(organization=request.org), bank_id, "bank")


def _run(request, run_id) -> Run:
    """A run of the organization by id: readable even after its bank was deleted."""
    return get_or_404(Run.objects.filter(organization=request.org).select_related("candidate"), run_id, "run")


def _candidate(bank, candidate_id):
    if candidate_id is None:
        return None
    return get_or_404(
        Transcriber.objects.filter(candidacies__bank=bank), candidate_id, "candidate in this bank"
    )


def _run_out(run) -> dict:
    s = queries.run_summary(run)
    return {
        "id": run.pk,
        "bank_id": run.bank_id,
        "bank_name": run.bank_name,
        "candidate": transcriber_ref(run.candidate),
        "status": run.status,
        "error": run.error,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
        "call_ids": list(run.run_calls.order_by("position").values_list("call_id", flat=True)),
        "estimate": run.estimate,
        "counts": {
            "lines": s.lines,
            "compared": s.compared,
            "identical": s.identical,
            "differing": s.differing,
            "candidate_failed": s.candidate_failed,
            "fixes": s.fixes,
            "breaks": s.breaks,
            "same_meaning": s.same_meaning,
            "both_wrong": s.both_wrong,
            "unlabelled": s.unlabelled,
            "rule_labelled": s.rule_labelled,
            "judge_gave_up": s.judge_gave_up,
            "judge_calls_saved": s.judge_calls_saved,
            "judge_requests": s.judge_requests,
            "flagged": s.flagged,
            "transcriptions": s.transcriptions,
            "transcriptions_finished": s.transcriptions_finished,
        },
        "calibration": {
            "sampled": s.calibration_sampled,
            "compared": s.calibration_compared,
            "matched": s.calibration_matched,
            "failed": s.calibration_failed,
            "audio_path_agreement": s.audio_path_agreement,
            "warn_below": s.warn_below,
            "low": s.calibration_low,
        },
        "review": {
            "sample": s.review_sample,
            "reviewed": s.reviewed,
            "agrees": s.review_agrees,
            "judge_human_agreement": s.judge_human_agreement,
            "by_prompt_version": [
                {
                    "prompt_version": v.prompt_version,
                    "reviewed": v.agreement.n,
                    "agrees": v.agreement.agree,
                    "kappa": v.agreement.kappa,
                }
                for v in queries.review_agreement(run)
            ],
        },
        "judge": {
            "status": run.judge_status,
            "error": run.judge_error,
            "model": run.judge_model,
            "prompt_version": run.judge_prompt_version,
            "input_tokens": run.judge_input_tokens,
            "output_tokens": run.judge_output_tokens,
            "cost": str(run.judge_cost),
        },
        "patterns": [
            {"id": p.pk, "name": p.name, "description": p.description, "count": p.count}
            for p in run.patterns.order_by("position")
        ],
        "verdict": run.verdict,
    }


def _run_line_out(rl) -> dict:
    line = rl.line
    return {
        "id": rl.pk,
        "position": rl.position,
        "line_id": line.pk,
        "call_id": line.call_id,
        "line_position": line.position,
        "start_s": line.start_s,
        "end_s": line.end_s,
        "compared": rl.compared,
        "live_text": rl.live_text,
        "candidate_text": rl.candidate_text,
        "candidate_failed": rl.candidate_failed,
        "candidate_error": rl.candidate_error,
        "differs": rl.differs,
        "flag_id": rl.flag_id,
        "expected_text": rl.expected_text,
        "candidate_match": rl.candidate_match,
        "live_match": rl.live_match,
        "candidate_wer": rl.candidate_wer,
        "live_wer": rl.live_wer,
        "label": rl.label,
        "label_source": rl.label_source,
        "reasoning": rl.reasoning,
        "label_prompt_version": rl.label_prompt_version,
        "label_error": rl.label_error,
        "pattern_id": rl.pattern_id,
        "calibration": rl.calibration,
        "replay_text": rl.replay_text,
        "replay_failed": rl.replay_failed,
        "replay_matches": rl.replay_matches,
        "in_review": rl.in_review,
        "human_label": rl.human_label,
        "review_agrees": rl.review_agrees,
        "reviewed_at": rl.reviewed_at,
    }


@router.get("/banks/{int:bank_id}/runs", **doc(200, RunPage, "The bank's runs, newest first.", "not_found"))
def list_runs(request, bank_id: int, q: Query[PageIn]):
    """Runs are listed per bank; a deleted bank's runs leave every list but stay readable at /runs/{id}."""
    qs = queries.runs_for_bank(_bank(request, bank_id))
    count = qs.count()
    run_list = list(qs[q.offset : q.offset + q.limit])
    counts = queries.counts_for_runs(run_list)
    items = []
    for run in run_list:
        c = counts.get(run.pk, {})
        items.append(
            {
                "id": run.pk,
                "bank_id": run.bank_id,
                "bank_name": run.bank_name,
                "candidate": transcriber_ref(run.candidate),
                "status": run.status,
                "judge_status": run.judge_status,
                "created_at": run.created_at,
                "finished_at": run.finished_at,
                "calls": run.n_calls,
                "lines": c.get("lines", 0),
                "fixes": c.get("fixes", 0),
                "breaks": c.get("breaks", 0),
                "audio_path_agreement": c.get("audio_path_agreement"),
                "calibration_low": c.get("calibration_low", False),
            }
        )
    return {"count": count, "limit": q.limit, "offset": q.offset, "items": items}


def _estimate_out(candidate_id, estimate) -> dict:
    return {
        "candidate_id": candidate_id,
        **estimate.as_dict(),
        "calibration_audio_seconds": round(estimate.calibration_audio_seconds, 3),
        "audio_seconds": round(estimate.audio_seconds, 3),
    }


@router.post(
    "/banks/{int:bank_id}/runs/estimate",
    **doc(200, RunEstimateOut, "What the run would cost.", "invalid_request", "not_found", *CALL_ERRORS),
)
def estimate_run(request, bank_id: int, body: RunIn):
    """The cost of a run before it starts: candidate audio (lines it already transcribed are free), the
    calibration replays and the judge's expected and maximum tokens. Nothing is started."""
    bank = _bank(request, bank_id)
    candidate = _candidate(bank, body.candidate_id)
    estimate = actions.estimate_run(bank, body.call_ids, candidate)
    return _estimate_out((candidate or queries.default_candidate(bank)).pk, estimate)


@router.post(
    "/banks/{int:bank_id}/runs",
    **doc(
        201,
        RunOut,
        "The run, queued.",
        "invalid_request",
        "not_found",
        *CALL_ERRORS,
        "run_has_no_lines",
        "estimate_not_confirmed",
        "run_in_progress",
        "queue_full",
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
    return Status(201, _run_out(_run(request, run.pk)))


@router.get("/runs/{int:run_id}", **doc(200, RunOut, "The run.", "not_found"))
def get_run(request, run_id: int):
    """Status, counts (fixes, breaks, ...), calibration (audio path agreement), the review's agreement with the
    judge, the judge's tokens and cost, patterns and verdict. Poll it while the run is queued or running."""
    return _run_out(_run(request, run_id))


@router.post(
    "/runs/{int:run_id}/cancel", **doc(200, RunOut, "The cancelled run.", "not_found", "run_not_active")
)
def cancel_run(request, run_id: int):
    """Cancel a queued or running run. What it transcribed is kept; its queued work is dropped."""
    return _run_out(actions.do_cancel_run(_run(request, run_id)))


@router.post(
    "/runs/{int:run_id}/retry-judge",
    **doc(200, RunOut, "The run, judging again.", "not_found", "judge_not_failed", "run_in_progress"),
)
def retry_judge(request, run_id: int):
    """Give a finished run whose judge failed another go; labels already made are kept."""
    return _run_out(actions.do_retry_judge(_run(request, run_id)))


@router.get("/runs/{int:run_id}/lines", **doc(200, RunLinePage, "The run's lines in order.", "not_found"))
def run_lines(request, run_id: int, q: Query[RunLineFilters]):
    """Every caller line of the run: the candidate's text beside the live transcript, its label and who gave
    it (a flag's score or the judge), the judge's reasoning, its pattern, calibration and review."""
    run = _run(request, run_id)
    qs = queries.run_line_rows(run, "" if q.label == "all" else q.label, pattern=q.pattern)
    return page(qs, q, _run_line_out)


@router.get("/runs/{int:run_id}/review", **doc(200, RunLinePage, "The review sample's lines.", "not_found"))
def review_sample(request, run_id: int, q: Query[ReviewFilters]):
    """The lines labelled by the judge or by rule set aside for a person to check (up to 120, drawn from every
    label), to measure how far to trust the labels. Blind: a line's label, its source and its reasoning are
    empty until it is reviewed."""
    run = _run(request, run_id)
    return page(queries.review_lines(run, "" if q.show == "all" else q.show), q, _blind_line_out)


def _blind_line_out(rl) -> dict:
    out = _run_line_out(rl)
    if not rl.human_label:
        out.update(label="", label_source="", reasoning="", label_prompt_version="", pattern_id=None)
    return out


@router.post(
    "/runs/{int:run_id}/review/{int:run_line_id}",
    **doc(200, RunLineOut, "The reviewed line.", "invalid_request", "not_found", "not_in_review_sample"),
)
def review_line(request, run_id: int, run_line_id: int, body: ReviewIn):
    """Give your label to a line of the review sample; the answer shows the label it got and whether you agree.
    Sending again replaces yours."""
    run = _run(request, run_id)
    run_line = get_or_404(run.lines.select_related("line"), run_line_id, "line in this run")
    return _run_line_out(actions.do_review_line(run_line, body.label))


@router.get(
    "/runs/{int:run_id}/lines.csv",
    **doc(200, None, "Every line of the run as CSV, streamed.", "not_found", content_type="text/csv"),
)
def export_run(request, run_id: int):
    """The same CSV as the dashboard's run export."""
    return exports.run_csv(_run(request, run_id))
