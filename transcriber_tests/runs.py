"""Full-call runs: the estimate, start, cancel, the pipeline steps, the review, and the read side.

A run replays one candidate over every caller line with audio timing of up to ten calls (assistant lines
never), compares each line with the live transcript, labels the lines, groups the candidate's breaks into
patterns and writes a verdict. It never changes a score, a flag or an assistant.

States, each move a conditional UPDATE ... WHERE status = ... (so a step delivered twice does nothing):

    queued --begin--> transcribing --compare--> judging --judge--> done
    queued / transcribing / judging --cancel--> cancelled;   an unexpected error in a step --> failed

- begin: queue a Transcription for the candidate on every line and for each call's live transcriber on the
  calibration sample. Transcription rows are unique per line and transcriber, so a line already
  transcribed is not paid for again, and the per-organization queue (jobs.pump) runs them.
- compare: once none of those transcriptions is waiting, copy the texts onto the run's lines, compare
  them with the live transcript (normalized equality), score flagged lines against what was said and
  label them mechanically (see `mechanical_label`), and check the calibration sample.
- judge: label every other line that differs, in batches that each fit in one task; then the patterns,
  the verdict and the review sample. Without ANTHROPIC_API_KEY the judge step records "not configured"
  and the run is done with its comparisons. An LLMError keeps what was labelled, records the message and
  finishes the run; `retry_judge` picks up where it stopped.

`advance(run_id)` does whichever step is next and is what the queue runs (transcriber_tests.run_tasks):
after start, after compare, after each judge batch, once a minute for every active run (advance_all), and
when the run's last transcription finishes (run_tasks.transcription_finished).
The judge's review sample holds judge labels only: a flagged line's label comes from what a person typed.
One run per organization may be queued or running: the partial unique index `one_active_run_per_org` holds
it, and a second start gets RunInProgress naming the run in progress.

Settings (settings.ONCORE, else the environment variable):
    RUN_CALIBRATION_LINES   ONCORE_RUN_CALIBRATION_LINES   lines replayed through the live transcriber (20)
    RUN_CALIBRATION_WARN    ONCORE_RUN_CALIBRATION_WARN    audio path agreement below this warns (0.8)
    RUN_REVIEW_LINES        ONCORE_RUN_REVIEW_LINES        judge-labelled lines set aside for review (120)
"""

import logging
import math
import random
import time
from dataclasses import asdict, dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, OuterRef, Q
from django.utils import timezone

from oncore import llm
from oncore.calls.models import Call, Line
from oncore.transcribers.engines.base import cost_for

from . import jobs, judge, queries, scoring
from .actions import clip_seconds, live_transcriber_of, untranscribed
from .errors import (
    ActionError,
    EstimateNotConfirmed,
    LineNotRecorded,
    LiveTranscriberUnknown,
    NotFound,
    RunInProgress,
    TranscriberDisabled,
)
from .models import Bank, Candidate, Flag, Run, RunCall, RunLine, RunPattern, Score, Transcription

log = logging.getLogger(__name__)

MAX_CALLS = 10
CONTEXT_EACH_SIDE = 3  # neighbouring lines shown to the judge on each side of a line
PATTERN_CONTEXT_EACH_SIDE = 1
VERDICT_EXAMPLES_EACH = 3  # fixes and breaks each shown to the verdict

FINISHED = (Transcription.DONE, Transcription.FAILED)


# ---------------------------------------------------------------- refusals of run actions


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


# ---------------------------------------------------------------- settings


def calibration_size() -> int:
    return settings.ONCORE["RUN_CALIBRATION_LINES"]


def review_size() -> int:
    return settings.ONCORE["RUN_REVIEW_LINES"]


def calibration_warn_below() -> float:
    return settings.ONCORE["RUN_CALIBRATION_WARN"]


def judge_budget_s() -> float:
    """Seconds one judge task labels before it hands the rest to the next task: half the queue's timeout."""
    return int(settings.Q_CLUSTER["timeout"]) / 2


# ---------------------------------------------------------------- the pure core


@dataclass(frozen=True)
class LineComparison:
    differs: bool  # normalized candidate and live texts differ
    label: str  # set only on a flagged line (mechanical); "" where the judge decides or nothing differs
    candidate_match: bool | None = None  # flagged lines only: against what was said
    live_match: bool | None = None
    candidate_wer: float | None = None
    live_wer: float | None = None


def mechanical_label(candidate_match: bool, live_match: bool) -> str:
    """The label of a flagged line, from the two scores against what was said.

    candidate matches and live does not: candidate_right; live matches and candidate does not: live_right;
    neither: both_wrong. Both match: same_meaning; both then equal what was said after normalization,
    so they equal each other and the line is neither a fix nor a break."""
    if candidate_match and not live_match:
        return RunLine.CANDIDATE_RIGHT
    if live_match and not candidate_match:
        return RunLine.LIVE_RIGHT
    if candidate_match and live_match:
        return RunLine.SAME_MEANING
    return RunLine.BOTH_WRONG


