"""The work-queue core (oncore/queue.py) on a queue of its own over webhook deliveries, called directly (no broker,
no worker), and the rule that tasks are enqueued by function reference."""

import re
from datetime import timedelta
from pathlib import Path

import django_q.tasks
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone
from django.utils.module_loading import import_string

from oncore import queue
from oncore.webhooks.models import WebhookDelivery, WebhookEndpoint

ROOT = Path(__file__).resolve().parents[2]
APPS = ("oncore", "transcriber_tests", "benchmark")
LEASE_S = 60.0

ITEMS = queue.WorkQueue(
    WebhookDelivery,
    waiting=WebhookDelivery.PENDING,
    working=WebhookDelivery.SENDING,
    due="next_attempt_at",
    lease_s=lambda: LEASE_S,
    stamp=None,
)


def a_task(n):
    """A module-level function: what a queue task is."""
    return n


@pytest.fixture
def item(org):
    endpoint = WebhookEndpoint.objects.create(organization=org, url="https://example.com/hook", events=["x"])
    now = timezone.now()
    return WebhookDelivery.objects.create(
        endpoint=endpoint,
        event_id="evt_1",
        event_type="x",
        body="{}",
        next_attempt_at=now,
        retry_until=now + timedelta(hours=1),
    )


def claimed(pk) -> WebhookDelivery:
    """What a worker holds after its claim: the row as loaded right after claiming it."""
    assert ITEMS.claim(pk)
    return WebhookDelivery.objects.get(pk=pk)


def age_claim(pk, seconds: float) -> None:
    WebhookDelivery.objects.filter(pk=pk).update(claimed_at=timezone.now() - timedelta(seconds=seconds))


@pytest.mark.django_db
def test_it_claims_an_item_once_when_two_workers_claim_it(item):
    assert ITEMS.claim(item.pk) is True
    assert ITEMS.claim(item.pk) is False  # the second worker finds it claimed
    item.refresh_from_db()
    assert (item.status, item.attempts) == (WebhookDelivery.SENDING, 1) and item.claimed_at is not None
    assert ITEMS.claim_next() is None  # nothing else is waiting


@pytest.mark.django_db
def test_it_claims_nothing_before_it_is_due(item):
    later = timezone.now() + timedelta(minutes=5)
    WebhookDelivery.objects.filter(pk=item.pk).update(next_attempt_at=later)
    assert ITEMS.claim(item.pk) is False and ITEMS.claim_next() is None
    assert list(ITEMS.ready(later)) == [item.pk]
    assert ITEMS.claim_next(later) == item.pk


@pytest.mark.django_db
def test_it_gives_a_stale_claim_back_after_the_lease(item):
    claimed(item.pk)
    age_claim(item.pk, LEASE_S - 5)
    assert ITEMS.reclaim_stale() == 0  # within the lease the claim is respected
    age_claim(item.pk, LEASE_S + 1)
    assert ITEMS.reclaim_stale() == 1  # its worker died
    item.refresh_from_db()
    assert (item.status, item.claimed_at) == (WebhookDelivery.PENDING, None)
    assert claimed(item.pk).attempts == 2  # another worker takes it over


@pytest.mark.django_db
def test_it_writes_a_result_only_while_the_claim_holds(item):
    dead = claimed(item.pk)  # a worker claims it, then goes silent past the lease
    age_claim(item.pk, LEASE_S + 1)
    ITEMS.reclaim_stale()
    alive = claimed(item.pk)

    assert ITEMS.finish(dead, status=WebhookDelivery.DELIVERED, error="late") is False
    assert ITEMS.finish(alive, status=WebhookDelivery.DELIVERED, error="") is True
    assert ITEMS.finish(alive, status=WebhookDelivery.FAILED, error="twice") is False  # the claim has ended
    item.refresh_from_db()
    assert (item.status, item.error, item.claimed_at, item.attempts) == (
        WebhookDelivery.DELIVERED,
        "",
        None,
        2,
    )


@pytest.mark.django_db
def test_it_takes_over_a_dispatched_item_when_nobody_holds_it_or_its_claim_is_stale(item):
    assert ITEMS.dispatch(item.pk) is True
    assert ITEMS.dispatch(item.pk) is False  # two dispatchers dispatch it once
    assert ITEMS.claim_dispatched(item.pk) is True
    assert ITEMS.claim_dispatched(item.pk) is False  # a second delivery of its task stops
    age_claim(item.pk, LEASE_S + 1)
    assert ITEMS.claim_dispatched(item.pk) is True  # after the lease: taken over
    assert WebhookDelivery.objects.get(pk=item.pk).attempts == 2


def test_the_backoff_doubles_with_each_attempt_and_respects_retry_after():
    assert [queue.backoff_s(5.0, n) for n in (1, 2, 3, 4)] == [5.0, 10.0, 20.0, 40.0]
    assert queue.backoff_s(5.0, 0) == 5.0  # an item never claimed waits the base
    assert queue.backoff_s(5.0, 1, retry_after=30.0) == 30.0  # the vendor's Retry-After is a floor
    assert queue.backoff_s(5.0, 3, retry_after=1.0) == 20.0  # never shorter than the backoff


