"""The workers' side of the queue of line transcriptions (its rows, TRANSCRIPTIONS, are fed by handles.py: capacity
and dispatch). A task claims its row (`claim`, a conditional update: a second delivery finds it claimed and stops),
and `finish` writes the outcome only while the claim holds; a retryable failure is queued again after its backoff
(`retry_later`). A task that finishes its row goes on with its organization's next ready row for up to
ONCORE_TASK_CHAIN_S (no wait for the broker in between: `claimed_chain`), then pumps. The minutely `pump_all` picks
up retries whose backoff has passed and rows whose worker died. The task entry points are in tasks.py; the workflow
each claimed row goes through is replay.py."""

import logging
import time

from django.db import InterfaceError, OperationalError, close_old_connections, transaction

from oncore.config import config
from oncore.transcribers.models import Transcriber

from ..handles import TRANSCRIPTIONS, free_slots, free_streams, pump
from ..models import Transcription

log = logging.getLogger(__name__)

lease_seconds = TRANSCRIPTIONS.lease_s


def recover_abandoned() -> int:
    """Rows left running by a worker that died are queued again: a claim older than the lease (its task was killed
    at the timeout, and a row a task went on to by itself is never delivered again), or a dispatch whose broker
    message has not been taken for twice the broker's retry."""
    return TRANSCRIPTIONS.reclaim_stale(lost_dispatch_s=2 * config().queue_retry_s)


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
        if written and on_final is not None and fields.get("status") in Transcription.FINISHED:
            t.refresh_from_db()
            on_final(t)
    return written


def may_retry(t: Transcription) -> bool:
    return t.attempts < config().max_transcription_attempts


def retry_later(t: Transcription, error: str, retry_after: float | None = None) -> bool:
    """Queue a row that failed with a retryable error again after its backoff (oncore.queue.backoff_s of
    RETRY_BACKOFF_S: doubled with each attempt, and never before the vendor's Retry-After)."""
    return finish(t, error=error, **TRANSCRIPTIONS.retry_fields(t, config().retry_backoff_s, retry_after))
