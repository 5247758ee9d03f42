"""Full-call runs: estimate, start, cancel, retry the judge, list per bank, detail (calibration, counts,
patterns, verdict), lines with labels, the review sample and submitting a review, and the lines CSV."""

from datetime import datetime
from typing import Literal

from django.urls import reverse
from ninja import Field, Query, Router, Schema

from oncore.api import created
from oncore.formats import money
from oncore.transcribers.models import Transcriber
from transcriber_tests import exports
from transcriber_tests.models import Bank, Run
from transcriber_tests.runs import actions, queries

from .errors import CSV_CONTENT, doc
from .schemas import (
    BodyIn,
    Id,
    Money,
    Page,
    PageIn,
    TranscriberRef,
    get_or_404,
    page,
    page_of,
    transcriber_ref,
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
STATUSES = Literal["queued", "transcribing", "judging", "done", "cancelled", "failed"]
JUDGE_STATUSES = Literal["pending", "done", "not_configured", "failed", "skipped"]
LABELS = Literal["candidate_right", "live_right", "same_meaning", "both_wrong"]


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


class RunEstimateOut(Schema):
    """What a run costs, in one shape wherever it is shown: POST .../runs/estimate, `detail` of
    estimate_not_confirmed and a run's `estimate` (as shown before it started). Seconds and minutes are rounded
    to 3 places, rates to 4."""

    candidate_id: int
    calls: int
    lines: int = Field(description="Caller lines with audio timing the candidate transcribes.")
    already_transcribed: int = Field(description="Lines it already has text for: free.")
    audio_seconds: float
    audio_minutes: float
    price_per_minute: Money
    audio_cost: Money
    calibration_lines: int = Field(description="Lines replayed through the live transcriber.")
    calibration_audio_seconds: float
    calibration_cost: Money
    judge_configured: bool = Field(description="Whether the judge (language model) is set up on the server.")
    flagged_lines: int
    calls_already_on_candidate: int = Field(
        description="Calls that ran on the candidate (it is their live transcriber): on them the run replays the "
        "transcriber they already ran on, so it measures only the recording path, not what a switch would change."
    )
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
    judge_cost: Money
    max_judge_input_tokens: int
    max_judge_output_tokens: int
    max_judge_cost: Money
    total_cost: Money = Field(description="Expected total in USD: audio, calibration and the judge.")
    max_total_cost: Money


class RunBrief(Schema):
    id: int
    bank_id: int | None = Field(description="Null once the bank was deleted; the run stays readable by id.")
    bank_name: str
    candidate: TranscriberRef
    status: STATUSES
    judge_status: JUDGE_STATUSES
    created_at: datetime
    finished_at: datetime | None
    calls: int
    lines: int
    fixes: int = Field(
        description="Lines the candidate got right and the production transcript wrong, among the labelled "
        "lines: read it with `unlabelled` (unlabelled is not zero)."
    )
    breaks: int = Field(
        description="Lines the production transcript got right and the candidate wrong, among the labelled "
        "lines: read it with `unlabelled`."
    )
    differing: int = Field(description="Compared lines whose texts differ: the lines that need a label.")
    unlabelled: int = Field(description="Differing lines with no label yet; fixes and breaks leave them out.")
    unlabelled_why: str = Field(
        description='Why they carry none ("the judge is not configured on this server", ...); "" when none.'
    )
    audio_path_agreement: float | None = Field(
        description="Calibration: share of replays equal to the production text."
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
        description="Differing lines with no label (judge not configured, failed or pending): fixes, breaks, "
        "same_meaning and both_wrong leave them out."
    )
    unlabelled_why: str = Field(description='Why they carry none; "" when every differing line is labelled.')
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
    status: JUDGE_STATUSES
    error: str
    model: str
    prompt_version: str
    input_tokens: int
    output_tokens: int
    cost: Money


class RunOut(Schema):
    id: int
    bank_id: int | None
    bank_name: str
    candidate: TranscriberRef
    status: STATUSES
    error: str
    created_at: datetime
    finished_at: datetime | None
    call_ids: list[int]
    estimate: RunEstimateOut = Field(description="The estimate shown before the run started.")
    counts: Counts
    calibration: Calibration
    review: Review
    judge: Judge
    patterns: list[PatternOut]
    verdict: str


class RunLineOut(Schema):
    id: int = Field(description="The run line's id (used to review it).")
    position: int = Field(description="Its place in the run, from 0.")
    line_id: int
    call_id: int
    line_position: int = Field(description="The line's place in its call, from 0.")
    start_s: float | None
    end_s: float | None
    compared: bool
    production_text: str = Field(description="The production transcript (the live one) of the line.")
    candidate_text: str
    candidate_failed: bool
    candidate_error: str
    differs: bool
    flag_id: int | None
    expected_text: str = Field(description="What was said, on flagged lines.")
    candidate_match: bool | None
    production_match: bool | None
    candidate_wer: float | None
    production_wer: float | None
    label: LABELS | None = Field(
        description="live_right: the production transcript was right and the candidate wrong (a break); null "
        "while unlabelled, and in the review sample until the line is reviewed (the review is blind)."
    )
    label_source: Literal["flag", "judge", "rule"] | None
    reasoning: str
    label_prompt_version: str
    label_error: str = Field(description="Why the judge left the line unlabelled, when it did.")
    pattern_id: int | None
    calibration: bool
    replay_text: str
    replay_failed: bool
    replay_matches: bool | None
    in_review: bool
    human_label: LABELS | None
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


class RunFilters(PageIn):
    bank: Id | None = Field(None, description="Only this bank's runs (bank id).")
    status: STATUSES | None = Field(None, description="Only runs in this status.")


class ReviewIn(BodyIn):
    label: LABELS = Field(description="The label you give the line, before seeing the label it got.")


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
        "estimate": actions.estimate_dict({"candidate_id": run.candidate_id, **run.estimate}),
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
            "unlabelled_why": s.labels.why,
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
            "cost": money(run.judge_cost),
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
        "production_text": rl.live_text,
        "candidate_text": rl.candidate_text,
        "candidate_failed": rl.candidate_failed,
        "candidate_error": rl.candidate_error,
        "differs": rl.differs,
        "flag_id": rl.flag_id,
        "expected_text": rl.expected_text,
        "candidate_match": rl.candidate_match,
        "production_match": rl.live_match,
        "candidate_wer": rl.candidate_wer,
        "production_wer": rl.live_wer,
        "label": rl.label or None,
        "label_source": rl.label_source or None,
        "reasoning": rl.reasoning,
        "label_prompt_version": rl.label_prompt_version,
        "label_error": rl.label_error,
        "pattern_id": rl.pattern_id,
        "calibration": rl.calibration,
        "replay_text": rl.replay_text,
        "replay_failed": rl.replay_failed,
        "replay_matches": rl.replay_matches,
        "in_review": rl.in_review,
        "human_label": rl.human_label or None,
        "review_agrees": rl.review_agrees,
        "reviewed_at": rl.reviewed_at,
    }


