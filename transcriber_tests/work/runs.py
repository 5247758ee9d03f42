"""Full-call runs, the steps the queue runs: one candidate replayed over every caller line with audio timing of up
to ten calls (assistant lines never), compared with the live transcript, the lines labelled, the candidate's breaks
grouped into patterns and a verdict written. A run never changes a score, a flag or an assistant. What a person
asks of a run (its estimate, start, cancel, retry the judge, review a line) is actions/runs.py; what the pages and
the API read of it, queries/runs.py; its pages, views/runs.py; its entry points, tasks.py.

States, each move a conditional UPDATE ... WHERE status = ... (so a step delivered twice does nothing):

    queued --begin--> transcribing --compare--> judging --judge--> done
    queued / transcribing / judging --cancel--> cancelled;   an unexpected error in a step --> failed

- begin: queue a Transcription for the candidate on every line and for each call's live transcriber on the
  calibration sample. Transcription rows are unique per line and transcriber, so a line already transcribed is
  not paid for again, and the per-organization queue (handles.pump) runs them.
- compare: once none of those transcriptions is waiting, copy the texts onto the run's lines, compare them with
  the live transcript (normalized equality), score flagged lines against what was said and label them
  mechanically (scoring.compare_line), and check the calibration sample. A differing, unflagged line whose two
  texts read the same after the entity matcher's canonicalization ("ten forty five" and "10:45") is same_meaning
  by rule (judge/rule_labels.py) and never sent to the judge.
- judge: label every other line that differs, several lines of one call per request (judge/requests.py), in
  batches that each fit in one task; then the patterns, the verdict and the review sample. The step claims its
  run on the queue core (JUDGE_CLAIMS), so a worker that dies leaves a claim the next delivery takes over after
  the lease. A line whose answer stays invalid after being asked once more is left unlabelled with the reason
  (label_error), and judging goes on. Without ANTHROPIC_API_KEY the judge step records "not configured" and the
  run is done with its comparisons. An LLMError keeps what was labelled, records the message and finishes the
  run; actions/runs.py do_retry_judge picks up where it stopped.

`advance(run_id)` does whichever step is next and is what the queue runs (tasks.advance): after start, after
compare, after each judge batch, once a minute for every active run (tasks.advance_all), and when the run's last
transcription finishes (tasks.transcription_finished). The judge's review sample holds judge labels only: a
flagged line's label comes from what a person typed. One run per organization may be queued or running: the
partial unique index `one_active_run_per_org` holds it, and a second start gets RunInProgress naming the run in
progress.

Settings (oncore.config, from these environment variables):
    RUN_CALIBRATION_LINES   ONCORE_RUN_CALIBRATION_LINES   lines replayed through the live transcriber (20)
    RUN_CALIBRATION_WARN    ONCORE_RUN_CALIBRATION_WARN    audio path agreement below this warns (0.8)
    RUN_REVIEW_LINES        ONCORE_RUN_REVIEW_LINES        judge-labelled lines set aside for review (120, at most 120)
"""

import logging
import random
import time

from django.db import transaction
from django.db.models import Count, F
from django.utils import timezone

from oncore import llm, queue
from oncore.config import config

from .. import handles, judge
from ..actions import runs as run_actions
from ..actions.runs import review_size, run_pairs
from ..judge import rule_labels
from ..judge.requests import Context, LabelRequest, chunks, label_requests, shown_first
from ..lib import scoring
from ..models import Flag, Run, RunLine, RunPattern, Transcription

log = logging.getLogger(__name__)

PATTERN_CONTEXT_EACH_SIDE = 1
# The judge step's claim on a judging run, on the queue core (oncore.queue): a run in JUDGING is always handed out,
# and a step claims it while nobody holds it or the holder's claim is older than a queue task's lease (its worker
# died). Every write the step makes is conditional on its claim still holding (`held`).
JUDGE_CLAIMS = queue.WorkQueue(
    Run, Run.JUDGING, Run.JUDGING, claimed="judge_claimed_at", attempts="judge_claims", stamp=None
)
VERDICT_EXAMPLES_EACH = 3  # fixes and breaks each shown to the verdict


# ---------------------------------------------------------------- settings (calibration, review, the judge's budget)


def judge_budget_s() -> float:
    """Seconds one judge task labels before it hands the rest to the next task: half the queue's timeout."""
    return config().queue_timeout_s / 2


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
        _fail(run_id, f"Unexpected error ({exc.__class__.__name__}); it was logged. Start the run again.")
        return "failed"