def compare_line(live_text: str, candidate_text: str, expected: str | None = None) -> LineComparison:
    """Compare a candidate's text with the live transcript; with `expected` (a flag), score both and label."""
    differs = scoring.normalize(live_text) != scoring.normalize(candidate_text)
    if not expected or not scoring.normalize(expected):
        return LineComparison(differs=differs, label="")
    cand = scoring.score_line(expected, candidate_text)
    live = scoring.score_line(expected, live_text)
    return LineComparison(differs, mechanical_label(cand.match, live.match), cand.match, live.match, cand.wer,
                          live.wer)


# ---------------------------------------------------------------- choosing calls and the estimate


def _resolve_calls(organization, call_ids) -> list[Call]:
    try:
        ids = list(dict.fromkeys(int(c) for c in call_ids))
    except (TypeError, ValueError):
        raise NoCallsChosen("Call ids must be whole numbers.") from None
    if not ids:
        raise NoCallsChosen("Choose at least one call for the run.")
    if len(ids) > MAX_CALLS:
        raise TooManyCalls(f"A run covers at most {MAX_CALLS} calls; {len(ids)} were chosen. Remove some.",
                           {"calls": len(ids), "limit": MAX_CALLS})
    found = {
        c.pk: c
        for c in Call.objects.filter(pk__in=ids, tenant__organization=organization).select_related(
            "assistant", "live_transcriber"
        )
    }
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"No call {', '.join(map(str, missing))} in this organization.", {"calls": missing})
    calls = [found[i] for i in ids]
    for call in calls:
        if not call.recorded or not call.recording:
            raise LineNotRecorded(
                f"Call {call.pk} was not recorded, so its lines cannot be replayed. Leave it out of the run.",
                {"call": call.pk},
            )
        if live_transcriber_of(call) is None:
            raise LiveTranscriberUnknown(
                f"The transcriber call {call.pk} ran on is unknown, so there is nothing to compare against. "
                "Add it to the catalogue or set it on the call, or leave the call out.",
                {"call": call.pk},
            )
    return calls


def run_lines_of(calls):
    """Every caller line with audio timing of these calls, in call order then line order."""
    order = {c.pk: i for i, c in enumerate(calls)}
    lines = list(
        Line.objects.filter(
            call__in=[c.pk for c in calls], speaker=Line.CALLER, start_s__isnull=False, end_s__isnull=False
        ).only("id", "call_id", "position", "start_s", "end_s")
    )
    lines.sort(key=lambda ln: (order[ln.call_id], ln.position))
    return lines


@dataclass(frozen=True)
class RunEstimate:
    calls: int
    lines: int
    already_transcribed: int
    audio_seconds: float
    price_per_minute: Decimal
    audio_cost: Decimal
    calibration_lines: int
    calibration_audio_seconds: float
    calibration_cost: Decimal
    judge_configured: bool
    flagged_lines: int
    differ_rate: float | None  # share of the bank's control lines where the candidate differed; None: unknown
    expected_judged_lines: int
    judge_input_tokens: int
    judge_output_tokens: int
    judge_cost: Decimal
    max_judge_input_tokens: int
    max_judge_output_tokens: int
    max_judge_cost: Decimal

    @property
    def audio_minutes(self) -> float:
        return self.audio_seconds / 60

    @property
    def calibration_minutes(self) -> float:
        return self.calibration_audio_seconds / 60

    @property
    def total_cost(self) -> Decimal:
        return self.audio_cost + self.calibration_cost + self.judge_cost

    @property
    def max_total_cost(self) -> Decimal:
        return self.audio_cost + self.calibration_cost + self.max_judge_cost

    def as_dict(self) -> dict:
        data = asdict(self)
        for key, value in data.items():
            if isinstance(value, Decimal):
                data[key] = str(value)
        data.update(audio_minutes=round(self.audio_minutes, 3), total_cost=str(self.total_cost),
                    max_total_cost=str(self.max_total_cost))
        return data


def differ_rate(bank: Bank, candidate) -> float | None:
    """How often the candidate's text differed from the live transcript on the bank's control lines (whose
    expected text is the live transcript): the best guess of how many lines the judge will label."""
    row = Score.objects.filter(
        flag__bank=bank, control__isnull=False, transcriber=candidate, source=Score.CANDIDATE, failed=False
    ).aggregate(n=Count("id"), differ=Count("id", filter=Q(match=False)))
    return row["differ"] / row["n"] if row["n"] else None


