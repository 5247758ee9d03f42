"""The judge's pick among matching versions of a line, and full-call runs: a run, its calls, its lines and the
patterns the judge grouped its breaks into."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from ..lib import scoring
from .banks import Bank, ControlLine, Flag


class JudgePick(models.Model):
    """On a flag or control where two or more candidates matched but wrote the line differently, the version
    the judge says fits the business best, with one sentence of reasoning. It never changes a score.

    `versions` maps transcriber ids (as strings) to the texts shown to the judge; a pick whose versions no
    longer match the current scores is asked again. `chosen` is empty when the judge failed (`error` says why)."""

    flag = models.ForeignKey(Flag, on_delete=models.CASCADE, related_name="picks")
    control = models.ForeignKey(
        ControlLine, on_delete=models.CASCADE, null=True, blank=True, related_name="picks"
    )
    chosen = models.ForeignKey(
        "transcribers.Transcriber", on_delete=models.PROTECT, null=True, blank=True, related_name="picks"
    )
    chosen_text = models.TextField(blank=True)
    reasoning = models.TextField(blank=True)
    versions = models.JSONField(default=dict)
    error = models.TextField(blank=True)
    prompt_version = models.CharField(max_length=20, blank=True)
    model = models.CharField(max_length=100, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    picked_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["flag"], condition=Q(control__isnull=True), name="pick_once_per_flag"
            ),
            models.UniqueConstraint(
                fields=["control"], condition=Q(control__isnull=False), name="pick_once_per_control"
            ),
        ]

    def __str__(self):
        item = f"control {self.control_id}" if self.control_id else f"flag {self.flag_id}"
        return f"Pick on {item}: {self.chosen_id or 'none'}"


class Run(models.Model):
    """A full-call run: one candidate over every caller line of up to ten calls, compared with the live
    transcript, labelled, grouped into patterns and summed up in a verdict. Runs are never deleted.

    One run per organization may be queued or running: a partial unique index holds that, not a check."""

    QUEUED = "queued"
    TRANSCRIBING = "transcribing"
    JUDGING = "judging"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"
    STATUSES = [
        (QUEUED, "Queued"),
        (TRANSCRIBING, "Transcribing"),
        (JUDGING, "Judging"),
        (DONE, "Done"),
        (CANCELLED, "Cancelled"),
        (FAILED, "Failed"),
    ]
    ACTIVE = (QUEUED, TRANSCRIBING, JUDGING)

    # The judge's step, apart from the run's status: a run without a key or whose judge failed still finishes.
    JUDGE_PENDING = "pending"
    JUDGE_DONE = "done"
    JUDGE_NOT_CONFIGURED = "not_configured"
    JUDGE_FAILED = "failed"
    JUDGE_SKIPPED = "skipped"
    JUDGE_STATUSES = [
        (JUDGE_PENDING, "Pending"),
        (JUDGE_DONE, "Done"),
        (JUDGE_NOT_CONFIGURED, "Judge not configured"),
        (JUDGE_FAILED, "Failed"),
        (JUDGE_SKIPPED, "Skipped"),
    ]

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="runs")
    # Deleting a bank takes its runs out of every list; the run itself stays, reachable by its id.
    bank = models.ForeignKey(Bank, on_delete=models.SET_NULL, null=True, blank=True, related_name="runs")
    bank_name = models.CharField(max_length=100)
    candidate = models.ForeignKey("transcribers.Transcriber", on_delete=models.PROTECT, related_name="runs")
    calls = models.ManyToManyField("calls.Call", through="RunCall", related_name="runs")
    status = models.CharField(max_length=12, choices=STATUSES, default=QUEUED)
    error = models.TextField(blank=True)
    seed = models.BigIntegerField(help_text="Seeds the calibration and review samples.")
    calibration_size = models.PositiveIntegerField(default=20)
    review_size = models.PositiveIntegerField(default=120)
    # What was shown before starting.
    estimate = models.JSONField(default=dict)
    # The judge's step.
    judge_status = models.CharField(max_length=16, choices=JUDGE_STATUSES, default=JUDGE_PENDING)
    judge_error = models.TextField(blank=True)
    # The judge step's claim on the run, on oncore.queue (work/runs.py JUDGE_CLAIMS): when, and how many were made.
    judge_claimed_at = models.DateTimeField(null=True, blank=True)
    judge_claims = models.PositiveIntegerField(default=0)
    patterns_done = models.BooleanField(default=False)
    verdict = models.TextField(blank=True)
    judge_model = models.CharField(max_length=100, blank=True)
    judge_prompt_version = models.CharField(max_length=20, blank=True)
    judge_input_tokens = models.PositiveIntegerField(default=0)
    judge_output_tokens = models.PositiveIntegerField(default=0)
    judge_cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    # Label requests the judge was sent, and those the rule labeller spared it (each request labels up to a few
    # lines of one call: see judge/requests.py label_requests).
    judge_label_requests = models.PositiveIntegerField(default=0)
    judge_calls_saved = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization"],
                condition=Q(status__in=["queued", "transcribing", "judging"]),
                name="one_active_run_per_org",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "transcribing", "judging", "done", "cancelled", "failed"]),
                name="run_status_valid",
            ),
        ]
        indexes = [models.Index(fields=["bank", "-created_at"])]

    def __str__(self):
        return f"Run {self.pk} of {self.candidate_id} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE


class RunCall(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="run_calls")
    call = models.ForeignKey("calls.Call", on_delete=models.CASCADE, related_name="run_calls")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["run", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "call"], name="run_call_once")]

    def __str__(self):
        return f"Call {self.call_id} in run {self.run_id}"


class RunPattern(models.Model):
    """A way the candidate went wrong on lines the live transcript got right, with how many lines show it."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="patterns")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["run", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="run_pattern_name_once")]

    def __str__(self):
        return f"{self.name} ({self.count})"


