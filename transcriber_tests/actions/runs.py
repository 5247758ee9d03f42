"""Every write a person asks of a full-call run (the HTML views and the API call these): start it once its
estimate is confirmed, cancel it, retry its judge, review the judge's labels. The queue's steps are in work/runs.py.
Each refusal is an ActionError from transcriber_tests.errors."""

import math
import random
from dataclasses import asdict
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone

from oncore import audio, llm
from oncore.calls.models import Call, Line
from oncore.calls.recording import why_not_recorded
from oncore.config import config
from oncore.templatetags.oncore_tags import dollars
from oncore.transcribers.engines.base import cost_for
from oncore.webhooks import actions as webhooks

from .. import handles, judge
from ..errors import (
    EstimateNotConfirmed,
    JudgeNotFailed,
    LineNotRecorded,
    LiveTranscriberUnknown,
    NoCallsChosen,
    NoCandidate,
    NotFound,
    NotInReviewSample,
    RecordingUnavailable,
    RunHasNoLines,
    RunInProgress,
    RunNotActive,
    TooManyCalls,
    TranscriberDisabled,
)
from ..judge import rule_labels
from ..judge.requests import Context, label_requests
from ..lib import scoring
from ..lib.runs import NO_TIMING, PAST_RECORDING_END, TOO_LONG, LeftOutLine, RunEstimate, left_out_summary
from ..models import Bank, Candidate, Flag, Run, RunCall, RunLine, Score, Transcription
from ..queries import runs as queries
from ..queries.lines import clip_seconds, live_transcriber_of, too_long, untranscribed
from ..shapes import events

MAX_CALLS = 10


# ---------------------------------------------------------------- choosing calls and the estimate


def _resolve_calls(organization, call_ids) -> list[Call]:
    try:
        ids = list(dict.fromkeys(int(c) for c in call_ids))
    except (TypeError, ValueError):
        raise NoCallsChosen("Call ids must be whole numbers.") from None
    if not ids:
        raise NoCallsChosen("Choose at least one call for the run.")
    if len(ids) > MAX_CALLS:
        raise TooManyCalls(
            f"A run covers at most {MAX_CALLS} calls; {len(ids)} were chosen. Remove some.",
            {"calls": len(ids), "limit": MAX_CALLS},
        )
    found = {
        c.pk: c
        for c in Call.objects.filter(pk__in=ids, tenant__organization=organization).select_related(
            "assistant", "live_transcriber", "tenant__organization"
        )
    }
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"No call {', '.join(map(str, missing))} in this organization.", {"calls": missing})
    calls = [found[i] for i in ids]
    for call in calls:
        if not_recorded := why_not_recorded(call):  # with what the assistant's recording setting says
            raise LineNotRecorded(f"{not_recorded} Leave it out of the run.", {"call": call.pk})
        if live_transcriber_of(call) is None:
            raise LiveTranscriberUnknown(
                f"The transcriber call {call.pk} ran on is unknown, so there is nothing to compare against. "
                "Add it to the catalogue or set it on the call, or leave the call out.",
                {"call": call.pk},
            )
    return calls


def run_lines_of(calls):
    """The caller lines a run of these calls replays (see split_lines)."""
    return split_lines(calls)[0]


def split_lines(calls) -> tuple[list, list[LeftOutLine]]:
    """(the caller lines a run of these calls replays, those it leaves out and why), each in call order then line
    order. A line with no audio timing, one longer than ONCORE_MAX_LINE_S and one that starts after its recording
    ends are left out, as they cannot be flagged either. A recording that cannot be read refuses the run
    (RecordingUnavailable, naming the call)."""
    order = {c.pk: i for i, c in enumerate(calls)}
    seconds = {c.pk: _recording_seconds(c) for c in calls}
    kept, left_out = [], []
    caller = Line.objects.filter(call__in=[c.pk for c in calls], speaker=Line.CALLER)
    for ln in sorted(
        caller.only("id", "call_id", "position", "start_s", "end_s"),
        key=lambda ln: (order[ln.call_id], ln.position),
    ):
        why = left_out_because(ln, seconds[ln.call_id])
        if why is None:
            kept.append(ln)
        else:
            left_out.append(why)
    return kept, left_out