def _estimate(bank, candidate, calls, lines) -> RunEstimate:
    todo, seconds = untranscribed(lines, candidate)
    price = Decimal(str(candidate.price_per_minute))
    # Calibration: the sample is drawn at start, so estimate with the average line of these calls.
    live_price = {c.pk: Decimal(str(live_transcriber_of(c).price_per_minute)) for c in calls}
    n_cal = min(calibration_size(), len(lines))
    per_line_s = sum(clip_seconds(ln) for ln in lines) / len(lines) if lines else 0.0
    per_line_cost = (
        sum(cost_for(clip_seconds(ln), live_price[ln.call_id]) for ln in lines) / len(lines) if lines else Decimal(0)
    )
    cal_cost = (per_line_cost * n_cal).quantize(Decimal("0.000001"))
    flagged = Flag.objects.filter(line__in=[ln.pk for ln in lines]).count()
    unflagged = len(lines) - flagged
    rate = differ_rate(bank, candidate)
    expected = math.ceil(unflagged * (1.0 if rate is None else rate))
    configured = llm.judge_configured()
    instructions = max((c.assistant.instructions for c in calls if c.assistant), key=len, default="")
    if configured:
        tin, tout = judge.estimate_run_tokens(expected, unflagged, instructions=instructions)
        max_in, max_out = judge.estimate_run_tokens(unflagged, unflagged, instructions=instructions)
    else:
        tin = tout = max_in = max_out = 0
    return RunEstimate(
        calls=len(calls), lines=len(lines), already_transcribed=len(lines) - len(todo), audio_seconds=seconds,
        price_per_minute=price, audio_cost=cost_for(seconds, price), calibration_lines=n_cal,
        calibration_audio_seconds=per_line_s * n_cal, calibration_cost=cal_cost, judge_configured=configured,
        flagged_lines=flagged, differ_rate=rate, expected_judged_lines=expected if configured else 0,
        judge_input_tokens=tin, judge_output_tokens=tout, judge_cost=llm.estimate_cost(tin, tout),
        max_judge_input_tokens=max_in, max_judge_output_tokens=max_out, max_judge_cost=llm.estimate_cost(max_in, max_out),
    )


def default_candidate(bank: Bank):
    """The bank's leader, or None while it has no scored lines."""
    leader = queries.bank_results(bank).leader
    return leader.transcriber if leader else None


def _check_bank_and_candidate(bank, candidate):
    if candidate is None:
        candidate = default_candidate(bank)
        if candidate is None:
            raise NoCandidate(f"{bank} has no leader yet (no scored lines): choose the candidate to run.")
    if not candidate.enabled:
        raise TranscriberDisabled(f"{candidate} is disabled in the catalogue.")
    return candidate


def estimate_run(bank: Bank, call_ids, candidate=None) -> RunEstimate:
    """What a run would cost before it starts: candidate audio minutes x price (lines the candidate already
    transcribed are free), the calibration replays, and the judge's expected and maximum tokens."""
    candidate = _check_bank_and_candidate(bank, candidate)
    calls = _resolve_calls(bank.organization, call_ids)
    return _estimate(bank, candidate, calls, run_lines_of(calls))


# ---------------------------------------------------------------- start, cancel, retry


def active_run(organization_id: int) -> Run | None:
    return (
        Run.objects.filter(organization_id=organization_id, status__in=Run.ACTIVE)
        .select_related("candidate")
        .first()
    )


def _in_progress(organization_id: int) -> RunInProgress:
    run = active_run(organization_id)
    if run is None:
        return RunInProgress("Another run of this organization started at the same moment; try again.")
    return RunInProgress(
        f"Run {run.pk} ({run.candidate} on bank {run.bank_name}) is {run.status}: an organization runs one "
        "full-call run at a time. Wait for it to finish, or cancel it.",
        {"run": run.pk, "status": run.status},
    )


