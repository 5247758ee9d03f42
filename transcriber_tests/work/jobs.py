"""The queue mechanics of line transcriptions, on oncore.queue: per-organization concurrency and back-pressure,
dispatch, claims and their lease, outcomes, retry backoff, chaining and recovery. The task entry points are in
tasks.py; the workflow each claimed row goes through is replay.py.

Transcription rows are the queue (TRANSCRIPTIONS). `pump(org)` dispatches at most ORG_CONCURRENCY of an
organization's queued rows to the django-q2 workers at a time (the task TRANSCRIBE, tasks.transcribe), so one
organization with thousands of flags cannot starve another: every organization has only a few tasks in the shared
broker queue. A task claims its row (`claim`, a conditional update: a second delivery finds it claimed and stops),
and `finish` writes the outcome only while the claim holds. A task that finishes its row goes on with its
organization's next ready row for up to ONCORE_TASK_CHAIN_S (no wait for the broker in between: `claimed_chain`),
then pumps. A periodic `pump_all` picks up retries whose backoff has passed and rows whose worker died.

Concurrency counts open sessions: a running row is a request in flight (batch) or a connection held open for the
line's real-time duration (streaming, minutes of worker time for long lines). Of an organization's
ORG_CONCURRENCY, at most ORG_STREAMS are streaming sessions at once (vendors cap concurrent streams per key, and a
session holds its worker for the whole line), so batch lines keep moving beside a streaming candidate."""

import logging
import time

from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, transaction
from django.db.models import Count

from oncore import queue
from oncore.config import config
from oncore.transcribers.models import Transcriber

from ..errors import QueueFull
from ..models import Transcription

log = logging.getLogger(__name__)

ACTIVE = (Transcription.QUEUED, Transcription.RUNNING)
FINISHED = (Transcription.DONE, Transcription.FAILED)
GROUP = "oncore"  # the django-q2 group of transcriber testing's tasks

# Due at not_before. A claimed row whose worker has been silent for the lease is abandoned (django-q2 kills a task
# at its timeout, so no live worker holds a row longer).
TRANSCRIPTIONS = queue.WorkQueue(Transcription, Transcription.QUEUED, Transcription.RUNNING)
lease_seconds = TRANSCRIPTIONS.lease_s
# tasks.transcribe(pk), bound by the app's ready(): it imports this module.
TRANSCRIBE = queue.Task("transcribes a dispatched line transcription", group=GROUP)


def pending_count(organization_id: int) -> int:
    return Transcription.objects.filter(organization_id=organization_id, status__in=ACTIVE).count()


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


def queue_status(organization_id: int) -> dict:
    counts = dict(
        Transcription.objects.filter(organization_id=organization_id, status__in=ACTIVE)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    return {
        "queued": counts.get(Transcription.QUEUED, 0),
        "running": counts.get(Transcription.RUNNING, 0),
        "limit": config().org_queue_limit,
        "concurrency": config().org_concurrency,
    }


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


def recover_abandoned() -> int:
    """Rows left running by a worker that died are queued again: a claim older than the lease (its task was killed
    at the timeout, and a row a task went on to by itself is never delivered again), or a dispatch whose broker
    message has not been taken for twice the broker's retry."""
    return TRANSCRIPTIONS.reclaim_stale(lost_dispatch_s=2 * int(settings.Q_CLUSTER["retry"]))


def pump_all() -> int:
    """Recover abandoned rows, then pump every organization with queued rows (once the transaction commits, the
    dispatched rows' tasks are enqueued). Returns how many rows were dispatched."""
    with transaction.atomic():
        recover_abandoned()
        org_ids = (
            Transcription.objects.filter(status=Transcription.QUEUED)
            .values_list("organization_id", flat=True)
            .distinct()
        )
        return sum(len(pump(org_id)) for org_id in list(org_ids))


def dispatched_ids() -> list[int]:
    """Rows dispatched to a task that no task has claimed yet, oldest first."""
    return list(
        Transcription.objects.filter(status=Transcription.RUNNING, claimed_at__isnull=True)
        .order_by("id")
        .values_list("id", flat=True)
    )


# ---------------------------------------------------------------- claims, outcomes, backoff and the chain


def _load(pk: int) -> Transcription:
    return Transcription.objects.select_related("line__call", "transcriber").get(pk=pk)


def claim(pk: int) -> Transcription | None:
    """Claim a dispatched row. A second delivery of the same task finds it claimed (or finished) and stops;
    a delivery after a worker died finds the claim older than the lease and takes it over."""
    return _load(pk) if TRANSCRIPTIONS.claim_dispatched(pk) else None


def claim_next(organization_id: int) -> Transcription | None:
    """Dispatch and claim the organization's next ready row in one step, for a task that has just finished one:
    the slot it holds passes to that row without a round trip through the broker (unless a pump took it)."""
    if free_slots(organization_id) <= 0:
        return None
    scope = {} if free_streams(organization_id) > 0 else {"transcriber__mode": Transcriber.BATCH}
    pk = TRANSCRIPTIONS.claim_next(tries=4, organization_id=organization_id, **scope)
    return None if pk is None else _load(pk)


def claimed_chain(pk: int):
    """The rows one task transcribes, each claimed: the dispatched row (none if another delivery has it), then,
    while the task is younger than ONCORE_TASK_CHAIN_S, the organization's next ready rows, one at a time so its
    concurrency holds. When the chain ends, the organization's queue is pumped."""
    t = claim(pk)
    if t is None:
        return
    organization_id = t.organization_id
    chain_until = time.monotonic() + config().task_chain_s
    yield t
    while time.monotonic() < chain_until and (t := claim_next(organization_id)) is not None:
        yield t
    with transaction.atomic():
        pump(organization_id)


def finish(t: Transcription, on_final=None, **fields) -> bool:
    """Write the outcome only while this worker still holds the claim; once it is final, `on_final(t)` (the
    scores of every item on the line) runs in the same transaction. If the database connection was lost
    meanwhile (a restart), it is opened again and the write tried once more, so a vendor's answer already paid
    for is kept; the conditional update makes the second try harmless if the first one did land."""
    try:
        return _write_outcome(t, fields, on_final)
    except (OperationalError, InterfaceError):
        log.warning("transcription %s: the database connection was lost; writing its outcome again", t.pk)
        close_old_connections()
        return _write_outcome(t, fields, on_final)


def _write_outcome(t: Transcription, fields: dict, on_final) -> bool:
    with transaction.atomic():
        written = TRANSCRIPTIONS.finish(t, **fields)
        if written and on_final is not None and fields.get("status") in FINISHED:
            t.refresh_from_db()
            on_final(t)
    return written


def may_retry(t: Transcription) -> bool:
    return t.attempts < config().max_transcription_attempts


def retry_later(t: Transcription, error: str, retry_after: float | None = None) -> bool:
    """Queue a row that failed with a retryable error again after its backoff (oncore.queue.backoff_s of
    RETRY_BACKOFF_S: doubled with each attempt, and never before the vendor's Retry-After)."""
    return finish(t, error=error, **TRANSCRIPTIONS.retry_fields(t, config().retry_backoff_s, retry_after))