def _fail(run_id: int, message: str) -> None:
    now = timezone.now()
    if Run.objects.filter(pk=run_id, status__in=Run.ACTIVE).update(
        status=Run.FAILED, error=message, finished_at=now, judge_claimed_at=None, updated_at=now
    ):
        run_actions.run_ended(run_id)


def _queue(run: Run, pairs, existing) -> int:
    new = [
        Transcription(organization_id=run.organization_id, line_id=line_id, transcriber_id=tid)
        for line_id, tid in sorted(pairs)
        if (line_id, tid) not in existing
    ]
    Transcription.objects.bulk_create(new, ignore_conflicts=True)
    if new:
        transaction.on_commit(lambda: handles.pump(run.organization_id))
    return len(new)


def begin(run_id: int) -> str:
    """queued -> transcribing: ask for every transcription the run needs, in one transaction."""
    with transaction.atomic():
        if not Run.objects.filter(pk=run_id, status=Run.QUEUED).update(
            status=Run.TRANSCRIBING, updated_at=timezone.now()
        ):
            return "skipped"
        run = Run.objects.get(pk=run_id)
        pairs = run_pairs(run, list(run.lines.only("line_id", "calibration", "replay_transcriber_id")))
        existing = set(
            Transcription.objects.filter(line_id__in={p[0] for p in pairs}).values_list(
                "line_id", "transcriber_id"
            )
        )
        _queue(run, pairs, existing)
    return "transcribing"


def compare(run_id: int) -> str:
    """transcribing -> judging, once none of the run's transcriptions is waiting."""
    run = Run.objects.get(pk=run_id)
    if run.status != Run.TRANSCRIBING:
        return "skipped"
    run_lines = list(run.lines.select_related("line__call"))
    pairs = run_pairs(run, run_lines)
    found = {
        (t.line_id, t.transcriber_id): t
        for t in Transcription.objects.filter(line_id__in={p[0] for p in pairs})
        if (t.line_id, t.transcriber_id) in pairs
    }
    if len(found) < len(pairs):  # a row went missing (a cancelled run's, deleted): ask again
        with transaction.atomic():
            _queue(run, pairs, set(found))
        return "waiting"
    if any(t.status not in Transcription.FINISHED for t in found.values()):
        return "waiting"
    flags = {f.line_id: f for f in Flag.objects.filter(line_id__in=[rl.line_id for rl in run_lines])}
    for rl in run_lines:
        _fill_line(
            rl,
            found[(rl.line_id, run.candidate_id)],
            flags.get(rl.line_id),
            found.get((rl.line_id, rl.replay_transcriber_id)) if rl.calibration else None,
        )
        if rl.differs and not rl.label:
            rl.live_shown_first = shown_first(run.seed, rl.line_id)
    by_rule = [rl for rl in run_lines if rl.label_source == RunLine.BY_RULE]
    to_judge = [rl for rl in run_lines if rl.differs and not rl.label]
    saved = len(chunks(by_rule + to_judge)) - len(chunks(to_judge))
    fields = [
        "compared",
        "live_text",
        "candidate_text",
        "candidate_failed",
        "candidate_error",
        "differs",
        "flag",
        "expected_text",
        "candidate_match",
        "live_match",
        "candidate_wer",
        "live_wer",
        "label",
        "label_source",
        "reasoning",
        "label_prompt_version",
        "live_shown_first",
        "replay_text",
        "replay_failed",
        "replay_matches",
    ]
    with transaction.atomic():
        # The conditional update first: it takes the run's row, so a cancel waits for this to commit.
        if not Run.objects.filter(pk=run_id, status=Run.TRANSCRIBING).update(
            status=Run.JUDGING,
            judge_status=Run.JUDGE_PENDING,
            judge_calls_saved=saved,
            updated_at=timezone.now(),
        ):
            return "skipped"
        RunLine.objects.bulk_update(run_lines, fields, batch_size=500)
        handles.ADVANCE_RUN.later(run_id)
    return "judging"