def start_run(bank: Bank, call_ids, *, candidate=None, confirmed: bool = False, user=None,
              rng: random.Random | None = None) -> Run:
    """Start a run of `candidate` (the bank's leader unless given) over the calls. The estimate must be
    confirmed: without `confirmed` this raises EstimateNotConfirmed carrying it."""
    candidate = _check_bank_and_candidate(bank, candidate)
    calls = _resolve_calls(bank.organization, call_ids)
    lines = run_lines_of(calls)
    if not lines:
        raise RunHasNoLines("None of these calls has a caller line with audio timing, so there is nothing to run.")
    estimate = _estimate(bank, candidate, calls, lines)
    if not confirmed:
        raise EstimateNotConfirmed(
            f"This run transcribes {estimate.lines} lines with {candidate} ({estimate.audio_minutes:.1f} audio "
            f"minutes, about ${estimate.audio_cost}), replays {estimate.calibration_lines} for calibration "
            f"(about ${estimate.calibration_cost}), and the judge expects about "
            f"{estimate.judge_input_tokens + estimate.judge_output_tokens:,} tokens (about ${estimate.judge_cost}). "
            "Confirm the estimate to start.",
            estimate.as_dict(),
        )
    jobs.check_capacity(bank.organization_id)
    rng = rng or random.SystemRandom()
    seed = rng.randrange(2**62)
    size = calibration_size()
    sampled = set(random.Random(seed).sample(range(len(lines)), min(size, len(lines))))
    live = {c.pk: live_transcriber_of(c) for c in calls}
    try:
        with transaction.atomic():
            run = Run.objects.create(
                organization_id=bank.organization_id, bank=bank, bank_name=bank.name, candidate=candidate,
                seed=seed, calibration_size=size, review_size=review_size(), estimate=estimate.as_dict(),
                created_by=user if user is not None and user.is_authenticated else None,
            )
            RunCall.objects.bulk_create([RunCall(run=run, call=c, position=i) for i, c in enumerate(calls)])
            RunLine.objects.bulk_create([
                RunLine(run=run, line_id=ln.pk, position=i, calibration=i in sampled,
                        replay_transcriber=live[ln.call_id] if i in sampled else None)
                for i, ln in enumerate(lines)
            ])
            transaction.on_commit(lambda: jobs.enqueue("transcriber_tests.run_tasks.advance", run.pk))
    except IntegrityError:
        # The partial unique index one_active_run_per_org: another run is queued or running.
        raise _in_progress(bank.organization_id) from None
    return run


def _run_pairs(run: Run, run_lines) -> set[tuple[int, int]]:
    """(line, transcriber) of every transcription the run needs."""
    pairs = {(rl.line_id, run.candidate_id) for rl in run_lines}
    pairs |= {(rl.line_id, rl.replay_transcriber_id) for rl in run_lines if rl.calibration}
    return pairs


def _drop_queued_transcriptions(run: Run) -> int:
    """After a cancel: queued transcriptions the run asked for are not spent, unless a bank's flag or control
    line needs the same line and transcriber."""
    run_lines = list(run.lines.only("line_id", "calibration", "replay_transcriber_id"))
    pairs = _run_pairs(run, run_lines)
    q = Q(pk__in=[])
    for tid in {t for _, t in pairs}:
        q |= Q(transcriber_id=tid, line_id__in=[line for line, t in pairs if t == tid])
    flag_needs = Candidate.objects.filter(transcriber=OuterRef("transcriber"), bank__flags__line=OuterRef("line"))
    control_needs = Candidate.objects.filter(
        transcriber=OuterRef("transcriber"), bank__flags__controls__line=OuterRef("line")
    )
    ids = list(
        Transcription.objects.filter(q, status=Transcription.QUEUED)
        .exclude(Exists(flag_needs))
        .exclude(Exists(control_needs))
        .values_list("pk", flat=True)
    )
    deleted, _ = Transcription.objects.filter(pk__in=ids, status=Transcription.QUEUED).delete()
    return deleted


def cancel_run(run: Run) -> Run:
    """Cancel a queued or running run. Transcriptions already made are kept; queued ones are dropped."""
    now = timezone.now()
    cancelled = Run.objects.filter(pk=run.pk, status__in=Run.ACTIVE).update(
        status=Run.CANCELLED, finished_at=now, judge_claimed_at=None, updated_at=now
    )
    run.refresh_from_db()
    if not cancelled:
        raise RunNotActive(f"Run {run.pk} is {run.status}; only a queued or running run can be cancelled.",
                           {"run": run.pk, "status": run.status})
    _drop_queued_transcriptions(run)
    return run


def retry_judge(run: Run) -> Run:
    """Give a finished run whose judge failed another go; labels already made are kept."""
    now = timezone.now()
    try:
        with transaction.atomic():
            moved = Run.objects.filter(pk=run.pk, status=Run.DONE, judge_status=Run.JUDGE_FAILED).update(
                status=Run.JUDGING, judge_status=Run.JUDGE_PENDING, judge_error="", finished_at=None,
                judge_claimed_at=None, updated_at=now
            )
    except IntegrityError:
        raise _in_progress(run.organization_id) from None
    run.refresh_from_db()
    if not moved:
        raise JudgeNotFailed(f"Run {run.pk}'s judge has not failed, so there is nothing to retry.")
    transaction.on_commit(lambda: jobs.enqueue("transcriber_tests.run_tasks.advance", run.pk))
    return run


# ---------------------------------------------------------------- the steps


def advance(run_id: int) -> str:
    """Do the run's next step. Safe to run twice and from several workers: every step claims its move."""
    run = Run.objects.filter(pk=run_id).first()
    if run is None or not run.is_active:
        return "skipped"
    try:
        if run.status == Run.QUEUED:
            begin(run_id)
            return compare(run_id)
        if run.status == Run.TRANSCRIBING:
            return compare(run_id)
        return judge_step(run_id)
    except Exception as exc:
        log.exception("run %s failed", run_id)
        _fail(run_id, f"Unexpected error: {exc.__class__.__name__}: {exc}")
        return "failed"