def left_out_because(line, recording_s: float) -> LeftOutLine | None:
    """Why a run leaves this caller line out (its recording is `recording_s` long), or None: it is replayed."""
    if not line.has_timing:
        reason, why = NO_TIMING, "no audio timing, so its audio cannot be cut"
    elif too_long(line):
        reason = TOO_LONG
        why = f"{line.duration_s:.0f} s long: lines longer than {config().max_line_s:g} s are not replayed"
    elif line.start_s >= recording_s:
        reason = PAST_RECORDING_END
        why = f"starts at {line.start_s:.1f} s, after the end of its recording ({recording_s:.1f} s long)"
    else:
        return None
    return LeftOutLine(line.call_id, line.pk, line.position + 1, reason, why, line.start_s, line.end_s)


def _recording_seconds(call) -> float:
    try:
        return audio.probe(audio.stored(call.recording), label=f"call {call.pk}").duration_s
    except audio.AudioError as exc:
        raise RecordingUnavailable(
            f"{exc} Leave call {call.pk} out of the run, or import it again with its recording.",
            {"call": call.pk},
        ) from None


def _calls_and_lines(bank, call_ids):
    """The calls of a run, its lines and the lines it leaves out, with the refusals the estimate and the start
    share."""
    calls = _resolve_calls(bank.organization, call_ids)
    lines, left_out = split_lines(calls)
    if not lines:
        raise RunHasNoLines(
            "None of these calls has a caller line the run can replay"
            + (f" ({left_out_summary(left_out)})" if left_out else "")
            + ", so there is nothing to run.",
            {"left_out": [asdict(line) for line in left_out]},
        )
    return calls, lines, left_out


def differ_rate(bank: Bank, candidate) -> float | None:
    """How often the candidate's text differed from the live transcript on the bank's control lines (whose
    expected text is the live transcript): the best guess of how many lines the judge will label."""
    row = Score.objects.filter(
        flag__bank=bank, control__isnull=False, transcriber=candidate, source=Score.CANDIDATE, failed=False
    ).aggregate(n=Count("id"), differ=Count("id", filter=Q(match=False)))
    return row["differ"] / row["n"] if row["n"] else None


RULE_SAMPLE = 500  # control lines read to guess the rule's share


def rule_share(bank: Bank, candidate) -> float | None:
    """Of the bank's control lines where the candidate's text differed from the live transcript, the share the
    rule labeller reads as the same (rule_labels): the best guess of how many differing lines skip the judge."""
    rows = (
        Score.objects.filter(
            flag__bank=bank,
            control__isnull=False,
            transcriber=candidate,
            source=Score.CANDIDATE,
            failed=False,
            match=False,
        )
        .order_by("-id")
        .values_list("hypothesis", "control__expected_text")[:RULE_SAMPLE]
    )
    rows = list(rows)
    if not rows:
        return None
    return sum(rule_labels.rule_label(live, text) is not None for text, live in rows) / len(rows)


def _judge_lines(bank, candidate, context, unflagged) -> tuple[int, int, float | None, float | None]:
    """(expected judged lines, expected rule-labelled lines, differ rate, rule share). Lines the candidate
    already transcribed are known exactly; the others are guessed from the bank's control lines."""
    done = dict(
        Transcription.objects.filter(
            line__in=[ln.pk for ln in unflagged], transcriber=candidate, status=Transcription.DONE
        ).values_list("line_id", "text")
    )
    judged = by_rule = unknown = 0
    for ln in unflagged:
        if ln.pk not in done:
            unknown += 1
        elif scoring.normalize(done[ln.pk]) != scoring.normalize(context.text[ln.pk]):
            if rule_labels.rule_label(context.text[ln.pk], done[ln.pk]) is None:
                judged += 1
            else:
                by_rule += 1
    rate, share = differ_rate(bank, candidate), rule_share(bank, candidate)
    differing = unknown * (1.0 if rate is None else rate)
    free = differing * (share or 0.0)
    return judged + math.ceil(differing - free), by_rule + math.floor(free), rate, share


