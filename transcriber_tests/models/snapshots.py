"""Snapshots of a bank's figures (queries/snapshots.py): what a results or trust page, CSV or API answer shows for one
window and filter, computed by the queue when the bank's results change and read by key; and the call page's flag
boxes (queries/boxes.py), rendered by the queue when a flag's items change."""

from django.db import models

from .banks import Bank, Flag


class Snapshot(models.Model):
    """A bank's figures for one `kind` ("results" or "trust") and `key` (the window, period and filter), as they
    were at `version` (the bank's results_changed_at when they were computed) on the organization's `day` (the
    window ends today): `data` (the figures, pickled) and `html` (fragments the pages include as they are).
    A key asked for but never computed yet has no version. One row per key: a rebuild replaces it."""

    RESULTS = "results"
    TRUST = "trust"
    KINDS = [(RESULTS, "Results"), (TRUST, "Trust")]

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=10, choices=KINDS)
    key = models.CharField(max_length=200)
    version = models.DateTimeField(null=True, blank=True)
    day = models.DateField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    build_ms = models.PositiveIntegerField(default=0)
    read_at = models.DateTimeField()
    data = models.BinaryField(default=b"")
    html = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["bank", "kind", "key"], name="snapshot_once_per_key")]
        indexes = [models.Index(fields=["bank", "-read_at"], name="snapshot_recently_read")]

    def __str__(self):
        return f"{self.kind} {self.key} of bank {self.bank_id} at {self.version}"


class FlagBox(models.Model):
    """A flag's box on the call page as the queue rendered it (queries/boxes.py): `html`, what it showed when the
    versions of what it shows were `key` (boxes.key). One row per flag: a build replaces it."""

    flag = models.OneToOneField(Flag, on_delete=models.CASCADE, primary_key=True, related_name="box")
    key = models.CharField(max_length=200)
    html = models.TextField()

    def __str__(self):
        return f"box of flag {self.flag_id} at {self.key}"
