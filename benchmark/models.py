"""Entity Transcription Benchmark: imported datasets, their clips and entity spans, runs and their results.

Writes happen in benchmark.importer, benchmark.runs and benchmark.actions; nothing here has logic in save().
"""

from decimal import Decimal

from django.db import models
from django.db.models import Q


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


class BenchmarkRun(models.Model):
    """One system's hypotheses over a dataset: made here by a catalogue transcriber, or imported (JSONL)."""

    QUEUED, RUNNING, STOPPED, DONE = "queued", "running", "stopped", "done"
    STATUSES = [(QUEUED, "Queued"), (RUNNING, "Running"), (STOPPED, "Stopped"), (DONE, "Done")]
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
    system_name = models.CharField(max_length=200)
    model = models.CharField(max_length=200, blank=True, help_text="The vendor's model string.")
    formatting = models.BooleanField(
        null=True, blank=True, help_text="Formatting layer on/off; empty when unstated."
    )
    source_sha256 = models.CharField(
        max_length=64, blank=True, help_text="sha256 of an imported hypotheses file."
    )
    status = models.CharField(max_length=16, choices=STATUSES, default=QUEUED)
    concurrency = models.PositiveSmallIntegerField(
        default=2, help_text="Clips sent to the transcriber at once."
    )
    clips_total = models.PositiveIntegerField(default=0)
    clips_done = models.PositiveIntegerField(default=0)
    clips_failed = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
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


class Hypothesis(models.Model):
    """A system's text for one clip. `attempts` counts engine calls; a done hypothesis is never sent again."""

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATUSES = [(QUEUED, "Queued"), (RUNNING, "Running"), (DONE, "Done"), (FAILED, "Failed")]

    run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="hypotheses")
    clip = models.ForeignKey(Clip, on_delete=models.CASCADE, related_name="hypotheses")
    text = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=STATUSES, default=QUEUED)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    latency_s = models.FloatField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    not_before = models.DateTimeField(null=True, blank=True, help_text="A retry waits until then.")
    updated_at = models.DateTimeField(auto_now=True)

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


# ---------------------------------------------------------------- code-switching evaluation (docs/codeswitch.md)


class CsDataset(models.Model):
    """An imported code-switched dataset (one JSONL file). Re-importing the same file changes nothing."""

    name = models.CharField(max_length=200, unique=True)
    source_file = models.CharField(max_length=300, blank=True)
    source_sha256 = models.CharField(max_length=64, blank=True)
    utterance_count = models.PositiveIntegerField(default=0)
    excluded_count = models.PositiveIntegerField(default=0)
    imported_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class CsUtterance(models.Model):
    """One audio clip: an utterance id in one condition. The same id in the three conditions is the same
    content, which is how the code-switching cost pairs them. `tags` holds one language code (or None) per
    whitespace-separated word of the reference, from the data or from benchmark.langtag."""

    CODE_SWITCHED, MONO_MATRIX, MONO_ENGLISH = "code_switched", "monolingual_matrix", "monolingual_english"
    CONDITIONS = [
        (CODE_SWITCHED, "Code-switched"),
        (MONO_MATRIX, "Monolingual matrix language"),
        (MONO_ENGLISH, "Monolingual English"),
    ]
    DATA, LINGUA, CONDITION = "data", "lingua", "condition"
    TAG_SOURCES = [
        (DATA, "From the data"),
        (LINGUA, "Detected (lingua)"),
        (CONDITION, "The one language spoken"),
    ]

    dataset = models.ForeignKey(CsDataset, on_delete=models.CASCADE, related_name="utterances")
    utterance_id = models.CharField(max_length=200)
    pair = models.CharField(max_length=20, help_text="matrix-embedded, e.g. es-en.")
    matrix_language = models.CharField(max_length=10)
    condition = models.CharField(max_length=24, choices=CONDITIONS)
    reference = models.TextField()
    tags = models.JSONField(default=list)
    tags_source = models.CharField(max_length=10, choices=TAG_SOURCES)
    switch_points = models.PositiveIntegerField(default=0)
    cmi = models.FloatField(default=0.0)
    audio = models.FileField(upload_to="benchmark/codeswitch/", max_length=300)
    audio_sha256 = models.CharField(max_length=64)
    duration_s = models.FloatField(default=0.0)
    line = models.PositiveIntegerField(default=0, help_text="Line of the JSONL file.")

    class Meta:
        ordering = ["dataset", "line", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "utterance_id", "condition"], name="benchmark_cs_utterance_unique"
            ),
        ]

    def __str__(self):
        return f"{self.utterance_id} ({self.condition})"

    @property
    def languages(self) -> list[str]:
        """The languages spoken in this clip: both of the pair when code-switched, else the one."""
        embedded = self.pair.split("-")[-1]
        if self.condition == self.CODE_SWITCHED:
            return [self.matrix_language, embedded]
        return [self.matrix_language if self.condition == self.MONO_MATRIX else "en"]


class CsImportProblem(models.Model):
    """A JSONL line left out of the import, with its utterance id (when readable) and the reason."""

    dataset = models.ForeignKey(CsDataset, on_delete=models.CASCADE, related_name="problems")
    utterance_id = models.CharField(max_length=200, blank=True)
    line = models.PositiveIntegerField()
    reason = models.TextField()

    class Meta:
        ordering = ["dataset", "line"]

    def __str__(self):
        return f"line {self.line} {self.utterance_id}: {self.reason}"


