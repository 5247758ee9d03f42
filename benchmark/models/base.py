"""What the two benchmarks' runs share: the abstract run and work item that benchmark.executor works on.

Abstract, so each benchmark keeps its own tables; the fields declared here are the ones both tables already
had, alike to the letter (a field that differs, even in its help text, stays on its model, so the
migrations do not change)."""

from decimal import Decimal

from django.db import models


class Run(models.Model):
    """A catalogue transcriber (or imported hypotheses) over one dataset."""

    QUEUED, RUNNING, STOPPED, DONE = "queued", "running", "stopped", "done"
    STATUSES = [(QUEUED, "Queued"), (RUNNING, "Running"), (STOPPED, "Stopped"), (DONE, "Done")]

    system_name = models.CharField(max_length=200)
    status = models.CharField(max_length=16, choices=STATUSES, default=QUEUED)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class WorkItem(models.Model):
    """One clip of a run's work list and what the transcriber made of it. `attempts` counts engine calls;
    an item is claimed (running, `claimed_at`) before it is sent, and a done item is never sent again;
    a retry waits until `not_before`."""

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATUSES = [(QUEUED, "Queued"), (RUNNING, "Running"), (DONE, "Done"), (FAILED, "Failed")]

    status = models.CharField(max_length=16, choices=STATUSES, default=QUEUED)
    text = models.TextField(blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    latency_s = models.FloatField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
