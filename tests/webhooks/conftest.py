"""What the webhook tests alone use: a receiver that verifies signatures, a queue that runs its tasks at once, and
endpoints allowed to reach 127.0.0.1."""

import importlib

import pytest

from tests.webhooks.receiver import WebhookReceiver


@pytest.fixture(scope="session")
def _receiver_for_session():
    with WebhookReceiver() as server:
        yield server


@pytest.fixture
def receiver(_receiver_for_session, settings):
    """A running receiver, and the setting that lets endpoints reach it on 127.0.0.1."""
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_ALLOW_NETWORKS": ["127.0.0.1/32"]}
    _receiver_for_session.reset()
    return _receiver_for_session


@pytest.fixture
def queue_now(monkeypatch):
    """Tasks handed to the queue run at once, in this process (once the transaction's on_commit callbacks run:
    wrap the request in django_capture_on_commit_callbacks(execute=True))."""
    ran = []

    def run(func, *args, **kwargs):
        module, name = func.rsplit(".", 1)
        ran.append(func)
        getattr(importlib.import_module(module), name)(*args)

    monkeypatch.setattr("django_q.tasks.async_task", run)
    return ran