def _fail(run_id: int, message: str) -> None:
    now = timezone.now()
    Run.objects.filter(pk=run_id, status__in=Run.ACTIVE).update(
        status=Run.FAILED, error=message, finished_at=now, judge_claimed_at=None, updated_at=now
    )


def _queue(run: Run, pairs, existing) -> int:
    new = [
        Transcription(organization_id=run.organization_id, line_id=line_id, transcriber_id=tid)
        for line_id, tid in sorted(pairs)
        if (line_id, tid) not in existing
    ]
    Transcription.objects.bulk_create(new, ignore_conflicts=True)
    if new:
        transaction.on_commit(lambda: jobs.pump(run.organization_id))
    return len(new)


def begin(run_id: int) -> str:
    """queued -> transcribing: ask for every transcription the run needs, in one transaction."""
    with transaction.atomic():
        if not Run.objects.filter(pk=run_id, status=Run.QUEUED).update(status=Run.TRANSCRIBING,
                                                                       updated_at=timezone.now()):
            return "skipped"
        run = Run.objects.get(pk=run_id)
        pairs = _run_pairs(run, list(run.lines.only("line_id", "calibration", "replay_transcriber_id")))
        existing = set(
            Transcription.objects.filter(line_id__in={p[0] for p in pairs}).values_list("line_id", "transcriber_id")
        )
        _queue(run, pairs, existing)
    return "transcribing"


def compare(run_id: int) -> str:
    """transcribing -> judging, once none of the run's transcriptions is waiting."""
    run = Run.objects.get(pk=run_id)
    if run.status != Run.TRANSCRIBING:
        return "skipped"
    run_lines = list(run.lines.select_related("line__call"))
    pairs = _run_pairs(run, run_lines)
    found = {
        (t.line_id, t.transcriber_id): t
        for t in Transcription.objects.filter(line_id__in={p[0] for p in pairs})
        if (t.line_id, t.transcriber_id) in pairs
    }
    if len(found) < len(pairs):  # a row went missing (a cancelled run's, deleted): ask again
        with transaction.atomic():
            _queue(run, pairs, set(found))
        return "waiting"
    if any(t.status not in FINISHED for t in found.values()):
        return "waiting"
    flags = {f.line_id: f for f in Flag.objects.filter(line_id__in=[rl.line_id for rl in run_lines])}
    for rl in run_lines:
        _fill_line(rl, found[(rl.line_id, run.candidate_id)], flags.get(rl.line_id),
                   found.get((rl.line_id, rl.replay_transcriber_id)) if rl.calibration else None)
    fields = ["compared", "live_text", "candidate_text", "candidate_failed", "candidate_error", "differs", "flag",
              "expected_text", "candidate_match", "live_match", "candidate_wer", "live_wer", "label", "label_source",
              "replay_text", "replay_failed", "replay_matches"]
    with transaction.atomic():
        # The conditional update first: it takes the run's row, so a cancel waits for this to commit.
        if not Run.objects.filter(pk=run_id, status=Run.TRANSCRIBING).update(
            status=Run.JUDGING, judge_status=Run.JUDGE_PENDING, updated_at=timezone.now()
        ):
            return "skipped"
        RunLine.objects.bulk_update(run_lines, fields, batch_size=500)
        transaction.on_commit(lambda: jobs.enqueue("transcriber_tests.run_tasks.advance", run_id))
    return "judging"


def _fill_line(rl: RunLine, t: Transcription, flag: Flag | None, replay: Transcription | None) -> None:
    rl.compared = True
    rl.live_text = rl.line.text
    rl.flag = flag
    rl.expected_text = flag.expected_text if flag else ""
    rl.candidate_failed = t.status != Transcription.DONE
    rl.candidate_error = t.error if rl.candidate_failed else ""
    rl.candidate_text = "" if rl.candidate_failed else t.text
    if rl.candidate_failed:
        rl.differs, rl.label, rl.label_source = False, "", ""
    else:
        c = compare_line(rl.live_text, rl.candidate_text, rl.expected_text or None)
        rl.differs, rl.label = c.differs, c.label
        rl.label_source = RunLine.BY_FLAG if c.label else ""
        rl.candidate_match, rl.live_match = c.candidate_match, c.live_match
        rl.candidate_wer, rl.live_wer = c.candidate_wer, c.live_wer
    if replay is not None:
        rl.replay_failed = replay.status != Transcription.DONE
        rl.replay_text = "" if rl.replay_failed else replay.text
        rl.replay_matches = None if rl.replay_failed else (
            scoring.normalize(replay.text) == scoring.normalize(rl.live_text)
        )