def _estimate(bank, candidate, calls, lines, left_out) -> RunEstimate:
    todo, seconds = untranscribed(lines, candidate)
    price = Decimal(str(candidate.price_per_minute))
    # Calibration: the sample is drawn at start, so estimate with the average line of these calls.
    live_price = {c.pk: Decimal(str(live_transcriber_of(c).price_per_minute)) for c in calls}
    n_cal = min(config().run_calibration_lines, len(lines))
    per_line_s = sum(clip_seconds(ln) for ln in lines) / len(lines) if lines else 0.0
    per_line_cost = (
        sum(cost_for(clip_seconds(ln), live_price[ln.call_id]) for ln in lines) / len(lines)
        if lines
        else Decimal(0)
    )
    cal_cost = (per_line_cost * n_cal).quantize(Decimal("0.000001"))
    flagged_ids = set(Flag.objects.filter(line__in=[ln.pk for ln in lines]).values_list("line_id", flat=True))
    unflagged = [ln for ln in lines if ln.pk not in flagged_ids]
    context = Context(calls)
    expected, by_rule, rate, share = _judge_lines(bank, candidate, context, unflagged)
    configured = llm.judge_configured()
    tokens = most = judge.TokenEstimate(0, 0, 0)
    if configured:
        # The requests the judge would get, built as the run builds them (real context, live text for both sides).
        requests = label_requests(
            context, unflagged, lambda ln: (context.text[ln.pk], context.text[ln.pk], True)
        )
        tokens, most = judge.estimate_run_tokens([r.parts for r in requests], expected)
    tin, tout, max_in, max_out = (
        tokens.input_tokens,
        tokens.output_tokens,
        most.input_tokens,
        most.output_tokens,
    )
    return RunEstimate(
        candidate_id=candidate.pk,
        calls=len(calls),
        lines=len(todo),
        already_transcribed=len(lines) - len(todo),
        audio_seconds=seconds,
        price_per_minute=price,
        audio_cost=cost_for(seconds, price),
        calibration_lines=n_cal,
        calibration_audio_seconds=per_line_s * n_cal,
        calibration_cost=cal_cost,
        judge_configured=configured,
        flagged_lines=len(flagged_ids),
        calls_already_on_candidate=sum(live_transcriber_of(c) == candidate for c in calls),
        differ_rate=rate,
        rule_share=share,
        expected_rule_lines=by_rule,
        expected_judged_lines=expected if configured else 0,
        judge_requests=tokens.requests,
        judge_input_tokens=tin,
        judge_output_tokens=tout,
        judge_cost=llm.estimate_cost(tin, tout),
        max_judge_input_tokens=max_in,
        max_judge_output_tokens=max_out,
        max_judge_cost=llm.estimate_cost(max_in, max_out),
        left_out=tuple(left_out),
    )


def _check_bank_and_candidate(bank, candidate):
    if candidate is None:
        candidate = queries.default_candidate(bank)
        if candidate is None:
            raise NoCandidate(f"{bank} has no leader yet (no scored lines): choose the candidate to run.")
    if not candidate.enabled:
        raise TranscriberDisabled(f"{candidate} is disabled in the catalogue.")
    return candidate


def estimate_run(bank: Bank, call_ids, candidate=None) -> RunEstimate:
    """What a run would cost before it starts: candidate audio minutes x price (`lines` to transcribe; those the
    candidate already transcribed are free, beside them), the calibration replays, the judge's expected and
    maximum tokens, and the caller lines the run leaves out with why."""
    candidate = _check_bank_and_candidate(bank, candidate)
    return _estimate(bank, candidate, *_calls_and_lines(bank, call_ids))


# ---------------------------------------------------------------- start, cancel, retry the judge


def _in_progress(organization_id: int) -> RunInProgress:
    run = queries.active_run(organization_id)
    if run is None:
        return RunInProgress("Another run of this organization started at the same moment; try again.")
    return RunInProgress(
        f"Run {run.pk} ({run.candidate} on bank {run.bank_name}) is {run.status}: an organization runs one "
        "full-call run at a time. Wait for it to finish, or cancel it.",
        {"run": run.pk, "status": run.status},
    )


