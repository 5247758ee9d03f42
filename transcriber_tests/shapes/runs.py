"""A full-call run as the API and the run.finished / run.judge_failed events show it: its estimate, its brief
in lists, its detail (counts, calibration, review, judge, patterns, verdict) and its lines."""

from datetime import datetime
from typing import Annotated, Literal

from ninja import Field, Schema
from pydantic import BeforeValidator

from oncore.api import Money, version
from oncore.formats import money

from ..lib.runs import estimate_dict
from ..models import RunLine
from ..queries import runs as queries
from .refs import TranscriberRef, transcriber_ref
from .run_figures import FixesAndBreaks, LineAlignment, fixes_and_breaks, line_alignment

STATUSES = Literal["queued", "transcribing", "judging", "done", "cancelled", "failed"]


JUDGE_STATUSES = Literal["pending", "done", "not_configured", "failed", "skipped"]


# A run line's label in the API's words: the live transcript is "production" in the API, so the dashboard's
# live_right (a break: the live transcript was right, the candidate wrong) is production_right here. The rows, the
# dashboard and the CSV keep live_right.
LABELS = Literal["candidate_right", "production_right", "same_meaning", "both_wrong"]
API_LABEL = {RunLine.LIVE_RIGHT: "production_right"}
STORED_LABEL = {api: stored for stored, api in API_LABEL.items()}
# Words a request may still send, read as the API's own (the API said live_right before December 2026).
OLD_WORDS = {"live_right": "production_right"}


def api_label(stored: str) -> str | None:
    """A stored label in the API's words; None for no label."""
    return API_LABEL.get(stored, stored) or None


def stored_label(label: str) -> str:
    """A label (or a lines filter) of a request, in the API's words, as the rows store it."""
    return STORED_LABEL.get(label, label)


def new_word(value):
    """A request's old word for a label (live_right) read as the API's (production_right); the answer says the old
    word is deprecated (Deprecation and Sunset headers)."""
    if isinstance(value, str) and value in OLD_WORDS:
        version.used(value)
        return OLD_WORDS[value]
    return value


# A label in a request: the API's words, and the old live_right read as production_right (the schema lists the
# API's words only).
LabelIn = Annotated[LABELS, BeforeValidator(new_word)]


LEFT_OUT_REASONS = Literal["no_timing", "too_long", "past_recording_end"]


class LeftOutLineOut(Schema):
    call_id: int
    line_id: int
    line_number: int = Field(description='The line\'s number as the screens count it, from 1 ("line 3").')
    reason: LEFT_OUT_REASONS = Field(
        description="no_timing: the line has no audio timing; too_long: it is longer than the server's line "
        "limit (it cannot be flagged either); past_recording_end: it starts after its recording ends."
    )
    why: str = Field(description='The reason in words, with the figures ("130 s long: ...").')
    start_s: float | None
    end_s: float | None


class RunEstimateOut(Schema):
    """What a run costs, in one shape wherever it is shown: POST .../runs/estimate, `detail` of
    estimate_not_confirmed and a run's `estimate` (as shown before it started). Seconds and minutes are rounded
    to 3 places, rates to 4."""

    candidate_id: int
    calls: int
    lines: int = Field(
        description="Lines the candidate would transcribe and be paid for: caller lines the run replays that it "
        "has no text for yet. As in the candidate estimate, the lines it already transcribed are not among them."
    )
    already_transcribed: int = Field(
        description="Lines the run replays that the candidate already transcribed: free, beside `lines`. The run "
        "covers lines + already_transcribed caller lines."
    )
    left_out_lines: int | None = Field(
        description="Caller lines of the calls the run leaves out (see left_out); null on a run started before "
        "runs recorded them."
    )
    left_out: list[LeftOutLineOut] | None = Field(
        description="Each caller line the run leaves out, and why, in call order then line order; null on a run "
        "started before runs recorded them."
    )
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
    fixes_and_breaks: FixesAndBreaks = Field(
        description="Fixes and breaks as shares with their 95% intervals, and the net with its sign test."
    )
    calibration: Calibration
    review: Review
    judge: Judge
    patterns: list[PatternOut]
    verdict: str


class RunLineOut(LineAlignment):
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
        description="candidate_right: the candidate was right and the production transcript wrong (a fix); "
        "production_right: the production transcript was right and the candidate wrong (a break); null while "
        "unlabelled, and in the review sample until the line is reviewed (the review is blind)."
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
    human_label: LABELS | None = Field(
        description="The label the reviewer gave, in the same words as `label`."
    )
    review_agrees: bool | None = Field(
        description="Whether the reviewer's first answer agrees with the label."
    )
    reviewed_at: datetime | None
    correction: LABELS | None = Field(
        description="A later answer, given once the label was shown: recorded beside the first, which stands."
    )
    corrected_at: datetime | None


def run_out(run) -> dict:
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
        "estimate": estimate_dict({"candidate_id": run.candidate_id, **run.estimate}),
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
        "fixes_and_breaks": fixes_and_breaks(s),
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


# What a line awaiting review shows of its label: nothing (the review is blind).
BLIND = {"label": None, "label_source": None, "reasoning": "", "label_prompt_version": "", "pattern_id": None}


def run_line_out(rl) -> dict:
    line = rl.line
    out = {
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
        "label": api_label(rl.label),
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
        "human_label": api_label(rl.human_label),
        "review_agrees": rl.review_agrees,
        "reviewed_at": rl.reviewed_at,
        "correction": api_label(rl.correction),
        "corrected_at": rl.corrected_at,
        **line_alignment(rl),
    }
    if rl.label_hidden:
        out.update(BLIND)
    return out


def run_brief(run, counts: dict) -> dict:
    """A run in a list, with its counts from queries/runs.py counts_for_runs."""
    labels = counts.get("labels")
    return {
        "id": run.pk,
        "bank_id": run.bank_id,
        "bank_name": run.bank_name,
        "candidate": transcriber_ref(run.candidate),
        "status": run.status,
        "judge_status": run.judge_status,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
        "calls": run.n_calls,
        "lines": counts.get("lines", 0),
        "fixes": counts.get("fixes", 0),
        "breaks": counts.get("breaks", 0),
        "differing": labels.differing if labels else 0,
        "unlabelled": labels.unlabelled if labels else 0,
        "unlabelled_why": labels.why if labels else "",
        "audio_path_agreement": counts.get("audio_path_agreement"),
        "calibration_low": counts.get("calibration_low", False),
    }