class _Context:
    """The neighbouring lines and the assistant's instructions of the run's calls, loaded once per task."""

    def __init__(self, run: Run):
        self.lines: dict[int, list] = {}
        self.instructions: dict[int, str] = {}
        for call in run.calls.select_related("assistant"):
            self.instructions[call.pk] = call.assistant.instructions if call.assistant else ""
        for line in Line.objects.filter(call__in=list(self.instructions)).order_by("call_id", "position"):
            self.lines.setdefault(line.call_id, []).append(line)

    def around(self, line_id: int, call_id: int, each_side: int) -> list[tuple[str, str]]:
        lines = self.lines.get(call_id, [])
        index = next((i for i, ln in enumerate(lines) if ln.pk == line_id), None)
        if index is None:
            return []
        out = [(ln.speaker, ln.text) for ln in lines[max(0, index - each_side):index]]
        out.append(("caller", "[the line being judged]"))
        out += [(ln.speaker, ln.text) for ln in lines[index + 1:index + 1 + each_side]]
        return out


def _add_tokens(run_id: int, call: llm.ToolCall | None) -> None:
    if call is None:
        return
    Run.objects.filter(pk=run_id).update(
        judge_input_tokens=F("judge_input_tokens") + call.input_tokens + call.cache_read_tokens
        + call.cache_write_tokens,
        judge_output_tokens=F("judge_output_tokens") + call.output_tokens,
        judge_cost=F("judge_cost") + call.cost,
        judge_model=call.model,
        judge_prompt_version=judge.JUDGE_PROMPT_VERSION,
    )


def to_label(run: Run):
    """Lines the judge labels: compared, not flagged, the candidate produced text, and it differs."""
    return run.lines.filter(compared=True, differs=True, candidate_failed=False, flag__isnull=True, label="")


def judge_step(run_id: int, budget_s: float | None = None) -> str:
    """Label for at most `budget_s` seconds, then hand on to the next task; then patterns, verdict, review
    sample, done. A worker that dies leaves its claim, which the next delivery takes over after the lease."""
    now = timezone.now()
    stale = now - timedelta(seconds=jobs.lease_seconds())
    if not Run.objects.filter(pk=run_id, status=Run.JUDGING).filter(
        Q(judge_claimed_at__isnull=True) | Q(judge_claimed_at__lt=stale)
    ).update(judge_claimed_at=now):
        return "skipped"
    run = Run.objects.get(pk=run_id)
    held = Run.objects.filter(pk=run_id, status=Run.JUDGING, judge_claimed_at=now)
    if not llm.judge_configured():
        _finish_judging(held, Run.JUDGE_NOT_CONFIGURED, "judge not configured: set ANTHROPIC_API_KEY")
        return "done"
    deadline = time.monotonic() + (judge_budget_s() if budget_s is None else budget_s)
    try:
        context = _Context(run)
        for rl in to_label(run).select_related("line").order_by("position"):
            if not held.exists():
                return "stopped"
            if time.monotonic() > deadline:
                held.update(judge_claimed_at=None)
                transaction.on_commit(lambda: jobs.enqueue("transcriber_tests.run_tasks.advance", run_id))
                return "continues"
            call_id = rl.line.call_id
            result = judge.label_line(
                instructions=context.instructions.get(call_id, ""),
                context_lines=context.around(rl.line_id, call_id, CONTEXT_EACH_SIDE),
                live_text=rl.live_text, candidate_text=rl.candidate_text,
            )
            RunLine.objects.filter(pk=rl.pk, label="").update(
                label=result.label, label_source=RunLine.BY_JUDGE, reasoning=result.reasoning
            )
            _add_tokens(run_id, result.call)
        run.refresh_from_db()
        if not run.patterns_done:
            if not held.exists():
                return "stopped"
            _patterns(run, context)
        if not run.verdict:
            if not held.exists():
                return "stopped"
            _verdict(run)
        _review_sample(run)
    except (llm.LLMError, llm.JudgeNotConfigured) as exc:
        _review_sample(run)
        left = to_label(run).count()
        _finish_judging(held, Run.JUDGE_FAILED,
                        f"The judge failed: {exc.message.rstrip('.')}. Labels so far are kept; {left} differing line"
                        f"{'s' if left != 1 else ''} left unlabelled. Retry the judge to carry on.")
        return "judge failed"
    _finish_judging(held, Run.JUDGE_DONE, "")
    return "done"


def _finish_judging(held, judge_status: str, message: str) -> None:
    held.update(status=Run.DONE, judge_status=judge_status, judge_error=message, finished_at=timezone.now(),
                judge_claimed_at=None, updated_at=timezone.now())