def _confirm_message(estimate: RunEstimate, candidate) -> str:
    """What a start without confirmation answers: the estimate in words, then what to do."""
    free = estimate.already_transcribed
    parts = [
        f"This run transcribes {estimate.lines} line{'s' if estimate.lines != 1 else ''} with {candidate} "
        f"({estimate.audio_minutes:.1f} audio minutes, {dollars(estimate.audio_cost)})"
        + (f" and replays {free} it already transcribed, free" if free else ""),
        *([left_out_summary(estimate.left_out)] if estimate.left_out else []),
        f"{estimate.calibration_lines} replayed for calibration ({dollars(estimate.calibration_cost)})",
        f"about {estimate.expected_rule_lines} differing lines labelled by rule for free",
        f"and the judge expects about {estimate.judge_input_tokens + estimate.judge_output_tokens:,} tokens "
        f"({dollars(estimate.judge_cost)})",
    ]
    return "; ".join(parts) + ". Confirm the estimate to start."


def do_start_run(
    bank: Bank,
    call_ids,
    *,
    candidate=None,
    confirmed: bool = False,
    user=None,
    rng: random.Random | None = None,
) -> Run:
    """Start a run of `candidate` (the bank's leader unless given) over the calls. The estimate must be
    confirmed: without `confirmed` this raises EstimateNotConfirmed carrying it."""
    candidate = _check_bank_and_candidate(bank, candidate)
    calls, lines, left_out = _calls_and_lines(bank, call_ids)
    estimate = _estimate(bank, candidate, calls, lines, left_out)
    if not confirmed:
        raise EstimateNotConfirmed(_confirm_message(estimate, candidate), estimate)
    handles.check_capacity(bank.organization_id)
    rng = rng or random.SystemRandom()
    seed = rng.randrange(2**62)
    size = config().run_calibration_lines
    sampled = set(random.Random(seed).sample(range(len(lines)), min(size, len(lines))))
    live = {c.pk: live_transcriber_of(c) for c in calls}
    # A flagged line is one from the start (the page and the CSV say so while it waits); the comparison reads its
    # flag again, in case it was edited or deleted meanwhile.
    flags = {f.line_id: f for f in Flag.objects.filter(line_id__in=[ln.pk for ln in lines])}
    try:
        with transaction.atomic():
            run = Run.objects.create(
                organization_id=bank.organization_id,
                bank=bank,
                bank_name=bank.name,
                candidate=candidate,
                seed=seed,
                calibration_size=size,
                review_size=review_size(config().run_review_lines),
                estimate=estimate.as_dict(),
                created_by=user if user is not None and user.is_authenticated else None,
            )
            RunCall.objects.bulk_create([RunCall(run=run, call=c, position=i) for i, c in enumerate(calls)])
            RunLine.objects.bulk_create(
                [
                    RunLine(
                        run=run,
                        line_id=ln.pk,
                        position=i,
                        calibration=i in sampled,
                        replay_transcriber=live[ln.call_id] if i in sampled else None,
                        flag=flags.get(ln.pk),
                        expected_text=flags[ln.pk].expected_text if ln.pk in flags else "",
                    )
                    for i, ln in enumerate(lines)
                ]
            )
            handles.ADVANCE_RUN.later(run.pk)
    except IntegrityError:
        # The partial unique index one_active_run_per_org: another run is queued or running.
        raise _in_progress(bank.organization_id) from None
    return run


def _drop_queued_transcriptions(run: Run) -> int:
    """After a cancel: queued transcriptions the run asked for are not spent, unless a bank's flag or control
    line needs the same line and transcriber."""
    run_lines = list(run.lines.only("line_id", "calibration", "replay_transcriber_id"))
    pairs = run_pairs(run, run_lines)
    q = Q(pk__in=[])
    for tid in {t for _, t in pairs}:
        q |= Q(transcriber_id=tid, line_id__in=[line for line, t in pairs if t == tid])
    flag_needs = Candidate.objects.filter(
        transcriber=OuterRef("transcriber"), bank__flags__line=OuterRef("line")
    )
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