def compare_when_ready(transcription_id: int) -> str:
    """After a line transcription finished: if it was the last one the organization's transcribing run waited
    for, compare now."""
    t = (
        Transcription.objects.filter(pk=transcription_id)
        .values("line_id", "organization_id", "status")
        .first()
    )
    if t is None or t["status"] not in Transcription.FINISHED:
        return "skipped"
    run = Run.objects.filter(organization_id=t["organization_id"], status=Run.TRANSCRIBING).first()
    if run is None or not run.lines.filter(line_id=t["line_id"]).exists():
        return "no run"
    needed = {run.candidate_id} | set(
        run.lines.filter(calibration=True).values_list("replay_transcriber_id", flat=True)
    )
    waiting = Transcription.objects.filter(
        line__run_lines__run=run, transcriber_id__in=needed, status__in=Transcription.ACTIVE
    ).exists()
    return "waiting" if waiting else compare(run.pk)


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
        c = scoring.compare_line(rl.live_text, rl.candidate_text, rl.expected_text or None)
        rl.differs, rl.label = c.differs, c.label
        rl.label_source = RunLine.BY_FLAG if c.label else ""
        rule = (
            None
            if (c.label or not c.differs or flag)
            else rule_labels.rule_label(rl.live_text, rl.candidate_text)
        )
        if rule is not None:
            rl.label, rl.label_source, rl.reasoning = rule.label, RunLine.BY_RULE, rule.reason
            rl.label_prompt_version = rule_labels.RULE_VERSION
        rl.candidate_match, rl.live_match = c.candidate_match, c.live_match
        rl.candidate_wer, rl.live_wer = c.candidate_wer, c.live_wer
    if replay is not None:
        rl.replay_failed = replay.status != Transcription.DONE
        rl.replay_text = "" if rl.replay_failed else replay.text
        rl.replay_matches = (
            None if rl.replay_failed else (scoring.normalize(replay.text) == scoring.normalize(rl.live_text))
        )


def _add_tokens(run_id: int, call: llm.ToolCall | None) -> None:
    if call is None:
        return
    Run.objects.filter(pk=run_id).update(
        judge_input_tokens=F("judge_input_tokens")
        + call.input_tokens
        + call.cache_read_tokens
        + call.cache_write_tokens,
        judge_output_tokens=F("judge_output_tokens") + call.output_tokens,
        judge_cost=F("judge_cost") + call.cost,
        judge_model=call.model,
        judge_prompt_version=judge.JUDGE_PROMPT_VERSION,
    )


def to_label(run: Run):
    """Lines the judge labels: compared, not flagged, the candidate produced text, it differs, no rule label,
    and the judge has not given up on it."""
    return run.lines.filter(
        compared=True, differs=True, candidate_failed=False, flag__isnull=True, label="", label_error=""
    )


def judge_step(run_id: int, budget_s: float | None = None) -> str:
    """Label for at most `budget_s` seconds, then hand on to the next task; then patterns, verdict, review
    sample, done. A worker that dies leaves its claim, which the next delivery takes over after the lease."""
    if not JUDGE_CLAIMS.claim_dispatched(run_id):
        return "skipped"
    run = Run.objects.get(pk=run_id)
    held = JUDGE_CLAIMS.held(run)
    if not llm.judge_configured():
        _review_sample(run)  # rule labels are reviewed like the judge's
        _finish_judging(run_id, held, Run.JUDGE_NOT_CONFIGURED, llm.NOT_CONFIGURED)
        return "done"
    deadline = time.monotonic() + (judge_budget_s() if budget_s is None else budget_s)
    try:
        context = Context(run.calls.select_related("assistant"))
        pending = list(to_label(run).select_related("line").order_by("position"))
        for request in label_requests(context, pending, lambda rl: _texts(run.seed, rl)):
            if not held.exists():
                return "stopped"
            if time.monotonic() > deadline:
                held.update(judge_claimed_at=None)
                handles.ADVANCE_RUN.later(run_id)
                return "continues"
            _label(run_id, request)
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
        _finish_judging(
            run_id,
            held,
            Run.JUDGE_FAILED,
            f"The judge failed: {exc.message.rstrip('.')}. Labels so far are kept; {left} differing line"
            f"{'s' if left != 1 else ''} left unlabelled. Retry the judge to carry on.",
        )
        return "judge failed"
    _finish_judging(run_id, held, Run.JUDGE_DONE, "")
    return "done"


def _texts(seed: int, rl: RunLine) -> tuple[str, str, bool]:
    live_first = shown_first(seed, rl.line_id) if rl.live_shown_first is None else rl.live_shown_first
    return rl.live_text, rl.candidate_text, live_first


