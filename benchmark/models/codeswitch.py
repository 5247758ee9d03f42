"""Code-switching evaluation (docs/codeswitch.md): imported datasets, their utterances and questions, runs,
their results and the judge's judgements. Writes happen in benchmark.codeswitch; no logic in save()."""

from decimal import Decimal

from django.db import models
from django.db.models import Q

from ..packaged import is_codeswitch_fixture
from .base import Run, WorkItem


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

    @property
    def is_fixture(self) -> bool:
        """Imported from the packaged fixture JSONL (benchmark.packaged): a few clips, not a real dataset."""
        return is_codeswitch_fixture(self.source_sha256)


class CsUtterance(models.Model):
    """One audio clip: an utterance id in one condition. The same id in the three conditions is the same
    content, which is how the code-switching cost pairs them. `tags` holds one language code (or None) per
    whitespace-separated word of the reference, from the data or from benchmark.codeswitch.langtag."""

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


class CsRun(Run):
    """A catalogue transcriber over a code-switched dataset, with or without a language hint."""

    dataset = models.ForeignKey(CsDataset, on_delete=models.CASCADE, related_name="runs")
    transcriber = models.ForeignKey(
        "transcribers.Transcriber", null=True, blank=True, on_delete=models.SET_NULL, related_name="cs_runs"
    )
    model = models.CharField(max_length=200, blank=True)
    language_hint = models.BooleanField(
        help_text="True: each clip was sent with its language (the matrix language when code-switched); "
        "False: the transcriber detected the language."
    )
    concurrency = models.PositiveSmallIntegerField(default=2)
    utterances_total = models.PositiveIntegerField(default=0)
    utterances_done = models.PositiveIntegerField(default=0)
    utterances_failed = models.PositiveIntegerField(default=0)
    judge_cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))

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


class CsResult(WorkItem):
    """One run's hypothesis for one utterance (the code-switching work item) and its scores: word errors
    after the OnCore normalization, errors per language ({lang: [errors, words]}, insertions left out) and
    where errors fall ({matrix,embedded,independent}_{errors,words})."""

    run = models.ForeignKey(CsRun, on_delete=models.CASCADE, related_name="results")
    utterance = models.ForeignKey(CsUtterance, on_delete=models.CASCADE, related_name="results")
    detected_language = models.CharField(max_length=20, blank=True)
    not_before = models.DateTimeField(null=True, blank=True)
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