def do_cancel_run(run: Run) -> Run:
    """Cancel a queued or running run. Transcriptions already made are kept; queued ones are dropped."""
    now = timezone.now()
    cancelled = Run.objects.filter(pk=run.pk, status__in=Run.ACTIVE).update(
        status=Run.CANCELLED, finished_at=now, judge_claimed_at=None, updated_at=now
    )
    run.refresh_from_db()
    if not cancelled:
        raise RunNotActive(
            f"Run {run.pk} is {run.status}; only a queued or running run can be cancelled.",
            {"run": run.pk, "status": run.status},
        )
    _drop_queued_transcriptions(run)
    run_ended(run.pk)
    return run


def do_retry_judge(run: Run) -> Run:
    """Give a finished run whose judge failed another go; labels already made are kept."""
    now = timezone.now()
    try:
        with transaction.atomic():
            moved = Run.objects.filter(pk=run.pk, status=Run.DONE, judge_status=Run.JUDGE_FAILED).update(
                status=Run.JUDGING,
                judge_status=Run.JUDGE_PENDING,
                judge_error="",
                finished_at=None,
                judge_claimed_at=None,
                updated_at=now,
            )
            if moved:  # lines the judge gave up on are asked again
                run.lines.filter(label="").exclude(label_error="").update(label_error="")
    except IntegrityError:
        raise _in_progress(run.organization_id) from None
    run.refresh_from_db()
    if not moved:
        raise JudgeNotFailed(f"Run {run.pk}'s judge has not failed, so there is nothing to retry.")
    handles.ADVANCE_RUN.later(run.pk)
    return run


# ---------------------------------------------------------------- review of the judge's labels


def do_review_line(run_line: RunLine, human_label: str, user=None) -> RunLine:
    """A person labels a line of the review sample without having seen its label (the judge's, or the rule's);
    the label they give is stored, and whether it agrees. The first answer stands, since after it the label is
    shown: a later one is recorded beside it as a correction, and agreement still counts the first."""
    if not run_line.in_review:
        raise NotInReviewSample("Only lines in the run's review sample can be reviewed.")
    if human_label not in judge.LABELS:
        raise ValueError(f"{human_label!r} is not one of {', '.join(judge.LABELS)}")
    first = RunLine.objects.filter(pk=run_line.pk, human_label="").update(
        human_label=human_label,
        review_agrees=human_label == run_line.label,
        reviewed_at=timezone.now(),
        reviewed_by=user if user is not None and user.is_authenticated else None,
    )
    if not first:  # answered before, and shown the label since: a correction, beside the first answer
        RunLine.objects.filter(pk=run_line.pk).update(correction=human_label, corrected_at=timezone.now())
    run_line.refresh_from_db()
    return run_line


def run_pairs(run: Run, run_lines) -> set[tuple[int, int]]:
    """(line, transcriber) of every transcription the run needs."""
    pairs = {(rl.line_id, run.candidate_id) for rl in run_lines}
    pairs |= {(rl.line_id, rl.replay_transcriber_id) for rl in run_lines if rl.calibration}
    return pairs


# The review sample is at most 120 lines, as the product promises: ONCORE_RUN_REVIEW_LINES cannot be set higher
# (settings.py refuses it at start-up), and a run's review_size is held to it whatever it says.
MAX_REVIEW_LINES = 120


def review_size(wanted: int) -> int:
    """The review sample's size for a run that asks for `wanted` lines: never more than MAX_REVIEW_LINES."""
    return max(0, min(wanted, MAX_REVIEW_LINES))


# ---------------------------------------------------------------- its webhook events


def run_ended(run_id: int) -> None:
    """A run just ended (or its judge just failed): run.finished, and run.judge_failed when its judge failed, in
    the transaction that ends it (the cancel here, the queue's steps in work/runs.py)."""
    run = Run.objects.filter(pk=run_id).select_related("candidate").first()
    if run is None:
        return
    wanted = [
        event
        for event, due in (
            (events.RUN_FINISHED, run.status in (Run.DONE, Run.FAILED, Run.CANCELLED)),
            (events.JUDGE_FAILED, run.judge_status == Run.JUDGE_FAILED),
        )
        if due and webhooks.wants(run.organization_id, event)
    ]
    if not wanted:
        return
    data = events.run_event_data(run)
    for event in wanted:
        webhooks.emit(run.organization_id, event, data, encoder=events.ENCODER)
