"""The queue mechanics of line transcriptions: per-organization concurrency and back-pressure, claims and their
lease, outcomes, retry backoff, chaining and recovery. The task entry points are in tasks.py.

Transcription rows are the queue. `pump(org)` hands at most ORG_CONCURRENCY of an organization's queued rows to
the django-q2 workers at a time, so one organization with thousands of flags cannot starve another: every
organization has only a few tasks in the shared broker queue. A task claims its row (`claim`, a conditional
update: a second delivery finds it claimed and stops), and `finish` writes the outcome only while the claim holds.
A task that finishes its row goes on with its organization's next ready row for up to ONCORE_TASK_CHAIN_S (no wait
for the broker in between: `claimed_chain`), then pumps. A periodic `pump_all` picks up retries whose backoff has
passed and rows whose worker died."""

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from .errors import QueueFull
from .models import Transcription

log = logging.getLogger(__name__)

ACTIVE = (Transcription.QUEUED, Transcription.RUNNING)
FINISHED = (Transcription.DONE, Transcription.FAILED)


def _setting(name):
    return settings.ONCORE[name]


def lease_seconds() -> int:
    """A claimed row whose worker has been silent this long is considered abandoned (django-q2 kills a task
    at its timeout, so no live worker holds a row longer)."""
    return int(settings.Q_CLUSTER["timeout"])


def enqueue(func: str, *args) -> None:
    from django_q.tasks import async_task

    async_task(func, *args, group="oncore")


def pending_count(organization_id: int) -> int:
    return Transcription.objects.filter(organization_id=organization_id, status__in=ACTIVE).count()


def check_capacity(organization_id: int) -> None:
    """Refuse new work into banks while the organization's queue is over its limit."""
    pending = pending_count(organization_id)
    limit = _setting("ORG_QUEUE_LIMIT")
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
        "limit": _setting("ORG_QUEUE_LIMIT"),
        "concurrency": _setting("ORG_CONCURRENCY"),
    }


def free_slots(organization_id: int) -> int:
    running = Transcription.objects.filter(
        organization_id=organization_id, status=Transcription.RUNNING
    ).count()
    return _setting("ORG_CONCURRENCY") - running


def ready_rows(organization_id: int, now):
    """Ids of the organization's queued rows whose retry backoff has passed, oldest first."""
    return (
        Transcription.objects.filter(organization_id=organization_id, status=Transcription.QUEUED)
        .filter(Q(not_before__isnull=True) | Q(not_before__lte=now))
        .order_by("id")
        .values_list("id", flat=True)
    )


def pump(organization_id: int) -> list[int]:
    """Dispatch queued rows of one organization up to its concurrency. Returns the ids dispatched."""
    now = timezone.now()
    slots = free_slots(organization_id)
    if slots <= 0:
        return []
    dispatched = []
    for pk in ready_rows(organization_id, now)[: slots * 2]:
        if len(dispatched) == slots:
            break
        # Conditional update: two pumps racing dispatch each row once.
        if Transcription.objects.filter(pk=pk, status=Transcription.QUEUED).update(
            status=Transcription.RUNNING, claimed_at=None, updated_at=now
        ):
            dispatched.append(pk)
    for pk in dispatched:
        transaction.on_commit(lambda pk=pk: enqueue("transcriber_tests.tasks.transcribe", pk))
    return dispatched


def recover_abandoned() -> int:
    """Rows left running by a worker that died are queued again: a claim older than the lease (its task was killed
    at the timeout, and a row a task went on to by itself is never delivered again), or a dispatch whose broker
    message has not been taken for twice the broker's retry."""
    now = timezone.now()
    stale_claim = now - timedelta(seconds=lease_seconds())
    lost_dispatch = now - timedelta(seconds=2 * int(settings.Q_CLUSTER["retry"]))
    return (
        Transcription.objects.filter(status=Transcription.RUNNING)
        .filter(Q(claimed_at__lt=stale_claim) | Q(claimed_at__isnull=True, updated_at__lt=lost_dispatch))
        .update(status=Transcription.QUEUED, claimed_at=None, updated_at=now)
    )


def pump_all() -> int:
    recover_abandoned()
    org_ids = (
        Transcription.objects.filter(status=Transcription.QUEUED)
        .values_list("organization_id", flat=True)
        .distinct()
    )
    return sum(len(pump(org_id)) for org_id in list(org_ids))


# ---------------------------------------------------------------- claims, outcomes, backoff and the chain


def _load(pk: int) -> Transcription:
    return Transcription.objects.select_related("line__call", "transcriber").get(pk=pk)


def claim(pk: int) -> Transcription | None:
    """Claim a dispatched row. A second delivery of the same task finds it claimed (or finished) and stops;
    a delivery after a worker died finds the claim older than the lease and takes it over."""
    now = timezone.now()
    stale = now - timedelta(seconds=lease_seconds())
    claimed = (
        Transcription.objects.filter(pk=pk, status=Transcription.RUNNING)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale))
        .update(claimed_at=now, attempts=F("attempts") + 1, updated_at=now)
    )
    if not claimed:
        return None
    return _load(pk)


def claim_next(organization_id: int) -> Transcription | None:
    """Dispatch and claim the organization's next ready row in one step, for a task that has just finished one:
    the slot it holds passes to that row without a round trip through the broker (unless a pump took it)."""
    if free_slots(organization_id) <= 0:
        return None
    now = timezone.now()
    for pk in ready_rows(organization_id, now)[:4]:
        if Transcription.objects.filter(pk=pk, status=Transcription.QUEUED).update(
            status=Transcription.RUNNING, claimed_at=now, attempts=F("attempts") + 1, updated_at=now
        ):
            return _load(pk)
    return None


def claimed_chain(pk: int):
    """The rows one task transcribes, each claimed: the dispatched row (none if another delivery has it), then,
    while the task is younger than ONCORE_TASK_CHAIN_S, the organization's next ready rows, one at a time so its
    concurrency holds. When the chain ends, the organization's queue is pumped."""
    t = claim(pk)
    if t is None:
        return
    organization_id = t.organization_id
    chain_until = time.monotonic() + _setting("TASK_CHAIN_S")
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
    fields["updated_at"] = timezone.now()
    try:
        return _write_outcome(t, fields, on_final)
    except (OperationalError, InterfaceError):
        log.warning("transcription %s: the database connection was lost; writing its outcome again", t.pk)
        close_old_connections()
        return _write_outcome(t, fields, on_final)


def _write_outcome(t: Transcription, fields: dict, on_final) -> bool:
    with transaction.atomic():
        written = Transcription.objects.filter(
            pk=t.pk, status=Transcription.RUNNING, claimed_at=t.claimed_at
        ).update(**fields)
        if written and on_final is not None and fields.get("status") in FINISHED:
            t.refresh_from_db()
            on_final(t)
    return bool(written)


def may_retry(t: Transcription) -> bool:
    return t.attempts < _setting("MAX_TRANSCRIPTION_ATTEMPTS")


def retry_later(t: Transcription, error: str, retry_after: float | None = None) -> bool:
    """Queue a row that failed with a retryable error again after its backoff: RETRY_BACKOFF_S, doubled with each
    attempt, and never before the vendor's Retry-After."""
    delay = max(_setting("RETRY_BACKOFF_S") * 2 ** (t.attempts - 1), retry_after or 0)
    return finish(
        t,
        status=Transcription.QUEUED,
        error=error,
        claimed_at=None,
        not_before=timezone.now() + timedelta(seconds=delay),
    )
