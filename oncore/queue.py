"""The one work-queue core: rows of a model are the queue (line transcriptions, the benchmarks' work items, webhook
deliveries), and django-q2 only carries primary keys to the workers.

    ITEMS = WorkQueue(Item, Item.QUEUED, Item.RUNNING)  # due at `not_before`, a queue task's lease: the defaults

    if ITEMS.claim(pk):                    # a conditional UPDATE: a second worker finds the row claimed and stops
        item = Item.objects.get(pk=pk)
        ...                                # the work: an engine call, a POST
        ITEMS.finish(item, status="done", text=text)                   # written only while the claim holds
        ITEMS.finish(item, error=why, **ITEMS.retry_fields(item, base_s, retry_after))  # waiting, after the backoff
    ITEMS.reclaim_stale()                  # claims older than the lease go back to waiting (their worker died)

A claim is the time in `claimed_at`: the worker keeps the item it loaded, and every write it makes afterwards is
conditional on that time being still there, so a worker that lost its claim (its lease ran out and another took
the item over) writes nothing. Claiming counts an attempt; the backoff is `backoff_s`, the only one in the project:
a base doubled with each attempt, never shorter than the vendor's Retry-After. A queue may also dispatch an item
(working, not yet claimed: a task for it is on its way) and let that task claim it (`claim_dispatched`).

Tasks are enqueued by function reference: `enqueue(tasks.transcribe, pk, group="oncore")` hands django-q2 the
function's dotted path. A module that enqueues a task defined in a module above it (one that imports it) declares
a `Task` and names it there; its app's ready() binds the Task to the function, so no import runs back up."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import django_q.tasks
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import F, Model, Q, QuerySet
from django.utils import timezone

from oncore.config import config

# ---------------------------------------------------------------- leases and the backoff


def task_lease_s() -> float:
    """The lease of a claim held by a queue task: django-q2 kills a task at its timeout, so no live worker
    holds a claim longer."""
    return float(config().queue_timeout_s)


def backoff_s(base_s: float, attempts: int, retry_after: float | None = None) -> float:
    """Seconds before attempt `attempts + 1`: `base_s` after the first attempt, doubled with each one after it,
    and never less than the vendor's Retry-After."""
    return max(base_s * 2 ** max(attempts - 1, 0), retry_after or 0.0)


# ---------------------------------------------------------------- a queue of rows


