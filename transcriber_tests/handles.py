"""The work handles: how a write (actions/) or a read (queries/snapshots.py) hands work to the queue without
importing work/, which runs above them and imports them. Each Task is declared here and bound by the app's ready()
(apps.py) to its entry point in work/; each is enqueued by function reference (oncore.queue), after the current
transaction commits where it must see it (`later`).

    TRANSCRIBE              work/tasks.transcribe(pk)                 dispatched by `pump`
    PICK_LINE               work/tasks.pick_line(line_id)             actions/scores.ask_picks
    ANNOUNCE_SCORES         work/tasks.announce_scores(line_ids)      actions/scores.scores_written
    TRANSCRIPTION_FINISHED  work/tasks.transcription_finished(pk)     work/replay.py, after a final outcome
    ADVANCE_RUN             work/tasks.advance(run_id)                actions/runs.py, work/runs.py
    REBUILD_SNAPSHOTS       work/tasks.rebuild_snapshots(bank_id)     queries/snapshots.dispatch_due
    SETTLE_FLAG             work/tasks.settle_flag(flag_id)           actions/flags.do_flag_line (later)
    BUILD_BOXES             work/tasks.build_boxes(call_id)           actions/flags: a flag edited or moved

The queue of line transcriptions is its rows (TRANSCRIPTIONS, Transcription rows on oncore.queue). Here it is fed:
`check_capacity` refuses new work while an organization's queue is over its limit, and `pump(org)` dispatches at
most ONCORE_ORG_CONCURRENCY of an organization's queued rows to the django-q2 workers at a time (the task
TRANSCRIBE), so one organization with thousands of flags cannot starve another: every organization has only a few
tasks in the shared broker queue. Of those, at most ONCORE_ORG_STREAMS are streaming sessions (vendors cap
concurrent streams per key, and a session holds its worker for the line's real-time duration), so batch lines keep
moving beside a streaming candidate. The workers' side (claims, outcomes, retries, the chain) is work/jobs.py."""

from oncore import queue
from oncore.config import config
from oncore.transcribers.models import Transcriber

from .errors import QueueFull
from .models import Transcription

GROUP = "oncore"  # the django-q2 group of transcriber testing's tasks

TRANSCRIBE = queue.Task("transcribes a dispatched line transcription", group=GROUP)
PICK_LINE = queue.Task("asks the judge's picks of one line", group=GROUP)
ANNOUNCE_SCORES = queue.Task("announces the flags scored on some lines", group=GROUP)
TRANSCRIPTION_FINISHED = queue.Task("lets a full-call run compare once its last line is in", group=GROUP)
ADVANCE_RUN = queue.Task("does a full-call run's next step", group=GROUP)
REBUILD_SNAPSHOTS = queue.Task("computes a bank's snapshots again", group=GROUP)
SETTLE_FLAG = queue.Task("does the rest of making a flag its request wrote", group=GROUP)
BUILD_BOXES = queue.Task("renders the flag boxes of a call a person changed", group=GROUP)

# Due at not_before. A claimed row whose worker has been silent for the lease is abandoned (django-q2 kills a task
# at its timeout, so no live worker holds a row longer).
TRANSCRIPTIONS = queue.WorkQueue(Transcription, Transcription.QUEUED, Transcription.RUNNING)


def pending_count(organization_id: int) -> int:
    return Transcription.objects.filter(
        organization_id=organization_id, status__in=Transcription.ACTIVE
    ).count()


def check_capacity(organization_id: int) -> None:
    """Refuse new work into banks while the organization's queue is over its limit."""
    pending = pending_count(organization_id)
    limit = config().org_queue_limit
    if pending >= limit:
        raise QueueFull(
            f"{pending:,} line transcriptions are waiting for this organization (the limit is {limit:,}). "
            "Wait for the queue to drain, then try again; flags into no bank are still accepted.",
            {"pending": pending, "limit": limit},
        )


def free_slots(organization_id: int) -> int:
    """Sessions the organization may still open: ORG_CONCURRENCY less its running rows (dispatched or open)."""
    running = Transcription.objects.filter(
        organization_id=organization_id, status=Transcription.RUNNING
    ).count()
    return config().org_concurrency - running


def open_streams(organization_id: int) -> int:
    """The organization's streaming sessions: running rows of streaming transcribers."""
    return Transcription.objects.filter(
        organization_id=organization_id, status=Transcription.RUNNING, transcriber__mode=Transcriber.STREAMING
    ).count()


def free_streams(organization_id: int) -> int:
    return config().org_streams - open_streams(organization_id)


def pump(organization_id: int) -> list[int]:
    """Dispatch queued rows of one organization up to its concurrency, streaming rows up to ORG_STREAMS of it,
    oldest first. Returns the ids dispatched."""
    slots = free_slots(organization_id)
    if slots <= 0:
        return []
    streams = max(0, min(free_streams(organization_id), slots))
    ready = [
        (pk, False)
        for pk in TRANSCRIPTIONS.ready(organization_id=organization_id, transcriber__mode=Transcriber.BATCH)[
            : slots * 2
        ]
    ]
    if streams:
        ready += [
            (pk, True)
            for pk in TRANSCRIPTIONS.ready(
                organization_id=organization_id, transcriber__mode=Transcriber.STREAMING
            )[: streams * 2]
        ]
    dispatched = []
    for pk, streaming in sorted(ready):
        if len(dispatched) == slots:
            break
        if streaming and not streams:
            continue
        if TRANSCRIPTIONS.dispatch(pk):  # two pumps racing dispatch each row once
            dispatched.append(pk)
            streams -= streaming
    for pk in dispatched:
        TRANSCRIBE.later(pk)
    return dispatched
