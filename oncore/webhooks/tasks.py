"""The queue's entry points of webhooks: they take primary keys and are safe to run twice (a delivery is claimed
before it is sent); `send_later` hands deliveries to them."""

from django.db import transaction

from oncore import queue

from . import sending

GROUP = "webhooks"


def send(delivery_id: int) -> str:
    return sending.attempt(delivery_id)


def send_due() -> int:
    """The minutely schedule ("oncore-webhooks"): retries whose backoff has passed, and deliveries whose sender
    died. Returns how many were handed on."""
    due = sending.due()
    with transaction.atomic():
        send_later(due)
    return len(due)


def send_later(ids) -> None:
    """Once the current transaction commits, a `send` task for each delivery."""
    ids = list(ids)
    if ids:
        transaction.on_commit(lambda: [queue.enqueue(send, pk, group=GROUP) for pk in ids])
