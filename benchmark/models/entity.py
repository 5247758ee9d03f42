"""Entity Transcription Benchmark: imported datasets, their clips and entity spans, runs and their results.

Writes happen in benchmark.entity (importer, runs, actions); nothing here has logic in save().
"""

from django.db import models
from django.db.models import Q

from ..packaged import is_entity_fixture
from .base import Run, WorkItem


class Dataset(models.Model):
    """One imported version of a benchmark dataset. The same name may be imported at several versions or
    revisions; the files and their sha256 say exactly what was read."""

    name = models.CharField(max_length=200)
    version = models.CharField(max_length=100, default="unknown")
    revision = models.CharField(
        max_length=100, default="unknown", help_text="Commit of the annotations, if known."
    )
    source_files = models.JSONField(
        default=list, help_text="[{name, sha256, bytes, rows}] in the order read."
    )
    clip_count = models.PositiveIntegerField(default=0)
    span_count = models.PositiveIntegerField(default=0)
    excluded_count = models.PositiveIntegerField(
        default=0, help_text="Rows left out because they broke the contract."
    )
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-imported_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["name", "version", "revision"], name="benchmark_dataset_unique_version"
            ),
        ]

    def __str__(self):
        return f"{self.name} {self.version} ({self.revision})"

    @property
    def is_fixture(self) -> bool:
        """Imported from the packaged fixture files (benchmark.packaged): a few clips, not the benchmark."""
        return is_entity_fixture(self.source_files)


class Clip(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="clips")
    clip_id = models.CharField(max_length=300)
    subset = models.CharField(max_length=100)
    transcript = models.TextField()
    duration_s = models.FloatField()
    audio = models.FileField(
        upload_to="benchmark/", max_length=300, help_text="The clip's audio as published."
    )
    audio_sha256 = models.CharField(max_length=64)
    source_file = models.CharField(max_length=300, blank=True)
    source_row = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "clip_id"], name="benchmark_clip_unique_id")
        ]
        indexes = [models.Index(fields=["dataset", "subset"], name="benchmark_clip_subset")]

    def __str__(self):
        return self.clip_id


class EntitySpan(models.Model):
    """An annotated entity. start/end: character offsets into the transcript, when the dataset gave them."""

    clip = models.ForeignKey(Clip, on_delete=models.CASCADE, related_name="spans")
    index = models.PositiveSmallIntegerField()
    text = models.CharField(max_length=500)
    type = models.CharField(max_length=50)
    tier = models.CharField(max_length=1)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["clip", "index"]
        constraints = [models.UniqueConstraint(fields=["clip", "index"], name="benchmark_span_unique_index")]

    def __str__(self):
        return self.text


class ImportProblem(models.Model):
    """A row of the dataset that broke the contract and was left out of the import (and of every score)."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="problems")
    clip_id = models.CharField(max_length=300)
    source_file = models.CharField(max_length=300, blank=True)
    source_row = models.PositiveIntegerField(default=0)
    reason = models.TextField()

    class Meta:
        ordering = ["dataset", "id"]

    def __str__(self):
        return f"{self.clip_id}: {self.reason}"


class BenchmarkRun(Run):
    """One system's hypotheses over a dataset: made here by a catalogue transcriber, or imported (JSONL)."""

    CATALOGUE, IMPORTED = "catalogue", "imported"
    SOURCES = [(CATALOGUE, "Transcribed here"), (IMPORTED, "Imported hypotheses")]

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="runs")
    source = models.CharField(max_length=16, choices=SOURCES, default=CATALOGUE)
    transcriber = models.ForeignKey(
        "transcribers.Transcriber",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="benchmark_runs",
    )
    model = models.CharField(max_length=200, blank=True, help_text="The vendor's model string.")
    formatting = models.BooleanField(
        null=True, blank=True, help_text="Formatting layer on/off; empty when unstated."
    )
    source_sha256 = models.CharField(
        max_length=64, blank=True, help_text="sha256 of an imported hypotheses file."
    )
    concurrency = models.PositiveSmallIntegerField(
        default=2, help_text="Clips sent to the transcriber at once."
    )
    clips_total = models.PositiveIntegerField(default=0)
    clips_done = models.PositiveIntegerField(default=0)
    clips_failed = models.PositiveIntegerField(default=0)
    scored_at = models.DateTimeField(null=True, blank=True)
    matcher_version = models.CharField(max_length=50, blank=True)
    summary = models.JSONField(default=dict, blank=True, help_text="The last scoring's summary.")
    manifest = models.JSONField(default=dict, blank=True, help_text="The last scoring's run manifest.")

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "stopped", "done"]),
                name="benchmark_run_status_valid",
            ),
        ]

    def __str__(self):
        return f"Run {self.pk}: {self.system_name} on {self.dataset.name}"

    @property
    def clips_finished(self) -> int:
        return self.clips_done + self.clips_failed

    @property
    def label(self) -> str:
        """A file-name-safe label: run-12-whisper-tiny-en."""
        from django.utils.text import slugify

        return f"run-{self.pk}-{slugify(self.system_name) or 'system'}"


class Hypothesis(WorkItem):
    """A system's text for one clip: the entity benchmark's work item."""

    run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="hypotheses")
    clip = models.ForeignKey(Clip, on_delete=models.CASCADE, related_name="hypotheses")
    not_before = models.DateTimeField(null=True, blank=True, help_text="A retry waits until then.")

    class Meta:
        ordering = ["run", "clip"]
        constraints = [
            models.UniqueConstraint(fields=["run", "clip"], name="benchmark_hypothesis_once_per_clip"),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed"]),
                name="benchmark_hypothesis_status_valid",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"], name="benchmark_hyp_run_status")]

    def __str__(self):
        return f"{self.clip_id} in run {self.run_id}: {self.status}"


class SpanHit(models.Model):
    """Whether a run's hypothesis contains one entity span, under the matcher version named."""

    run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="hits")
    span = models.ForeignKey(EntitySpan, on_delete=models.CASCADE, related_name="hits")
    found = models.BooleanField()
    matcher_version = models.CharField(max_length=50)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "span"], name="benchmark_hit_once_per_span")]

    def __str__(self):
        return f"span {self.span_id} in run {self.run_id}: {'found' if self.found else 'missed'}"