def _patterns(run: Run, context: _Context) -> None:
    breaks = list(run.lines.filter(label=RunLine.LIVE_RIGHT).select_related("line").order_by("position"))
    items = [
        {"line_id": rl.pk, "live_text": rl.live_text, "candidate_text": rl.candidate_text,
         "context": context.around(rl.line_id, rl.line.call_id, PATTERN_CONTEXT_EACH_SIDE)}
        for rl in breaks
    ]
    found = judge.group_patterns(lines=items)
    with transaction.atomic():
        run.patterns.all().delete()
        for position, pattern in enumerate(found):
            row = RunPattern.objects.create(run=run, position=position, name=pattern.name[:200],
                                            description=pattern.description, count=pattern.count)
            RunLine.objects.filter(run=run, pk__in=pattern.line_ids).update(pattern=row)
        Run.objects.filter(pk=run.pk).update(patterns_done=True)
        _add_tokens(run.pk, found.call)


def _verdict(run: Run) -> None:
    counts = label_counts(run)
    examples = []
    for label in (RunLine.CANDIDATE_RIGHT, RunLine.LIVE_RIGHT):
        for rl in run.lines.filter(label=label).order_by("position")[:VERDICT_EXAMPLES_EACH]:
            examples.append({"live_text": rl.live_text, "candidate_text": rl.candidate_text, "label": label})
    patterns = [{"name": p.name, "description": p.description, "count": p.count} for p in run.patterns.all()]
    verdict = judge.write_verdict(fixes=counts.get(RunLine.CANDIDATE_RIGHT, 0),
                                  breaks=counts.get(RunLine.LIVE_RIGHT, 0), patterns=patterns, examples=examples)
    Run.objects.filter(pk=run.pk).update(verdict=verdict.text)
    _add_tokens(run.pk, verdict.call)


def _review_sample(run: Run) -> int:
    """Set aside up to `run.review_size` judge-labelled lines at random (seeded by the run). Safe to repeat:
    lines already in the sample stay, and the sample only grows up to its size."""
    have = set(run.lines.filter(in_review=True).values_list("pk", flat=True))
    room = run.review_size - len(have)
    if room <= 0:
        return 0
    pool = sorted(set(run.lines.filter(label_source=RunLine.BY_JUDGE).values_list("pk", flat=True)) - have)
    chosen = random.Random(run.seed + len(have)).sample(pool, min(room, len(pool)))
    return RunLine.objects.filter(pk__in=chosen).update(in_review=True)


def label_counts(run: Run) -> dict[str, int]:
    return dict(run.lines.exclude(label="").values_list("label").annotate(n=Count("id")).values_list("label", "n"))


# ---------------------------------------------------------------- review


def review_line(run_line: RunLine, agrees: bool, user=None) -> RunLine:
    """A person agrees or disagrees with the judge's label on a line of the review sample."""
    if not run_line.in_review:
        raise NotInReviewSample("Only lines in the run's review sample can be reviewed.")
    RunLine.objects.filter(pk=run_line.pk).update(
        review_agrees=bool(agrees), reviewed_at=timezone.now(),
        reviewed_by=user if user is not None and user.is_authenticated else None,
    )
    run_line.refresh_from_db()
    return run_line


# ---------------------------------------------------------------- the read side


@dataclass(frozen=True)
class RunSummary:
    lines: int
    compared: int
    identical: int
    differing: int
    candidate_failed: int
    fixes: int  # candidate_right
    breaks: int  # live_right
    same_meaning: int
    both_wrong: int
    unlabelled: int  # differing lines with no label (judge not configured, failed, or not there yet)
    flagged: int
    calibration_sampled: int
    calibration_compared: int
    calibration_matched: int
    calibration_failed: int
    review_sample: int
    reviewed: int
    review_agrees: int
    transcriptions: int
    transcriptions_finished: int
    warn_below: float

    @property
    def audio_path_agreement(self) -> float | None:
        return self.calibration_matched / self.calibration_compared if self.calibration_compared else None

    @property
    def audio_path_agreement_pct(self):
        value = self.audio_path_agreement
        return None if value is None else round(100 * value, 1)

    @property
    def calibration_low(self) -> bool:
        value = self.audio_path_agreement
        return value is not None and value < self.warn_below

    @property
    def warn_below_pct(self):
        return round(100 * self.warn_below)

    @property
    def judge_human_agreement(self) -> float | None:
        return self.review_agrees / self.reviewed if self.reviewed else None

    @property
    def judge_human_agreement_pct(self):
        value = self.judge_human_agreement
        return None if value is None else round(100 * value, 1)

    @property
    def labelled(self) -> int:
        return self.fixes + self.breaks + self.same_meaning + self.both_wrong