class RunLine(models.Model):
    """One caller line of a run: the candidate's text beside the live transcript, and its label.

    Texts are copied when the run compares, so the run reads the same later. One row per run and line."""

    CANDIDATE_RIGHT = scoring.CANDIDATE_RIGHT
    LIVE_RIGHT = scoring.LIVE_RIGHT
    SAME_MEANING = scoring.SAME_MEANING
    BOTH_WRONG = scoring.BOTH_WRONG
    LABELS = [
        (CANDIDATE_RIGHT, "Candidate right"),
        (LIVE_RIGHT, "Live right"),
        (SAME_MEANING, "Same meaning"),
        (BOTH_WRONG, "Both wrong"),
    ]
    BY_FLAG = "flag"
    BY_JUDGE = "judge"
    BY_RULE = "rule"
    LABEL_SOURCES = [
        (BY_FLAG, "Scored against the flag"),
        (BY_JUDGE, "Judge"),
        (BY_RULE, "Rule (same after canonicalization)"),
    ]

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="lines")
    line = models.ForeignKey("calls.Line", on_delete=models.CASCADE, related_name="run_lines")
    position = models.PositiveIntegerField(help_text="Order in the run: call order, then line order.")
    compared = models.BooleanField(default=False)
    live_text = models.TextField(blank=True)
    candidate_text = models.TextField(blank=True)
    candidate_failed = models.BooleanField(default=False)
    candidate_error = models.TextField(blank=True)
    differs = models.BooleanField(default=False, help_text="Normalized candidate and live texts differ.")
    # A flagged line is scored against what was said.
    flag = models.ForeignKey(Flag, on_delete=models.SET_NULL, null=True, blank=True, related_name="run_lines")
    expected_text = models.TextField(blank=True)
    candidate_match = models.BooleanField(null=True)
    live_match = models.BooleanField(null=True)
    candidate_wer = models.FloatField(null=True, blank=True)
    live_wer = models.FloatField(null=True, blank=True)
    label = models.CharField(max_length=16, choices=LABELS, blank=True)
    label_source = models.CharField(max_length=8, choices=LABEL_SOURCES, blank=True)
    reasoning = models.TextField(blank=True)
    # The judge sees "transcript 1" and "transcript 2", in an order drawn per line from the run's seed.
    live_shown_first = models.BooleanField(null=True, blank=True)
    label_prompt_version = models.CharField(max_length=40, blank=True, help_text="Prompt (or rule) version.")
    label_error = models.TextField(blank=True, help_text="Why the judge left this line unlabelled.")
    pattern = models.ForeignKey(
        RunPattern, on_delete=models.SET_NULL, null=True, blank=True, related_name="lines"
    )
    # Calibration: the live transcriber itself run again over the recording.
    calibration = models.BooleanField(default=False)
    replay_transcriber = models.ForeignKey(
        "transcribers.Transcriber", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    replay_text = models.TextField(blank=True)
    replay_failed = models.BooleanField(default=False)
    replay_matches = models.BooleanField(null=True)
    # Review sample: a person labels the line without seeing the judge's (or rule's) label, then sees it.
    in_review = models.BooleanField(default=False)
    human_label = models.CharField(max_length=16, choices=LABELS, blank=True)
    review_agrees = models.BooleanField(null=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    # A second answer once the label was shown: recorded beside the first, which stands (agreement counts it).
    correction = models.CharField(max_length=16, choices=LABELS, blank=True)
    corrected_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "line"], name="run_line_once"),
            models.CheckConstraint(
                condition=Q(label__in=["", "candidate_right", "live_right", "same_meaning", "both_wrong"]),
                name="run_line_label_valid",
            ),
        ]
        indexes = [models.Index(fields=["run", "label"])]

    def __str__(self):
        return f"Run {self.run_id} line {self.line_id}: {self.label or '-'}"

    @property
    def label_hidden(self) -> bool:
        """In the review sample and not reviewed yet: its label, source and reasoning are shown nowhere (the review
        is blind) until a person has given theirs."""
        return self.in_review and not self.human_label