class CsQuestion(models.Model):
    """A comprehension question about an utterance with its answer from the reference, written once by the
    LLM and reused for every system."""

    utterance = models.ForeignKey(CsUtterance, on_delete=models.CASCADE, related_name="questions")
    index = models.PositiveSmallIntegerField()
    question = models.TextField()
    answer = models.TextField()
    prompt_version = models.CharField(max_length=40)
    model = models.CharField(max_length=100, blank=True)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))

    class Meta:
        ordering = ["utterance", "index"]
        constraints = [
            models.UniqueConstraint(fields=["utterance", "index"], name="benchmark_cs_question_unique"),
        ]

    def __str__(self):
        return self.question


class CsRun(models.Model):
    """A catalogue transcriber over a code-switched dataset, with or without a language hint."""

    QUEUED, RUNNING, STOPPED, DONE = "queued", "running", "stopped", "done"
    STATUSES = [(QUEUED, "Queued"), (RUNNING, "Running"), (STOPPED, "Stopped"), (DONE, "Done")]

    dataset = models.ForeignKey(CsDataset, on_delete=models.CASCADE, related_name="runs")
    transcriber = models.ForeignKey(
        "transcribers.Transcriber", null=True, blank=True, on_delete=models.SET_NULL, related_name="cs_runs"
    )
    system_name = models.CharField(max_length=200)
    model = models.CharField(max_length=200, blank=True)
    language_hint = models.BooleanField(
        help_text="True: each clip was sent with its language (the matrix language when code-switched); "
        "False: the transcriber detected the language."
    )
    status = models.CharField(max_length=16, choices=STATUSES, default=QUEUED)
    concurrency = models.PositiveSmallIntegerField(default=2)
    utterances_total = models.PositiveIntegerField(default=0)
    utterances_done = models.PositiveIntegerField(default=0)
    utterances_failed = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    judge_cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "stopped", "done"]),
                name="benchmark_cs_run_status_valid",
            ),
        ]

    def __str__(self):
        return f"CS run {self.pk}: {self.label}"

    @property
    def label(self) -> str:
        return f"{self.system_name} ({'language hint' if self.language_hint else 'auto-detect'})"


class CsResult(models.Model):
    """One run's hypothesis for one utterance (the work item, claimed like benchmark.Hypothesis) and its
    scores: word errors after the OnCore normalization, errors per language ({lang: [errors, words]},
    insertions left out) and where errors fall ({matrix,embedded,independent}_{errors,words})."""

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATUSES = [(QUEUED, "Queued"), (RUNNING, "Running"), (DONE, "Done"), (FAILED, "Failed")]

    run = models.ForeignKey(CsRun, on_delete=models.CASCADE, related_name="results")
    utterance = models.ForeignKey(CsUtterance, on_delete=models.CASCADE, related_name="results")
    status = models.CharField(max_length=16, choices=STATUSES, default=QUEUED)
    text = models.TextField(blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    latency_s = models.FloatField(null=True, blank=True)
    detected_language = models.CharField(max_length=20, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    not_before = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    substitutions = models.PositiveIntegerField(default=0)
    deletions = models.PositiveIntegerField(default=0)
    insertions = models.PositiveIntegerField(default=0)
    reference_words = models.PositiveIntegerField(default=0)
    wer = models.FloatField(null=True, blank=True)
    per_language = models.JSONField(default=dict, blank=True)
    location = models.JSONField(default=dict, blank=True)
    normalizer_version = models.CharField(max_length=20, blank=True)

    class Meta:
        ordering = ["run", "utterance"]
        constraints = [
            models.UniqueConstraint(fields=["run", "utterance"], name="benchmark_cs_result_once"),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed"]),
                name="benchmark_cs_result_status_valid",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"], name="benchmark_cs_result_status")]

    def __str__(self):
        return f"{self.utterance} in CS run {self.run_id}: {self.status}"


class CsJudgement(models.Model):
    """The LLM judge on one result: semantic word errors (WER computed here from S, D, I and the judge's
    reference word count) or answer errors (wrong answers out of the utterance's questions)."""

    SEMANTIC, ANSWERS = "semantic", "answers"
    KINDS = [(SEMANTIC, "Semantic WER"), (ANSWERS, "Answer error rate")]

    result = models.ForeignKey(CsResult, on_delete=models.CASCADE, related_name="judgements")
    kind = models.CharField(max_length=10, choices=KINDS)
    prompt_version = models.CharField(max_length=40)
    errors = models.PositiveIntegerField(default=0, help_text="S+D+I, or wrong answers.")
    total = models.PositiveIntegerField(default=0, help_text="Reference words, or questions.")
    detail = models.JSONField(default=dict, blank=True, help_text="S/D/I, or each answer and its grade.")
    reasoning = models.TextField(blank=True)
    error = models.TextField(blank=True, help_text="Why the judge gave no answer.")
    model = models.CharField(max_length=100, blank=True)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    judged_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["result", "kind"], name="benchmark_cs_judgement_once"),
        ]

    def __str__(self):
        return f"{self.kind} of result {self.result_id}: {self.errors}/{self.total}"

    @property
    def rate(self) -> float | None:
        if self.error:
            return None
        return self.errors / self.total if self.total else None