def _label(run_id: int, request: LabelRequest) -> None:
    """One label request: write each line's label, or why the judge left it unlabelled, and the tokens."""
    instructions, context_lines, items = request.parts
    batch = judge.label_lines(instructions=instructions, context_lines=context_lines, items=items)
    ids = request.line_ids
    with transaction.atomic():
        for key, label in batch.labels.items():
            RunLine.objects.filter(run_id=run_id, line_id=ids[key], label="").update(
                label=label.label,
                label_source=RunLine.BY_JUDGE,
                reasoning=label.reasoning,
                label_prompt_version=judge.JUDGE_PROMPT_VERSION,
                label_error="",
            )
        for key, error in batch.errors.items():
            RunLine.objects.filter(run_id=run_id, line_id=ids[key], label="").update(label_error=error)
        for call in batch.calls:
            _add_tokens(run_id, call)
        Run.objects.filter(pk=run_id).update(
            judge_label_requests=F("judge_label_requests") + len(batch.calls)
        )


def _finish_judging(run_id: int, held, judge_status: str, message: str) -> None:
    """Done, while this step still holds the run's claim (`held`: JUDGE_CLAIMS.held); then its webhook events."""
    if held.update(
        status=Run.DONE,
        judge_status=judge_status,
        judge_error=message,
        finished_at=timezone.now(),
        judge_claimed_at=None,
        updated_at=timezone.now(),
    ):
        run_actions.run_ended(run_id)


def _patterns(run: Run, context: Context) -> None:
    breaks = list(run.lines.filter(label=RunLine.LIVE_RIGHT).select_related("line").order_by("position"))
    items = [
        {
            "line_id": rl.pk,
            "live_text": rl.live_text,
            "candidate_text": rl.candidate_text,
            "context": context.around(rl.line_id, rl.line.call_id, PATTERN_CONTEXT_EACH_SIDE),
        }
        for rl in breaks
    ]
    found = judge.group_patterns(lines=items)
    with transaction.atomic():
        run.patterns.all().delete()
        for position, pattern in enumerate(found):
            row = RunPattern.objects.create(
                run=run,
                position=position,
                name=pattern.name[:200],
                description=pattern.description,
                count=pattern.count,
            )
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
    verdict = judge.write_verdict(
        fixes=counts.get(RunLine.CANDIDATE_RIGHT, 0),
        breaks=counts.get(RunLine.LIVE_RIGHT, 0),
        patterns=patterns,
        examples=examples,
    )
    Run.objects.filter(pk=run.pk).update(verdict=verdict.text)
    _add_tokens(run.pk, verdict.call)


REVIEWED_SOURCES = (RunLine.BY_JUDGE, RunLine.BY_RULE)


def stratified_sample(pool: dict, room: int, rng: random.Random) -> list:
    """Up to `room` items drawn from `pool` (stratum -> items), as evenly across strata as their sizes allow:
    each round gives every stratum with items left one more place, drawn at random within it."""
    left = {stratum: rng.sample(sorted(items), len(items)) for stratum, items in sorted(pool.items())}
    chosen: list = []
    while len(chosen) < room and any(left.values()):
        for stratum in sorted(left):
            if left[stratum] and len(chosen) < room:
                chosen.append(left[stratum].pop())
    return chosen


def _review_sample(run: Run) -> int:
    """Set aside up to `run.review_size` lines (never more than MAX_REVIEW_LINES) labelled by the judge or by
    rule, stratified by label (every label as evenly represented as the run allows), at random within each
    (seeded by the run). Safe to repeat: lines already in the sample stay, and the sample only grows up to its
    size."""
    have = set(run.lines.filter(in_review=True).values_list("pk", flat=True))
    room = review_size(run.review_size) - len(have)
    if room <= 0:
        return 0
    pool: dict[str, set] = {}
    for pk, label in run.lines.filter(label_source__in=REVIEWED_SOURCES).values_list("pk", "label"):
        if pk not in have:
            pool.setdefault(label, set()).add(pk)
    chosen = stratified_sample(pool, room, random.Random(run.seed + len(have)))
    return RunLine.objects.filter(pk__in=chosen).update(in_review=True)


def label_counts(run: Run) -> dict[str, int]:
    return dict(
        run.lines.exclude(label="").values_list("label").annotate(n=Count("id")).values_list("label", "n")
    )