def _run_page(qs, q: PageIn) -> dict:
    run_list = list(qs[q.offset : q.offset + q.limit])
    counts = queries.counts_for_runs(run_list)
    items = []
    for run in run_list:
        c = counts.get(run.pk, {})
        labels = c.get("labels")
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
                "differing": labels.differing if labels else 0,
                "unlabelled": labels.unlabelled if labels else 0,
                "unlabelled_why": labels.why if labels else "",
                "audio_path_agreement": c.get("audio_path_agreement"),
                "calibration_low": c.get("calibration_low", False),
            }
        )
    return page_of(qs.count(), q, items)


@router.get("/runs", **doc(200, RunPage, "The organization's runs, newest first."))
def list_all_runs(request, q: Query[RunFilters]):
    """Every run of the organization, those of deleted banks included (their `bank_id` is null)."""
    return _run_page(queries.runs_list(request.org.pk, bank=q.bank, status=q.status), q)


@router.get("/banks/{int:bank_id}/runs", **doc(200, RunPage, "The bank's runs, newest first.", "not_found"))
def list_runs(request, bank_id: int, q: Query[PageIn]):
    """The bank's runs. A deleted bank's runs stay in GET /runs and readable at /runs/{id}."""
    return _run_page(queries.runs_for_bank(_bank(request, bank_id)), q)


@router.post(
    "/banks/{int:bank_id}/runs/estimate",
    **doc(200, RunEstimateOut, "What the run would cost.", "not_found", *CALL_ERRORS),
)
def estimate_run(request, bank_id: int, body: RunIn):
    """The cost of a run before it starts: candidate audio (lines it already transcribed are free), the
    calibration replays and the judge's expected and maximum tokens. Nothing is started."""
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
    return created(request, reverse("api:get_run", args=[run.pk]), _run_out(_run(request, run.pk)))


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
    """Every caller line of the run: the candidate's text beside the production transcript, its label and who
    gave it (a flag's score, the judge or the rule), the judge's reasoning, its pattern, calibration and review."""
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
        out.update(label=None, label_source=None, reasoning="", label_prompt_version="", pattern_id=None)
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
    **doc(200, None, "Every line of the run as CSV, streamed.", "not_found", content=CSV_CONTENT),
)
def export_run(request, run_id: int):
    """The same CSV as the dashboard's run export."""
    return exports.run_csv(_run(request, run_id))