def run_summary(run: Run) -> RunSummary:
    """Every count the run page shows, in two queries."""
    c = run.lines.aggregate(
        n_lines=Count("id"),
        n_compared=Count("id", filter=Q(compared=True)),
        n_identical=Count("id", filter=Q(compared=True, candidate_failed=False, differs=False)),
        n_differing=Count("id", filter=Q(compared=True, candidate_failed=False, differs=True)),
        n_failed=Count("id", filter=Q(compared=True, candidate_failed=True)),
        n_fixes=Count("id", filter=Q(label=RunLine.CANDIDATE_RIGHT)),
        n_breaks=Count("id", filter=Q(label=RunLine.LIVE_RIGHT)),
        n_same=Count("id", filter=Q(label=RunLine.SAME_MEANING)),
        n_both=Count("id", filter=Q(label=RunLine.BOTH_WRONG)),
        n_unlabelled=Count("id", filter=Q(compared=True, candidate_failed=False, differs=True, label="")),
        n_flagged=Count("id", filter=Q(flag__isnull=False)),
        n_cal=Count("id", filter=Q(calibration=True)),
        n_cal_compared=Count("id", filter=Q(calibration=True, replay_matches__isnull=False)),
        n_cal_matched=Count("id", filter=Q(calibration=True, replay_matches=True)),
        n_cal_failed=Count("id", filter=Q(calibration=True, replay_failed=True)),
        n_review=Count("id", filter=Q(in_review=True)),
        n_reviewed=Count("id", filter=Q(in_review=True, review_agrees__isnull=False)),
        n_agrees=Count("id", filter=Q(in_review=True, review_agrees=True)),
    )
    t = Transcription.objects.filter(
        Q(line__run_lines__run=run)
        & (Q(transcriber_id=run.candidate_id)
           | Q(line__run_lines__calibration=True, transcriber_id=F("line__run_lines__replay_transcriber_id")))
    ).aggregate(n=Count("id", distinct=True), done=Count("id", distinct=True, filter=Q(status__in=FINISHED)))
    return RunSummary(
        lines=c["n_lines"], compared=c["n_compared"], identical=c["n_identical"], differing=c["n_differing"],
        candidate_failed=c["n_failed"], fixes=c["n_fixes"], breaks=c["n_breaks"], same_meaning=c["n_same"],
        both_wrong=c["n_both"], unlabelled=c["n_unlabelled"], flagged=c["n_flagged"], calibration_sampled=c["n_cal"],
        calibration_compared=c["n_cal_compared"], calibration_matched=c["n_cal_matched"],
        calibration_failed=c["n_cal_failed"], review_sample=c["n_review"], reviewed=c["n_reviewed"],
        review_agrees=c["n_agrees"], transcriptions=t["n"], transcriptions_finished=t["done"],
        warn_below=calibration_warn_below(),
    )


LINE_FILTERS = {
    "": ("Every line", Q()),
    "differing": ("Differing", Q(differs=True)),
    "identical": ("Identical", Q(compared=True, differs=False, candidate_failed=False)),
    RunLine.CANDIDATE_RIGHT: ("Candidate right (fixes)", Q(label=RunLine.CANDIDATE_RIGHT)),
    RunLine.LIVE_RIGHT: ("Live right (breaks)", Q(label=RunLine.LIVE_RIGHT)),
    RunLine.SAME_MEANING: ("Same meaning", Q(label=RunLine.SAME_MEANING)),
    RunLine.BOTH_WRONG: ("Both wrong", Q(label=RunLine.BOTH_WRONG)),
    "unlabelled": ("Differing, not labelled", Q(compared=True, differs=True, candidate_failed=False, label="")),
    "no_text": ("Candidate produced no text", Q(candidate_failed=True)),
    "flagged": ("Flagged lines", Q(flag__isnull=False)),
    "review": ("Review sample", Q(in_review=True)),
    "calibration": ("Calibration sample", Q(calibration=True)),
}


def run_line_rows(run: Run, which: str = ""):
    _, q = LINE_FILTERS.get(which, LINE_FILTERS[""])
    return run.lines.filter(q).select_related("line__call", "pattern").order_by("position")


def runs_for_bank(bank: Bank):
    return bank.runs.select_related("candidate", "created_by").order_by("-created_at", "-id")


def counts_for_runs(run_list) -> dict[int, dict]:
    """Fixes, breaks and audio path agreement of a page of runs, in one query."""
    rows = (
        RunLine.objects.filter(run__in=list(run_list))
        .values("run_id")
        .annotate(
            fixes=Count("id", filter=Q(label=RunLine.CANDIDATE_RIGHT)),
            breaks=Count("id", filter=Q(label=RunLine.LIVE_RIGHT)),
            lines=Count("id"),
            cal_compared=Count("id", filter=Q(calibration=True, replay_matches__isnull=False)),
            cal_matched=Count("id", filter=Q(calibration=True, replay_matches=True)),
        )
    )
    out = {}
    for row in rows:
        n = row["cal_compared"]
        row["agreement_pct"] = round(100 * row["cal_matched"] / n, 1) if n else None
        row["calibration_low"] = bool(n) and row["cal_matched"] / n < calibration_warn_below()
        out[row["run_id"]] = row
    return out
