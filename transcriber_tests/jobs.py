"""Per-organization concurrency and back-pressure for line transcriptions.

Transcription rows are the queue. `pump(org)` hands at most ORG_CONCURRENCY of an organization's queued rows to
the django-q2 workers at a time, so one organization with thousands of flags cannot starve another: every
organization has only a few tasks in the shared broker queue. A task that finishes its row goes on with its
organization's next ready row for up to ONCORE_TASK_CHAIN_S (no wait for the broker in between), then pumps.
A periodic `pump_all` picks up retries whose backoff has passed and rows whose worker died."""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from .errors import QueueFull
from .models import Transcription

ACTIVE = (Transcription.QUEUED, Transcription.RUNNING)


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
    running = Transcription.objects.filter(organization_id=organization_id, status=Transcription.RUNNING).count()
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
    return Transcription.objects.filter(status=Transcription.RUNNING).filter(
        Q(claimed_at__lt=stale_claim) | Q(claimed_at__isnull=True, updated_at__lt=lost_dispatch)
    ).update(status=Transcription.QUEUED, claimed_at=None, updated_at=now)


def pump_all() -> int:
    recover_abandoned()
    org_ids = (
        Transcription.objects.filter(status=Transcription.QUEUED).values_list("organization_id", flat=True).distinct()
    )
    return sum(len(pump(org_id)) for org_id in list(org_ids))