@dataclass(frozen=True)
class WorkQueue:
    """Rows of `model` as a queue: `waiting` rows become `working` when claimed, and go back to `waiting` (retry,
    release, a stale claim) or on to a final status their engine writes with `finish`. The defaults are what
    the work rows of queue tasks share (line transcriptions, the benchmarks' items)."""

    model: type[Model]
    waiting: str  # the status of a row waiting for a worker
    working: str  # the status of a claimed (or dispatched) row
    due: str = "not_before"  # the time column before which a waiting row is not claimed (null: due now)
    lease_s: Callable[[], float] = task_lease_s  # seconds a claim holds; an older one is stale
    claimed: str = "claimed_at"  # the claim's time; null while nobody holds the row
    attempts: str = "attempts"  # counts claims
    stamp: str | None = "updated_at"  # a column set to now by every write of the queue, if the model has one

    def _now_fields(self, now: datetime, **fields) -> dict:
        return {self.stamp: now, **fields} if self.stamp else fields

    def _due_by(self, now: datetime) -> Q:
        on_time = Q(**{f"{self.due}__lte": now})
        if self.model._meta.get_field(self.due).null:
            on_time |= Q(**{f"{self.due}__isnull": True})
        return Q(status=self.waiting) & on_time

    def ready(self, now: datetime | None = None, *, order_by: str = "id", **scope) -> QuerySet:
        """Ids of the waiting rows in `scope` (column=value) that are due, in `order_by` order."""
        return (
            self.model.objects.filter(**scope)
            .filter(self._due_by(now or timezone.now()))
            .order_by(order_by)
            .values_list("id", flat=True)
        )

    def claim(self, pk, now: datetime | None = None, **also) -> bool:
        """Claim a waiting row that is due, with a conditional UPDATE (`also`: more columns written with the
        claim). False when another worker has it or it is not due."""
        now = now or timezone.now()
        return bool(
            self.model.objects.filter(self._due_by(now), pk=pk).update(
                **self._now_fields(
                    now,
                    status=self.working,
                    **{self.claimed: now, self.attempts: F(self.attempts) + 1},
                    **also,
                )
            )
        )

    def claim_next(self, now: datetime | None = None, *, tries: int = 8, **scope):
        """Claim the first due row in `scope` that no other worker takes first (at most `tries` are tried);
        its id, or None."""
        now = now or timezone.now()
        for pk in list(self.ready(now, **scope)[:tries]):
            if self.claim(pk, now):
                return pk
        return None

    def dispatch(self, pk, now: datetime | None = None) -> bool:
        """Mark a waiting row working but unclaimed: a task that will claim it is on its way (claim_dispatched).
        Two dispatchers racing dispatch a row once."""
        now = now or timezone.now()
        return bool(
            self.model.objects.filter(pk=pk, status=self.waiting).update(
                **self._now_fields(now, status=self.working, **{self.claimed: None})
            )
        )

    def claim_dispatched(self, pk, now: datetime | None = None) -> bool:
        """Claim a dispatched row: one nobody holds, or whose claim is older than the lease (its worker died).
        A second delivery of the same task finds it claimed, or finished, and gets False."""
        now = now or timezone.now()
        free = Q(**{f"{self.claimed}__isnull": True}) | Q(**{f"{self.claimed}__lt": self._stale_before(now)})
        return bool(
            self.model.objects.filter(free, pk=pk, status=self.working).update(
                **self._now_fields(now, **{self.claimed: now, self.attempts: F(self.attempts) + 1})
            )
        )

    def held(self, item) -> QuerySet:
        """The item's row while the claim `item` was loaded with still holds."""
        return self.model.objects.filter(
            pk=item.pk, status=self.working, **{self.claimed: getattr(item, self.claimed)}
        )

    def finish(self, item, **fields) -> bool:
        """Write the item's outcome (`fields`, with its status) and end the claim, only while the claim holds.
        False when it no longer does: the worker lost its lease and its result is not written."""
        now = timezone.now()
        return bool(self.held(item).update(**self._now_fields(now, **{self.claimed: None}, **fields)))

    def retry_fields(
        self, item, base_s: float, retry_after: float | None = None, now: datetime | None = None
    ) -> dict:
        """The columns that queue a claimed item again after its backoff (backoff_s), to write with finish."""
        due = (now or timezone.now()) + timedelta(
            seconds=backoff_s(base_s, getattr(item, self.attempts), retry_after)
        )
        return {"status": self.waiting, self.due: due}

    def release(self, item) -> bool:
        """Give back a claimed item that was never worked on: waiting again, its attempt not counted."""
        return bool(
            self.held(item).update(
                **self._now_fields(
                    timezone.now(),
                    status=self.waiting,
                    **{self.claimed: None, self.attempts: F(self.attempts) - 1},
                )
            )
        )

    def _stale_before(self, now: datetime) -> datetime:
        return now - timedelta(seconds=self.lease_s())

    def reclaim_stale(
        self, now: datetime | None = None, *, lost_dispatch_s: float | None = None, **scope
    ) -> int:
        """Rows in `scope` claimed longer ago than the lease go back to waiting (their worker died); with
        `lost_dispatch_s`, so do dispatched rows no task has claimed for that long (the broker lost the task).
        Returns how many."""
        now = now or timezone.now()
        stale = Q(**{f"{self.claimed}__lt": self._stale_before(now)})
        if lost_dispatch_s is not None:
            stale |= Q(
                **{
                    f"{self.claimed}__isnull": True,
                    f"{self.stamp}__lt": now - timedelta(seconds=lost_dispatch_s),
                }
            )
        return (
            self.model.objects.filter(**scope)
            .filter(stale, status=self.working)
            .update(**self._now_fields(now, status=self.waiting, **{self.claimed: None}))
        )

    def next_due_in(self, now: datetime | None = None, **scope) -> float | None:
        """Seconds until the first waiting row in `scope` is due (0 when one is); None when none is waiting."""
        now = now or timezone.now()
        first = (
            self.model.objects.filter(status=self.waiting, **scope)
            .order_by(F(self.due).asc(nulls_first=True))
            .values_list(self.due, flat=True)
            .first()
        )
        if first is None:
            waiting = self.model.objects.filter(status=self.waiting, **{f"{self.due}__isnull": True}, **scope)
            return 0.0 if waiting.exists() else None
        return max(0.0, (first - now).total_seconds())


# ---------------------------------------------------------------- tasks, by function reference


def task_path(func: Callable) -> str:
    """The dotted path django-q2 finds a task function by: a module-level function's module and name."""
    name = getattr(func, "__qualname__", "")
    if not name or "." in name or "<" in name:
        raise ValueError(f"A queue task is a module-level function, not {func!r}.")
    return f"{func.__module__}.{name}"


def enqueue(func: Callable, *args, group: str) -> None:
    """Hand the task `func(*args)` to django-q2 now (inside a transaction, wrap it in transaction.on_commit)."""
    django_q.tasks.async_task(task_path(func), *args, group=group)


_DECLARED: list["Task"] = []


class Task:
    """A task that a module enqueues but cannot import, because the task's own module imports it (jobs.pump
    dispatches tasks.transcribe, whose workflow uses jobs). The module declares the Task where it enqueues it;
    its app's ready() binds it to the function."""

    def __init__(self, does: str, *, group: str):
        self.does = does  # what the task does, for the error when it is not bound
        self.group = group
        self.func: Callable | None = None
        _DECLARED.append(self)

    def __repr__(self) -> str:
        return f"<Task that {self.does}: {task_path(self.func) if self.func else 'not bound'}>"

    def bind(self, func: Callable) -> None:
        if self.func is not None and self.func is not func:
            raise ImproperlyConfigured(
                f"The task that {self.does} is bound to {task_path(self.func)} already."
            )
        task_path(func)  # a function django-q2 can find
        self.func = func

    def enqueue(self, *args) -> None:
        if self.func is None:
            raise ImproperlyConfigured(f"The task that {self.does} is not bound: its app's ready() binds it.")
        enqueue(self.func, *args, group=self.group)

    def later(self, *args) -> None:
        """Enqueue the task once the current transaction commits (at once outside one)."""
        transaction.on_commit(lambda: self.enqueue(*args))


def declared() -> list[Task]:
    """The Tasks declared in the modules imported so far."""
    return list(_DECLARED)


def unbound() -> list[Task]:
    """The Tasks declared so far that no ready() has bound."""
    return [t for t in _DECLARED if t.func is None]
