"""The queue's entry points of webhooks: they take primary keys and are safe to run twice (a delivery is claimed
before it is sent)."""

from . import actions


def send(delivery_id: int) -> str:
    return actions.send(delivery_id)


def send_due() -> int:
    """The minutely schedule ("oncore-webhooks"): retries whose backoff has passed, and deliveries whose sender
    died."""
    return actions.send_due()