@pytest.mark.django_db
def test_it_queues_a_failed_item_again_after_its_backoff(item):
    held = claimed(item.pk)
    now = timezone.now()
    again = ITEMS.retry_fields(held, 60.0, now=now)
    assert again == {"status": WebhookDelivery.PENDING, "next_attempt_at": now + timedelta(seconds=60)}
    assert ITEMS.finish(held, error="503", **again)

    assert ITEMS.claim(item.pk) is False and list(ITEMS.ready()) == []  # not before its backoff
    assert 59 <= ITEMS.next_due_in() <= 60
    assert list(ITEMS.ready(now + timedelta(seconds=61))) == [item.pk]
    second = WebhookDelivery.objects.get(pk=item.pk)
    assert ITEMS.retry_fields(second, 60.0, retry_after=5.0, now=now)["next_attempt_at"] == now + timedelta(
        seconds=60
    )
    WebhookDelivery.objects.filter(pk=item.pk).update(attempts=2)
    doubled = WebhookDelivery.objects.get(pk=item.pk)
    assert ITEMS.retry_fields(doubled, 60.0, now=now)["next_attempt_at"] == now + timedelta(seconds=120)


@pytest.mark.django_db
def test_it_gives_back_an_item_it_never_worked_on_without_counting_the_attempt(item):
    held = claimed(item.pk)
    assert ITEMS.release(held) is True
    item.refresh_from_db()
    assert (item.status, item.attempts, item.claimed_at) == (WebhookDelivery.PENDING, 0, None)
    assert ITEMS.release(held) is False  # released once


def test_it_enqueues_a_task_by_its_function_reference(monkeypatch):
    sent = []
    monkeypatch.setattr(django_q.tasks, "async_task", lambda *args, **kwargs: sent.append((args, kwargs)))
    queue.enqueue(a_task, 7, group="tests")
    assert sent == [(("tests.oncore.test_queue.a_task", 7), {"group": "tests"})]

    def nested(n):
        return n

    with pytest.raises(ValueError, match="module-level function"):
        queue.enqueue(nested, 1, group="tests")


def test_it_refuses_a_task_declared_below_its_module_until_it_is_bound(monkeypatch):
    sent = []
    monkeypatch.setattr(django_q.tasks, "async_task", lambda *args, **kwargs: sent.append(args))
    task = queue.Task("does a test's work", group="tests")
    with pytest.raises(ImproperlyConfigured, match="does a test's work is not bound"):
        task.enqueue(1)
    task.bind(a_task)
    task.bind(a_task)  # binding it again to the same function is harmless
    with pytest.raises(ImproperlyConfigured, match="bound to tests.oncore.test_queue.a_task already"):
        task.bind(test_it_enqueues_a_task_by_its_function_reference)
    task.enqueue(2)
    assert sent == [("tests.oncore.test_queue.a_task", 2)]


def test_every_task_a_module_declares_is_bound_by_its_apps_ready():
    assert queue.unbound() == []
    for task in queue.declared():  # and django-q2 finds each by the path it is handed
        assert import_string(queue.task_path(task.func)) is task.func


def _sources():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


# "transcriber_tests.tasks.transcribe", "benchmark.entity.tasks.run_benchmark", "oncore.webhooks.tasks.send"...
DOTTED_TASK = re.compile(r"\b(?:oncore|transcriber_tests|benchmark)(?:\.\w+)*\.\w*tasks\.\w+")


def test_no_task_is_named_by_a_dotted_path_outside_migrations():
    found = [
        f"{path.relative_to(ROOT)}:{n}: {match.group(0)}"
        for path in _sources()
        for n, line in enumerate(path.read_text().splitlines(), 1)
        for match in DOTTED_TASK.finditer(line)
    ]
    assert not found, (
        "enqueue tasks by function reference (oncore.queue.enqueue or a queue.Task):\n" + "\n".join(found)
    )


def test_every_task_is_handed_to_django_q_by_the_queue_core():
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in _sources()
        if path.relative_to(ROOT) != Path("oncore/queue.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "async_task" in line or "django_q.tasks" in line
    ]
    assert not found, "enqueue through oncore.queue:\n" + "\n".join(found)


def test_the_dotted_path_rule_catches_a_task_named_by_its_path():
    assert DOTTED_TASK.search('async_task("transcriber_tests.tasks.transcribe", pk)')
    assert DOTTED_TASK.search("ADVANCE = 'transcriber_tests.runs.tasks.advance'")
    assert DOTTED_TASK.search('"benchmark.entity.tasks.run_benchmark"')
    assert not DOTTED_TASK.search("tasks.transcribe(pk)  # the queue task")
