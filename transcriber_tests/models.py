from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from . import scoring

MAX_CANDIDATES = 8


class Bank(models.Model):
    """A named set of candidate transcribers, shared by an organization."""

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="banks")
    name = models.CharField(max_length=100)
    language_label = models.CharField(
        max_length=100, blank=True, help_text="Display only, e.g. 'English + French'."
    )
    # Exact: "70.2%" is 0.7020, compared with matches / scored in integers (scoring.clears).
    threshold = models.DecimalField(
        max_digits=5, decimal_places=4, default=Decimal("0.6"), help_text="Accuracy marker, a fraction 0..1."
    )
    controls_per_flag = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    # Moved forward by every write that changes the bank's results; part of the results cache key.
    results_changed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "name"], name="bank_name_unique_in_org"),
            models.CheckConstraint(
                condition=Q(threshold__gte=0) & Q(threshold__lte=1), name="bank_threshold_0_1"
            ),
            models.CheckConstraint(condition=Q(controls_per_flag__lte=2), name="bank_controls_0_2"),
        ]

    def __str__(self):
        return self.name

    @property
    def label_beside_name(self) -> str:
        """The language label as pages show it beside the name: nothing when it only repeats the name."""
        label = self.language_label.strip()
        return "" if label.casefold() in self.name.casefold() else label


class Candidate(models.Model):
    """A transcriber in a bank. Position 0..7 and unique per bank: the database holds at most 8."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="candidates")
    transcriber = models.ForeignKey(
        "transcribers.Transcriber", on_delete=models.PROTECT, related_name="candidacies"
    )
    position = models.PositiveSmallIntegerField()
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["bank", "position"]
        constraints = [
            models.UniqueConstraint(fields=["bank", "transcriber"], name="candidate_once_per_bank"),
            models.UniqueConstraint(fields=["bank", "position"], name="candidate_position_unique"),
            models.CheckConstraint(condition=Q(position__lt=MAX_CANDIDATES), name="candidate_at_most_8"),
        ]

    def __str__(self):
        return f"{self.transcriber} in {self.bank}"


STANDARD_TAGS = ["name", "time", "spelling"]


class Flag(models.Model):
    """One caller line plus what was actually said. One flag per line, enforced by the database."""

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="flags")
    line = models.OneToOneField("calls.Line", on_delete=models.CASCADE, related_name="flag")
    bank = models.ForeignKey(Bank, on_delete=models.SET_NULL, null=True, blank=True, related_name="flags")
    expected_text = models.TextField()
    # Tags stored as ",name,time," so one tag can be filtered with a plain `contains` on every database.
    tags = models.CharField(max_length=500, blank=True, default="")
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # When it joined its bank (made in it, or moved in; for a flag in no bank, when it was made or left): a flag
    # counts in its bank's window, and its scores in the per-day totals, from that day.
    joined_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        # A bank's flags newest in the bank first, ties by id: the turn table walks it in order, a page at a time.
        indexes = [models.Index(fields=["bank", "-joined_at", "-id"], name="flag_bank_newest")]

    def __str__(self):
        return f"Flag {self.pk} on line {self.line_id}"

    @property
    def tag_list(self) -> list[str]:
        return self.decode_tags(self.tags)

    @staticmethod
    def decode_tags(tags: str) -> list[str]:
        return [t for t in tags.split(",") if t]

    @staticmethod
    def encode_tags(tags) -> str:
        clean = []
        for tag in tags:
            tag = " ".join(str(tag).replace(",", " ").split()).lower()
            if tag and tag not in clean:
                clean.append(tag)
        return f",{','.join(clean)}," if clean else ""


class ControlLine(models.Model):
    """An unflagged caller line of the same call, sampled when the flag was made; expected = live text."""

    flag = models.ForeignKey(Flag, on_delete=models.CASCADE, related_name="controls")
    line = models.ForeignKey("calls.Line", on_delete=models.CASCADE, related_name="control_uses")
    expected_text = models.TextField()

    class Meta:
        ordering = ["flag", "id"]
        constraints = [models.UniqueConstraint(fields=["flag", "line"], name="control_once_per_flag")]

    def __str__(self):
        return f"Control line {self.line_id} of flag {self.flag_id}"


class Transcription(models.Model):
    """One transcriber's text for one line's audio; shared by every bank and item on that line."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    STATUSES = [(QUEUED, "Queued"), (RUNNING, "Running"), (DONE, "Done"), (FAILED, "Failed")]

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="transcriptions"
    )
    line = models.ForeignKey("calls.Line", on_delete=models.CASCADE, related_name="transcriptions")
    transcriber = models.ForeignKey(
        "transcribers.Transcriber", on_delete=models.PROTECT, related_name="transcriptions"
    )
    status = models.CharField(max_length=10, choices=STATUSES, default=QUEUED)
    text = models.TextField(blank=True, default="")
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    audio_seconds = models.FloatField(null=True, blank=True)
    cost = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    latency_s = models.FloatField(null=True, blank=True)
    not_before = models.DateTimeField(null=True, blank=True, help_text="Retry no earlier than this.")
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["line", "transcriber"], name="transcription_once_per_line"),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed"]),
                name="transcription_status_valid",
            ),
        ]
        indexes = [models.Index(fields=["organization", "status"])]

    def __str__(self):
        return f"{self.transcriber_id} on line {self.line_id}: {self.status}"


class Score(models.Model):
    """A scored item (a flag, or one of its control lines) for one transcriber.

    `flag` is always set (for a control, the flag it came with) so bank and window filters are one join.
    `source` tells a candidate's replayed text from the live transcript scored as stored.
    `failed` marks a transcriber that produced no text: an error, left out of the division; `failure` says
    why: "error" (none came back) or "no text" (a text with no words after normalization).
    `wer_units` is the line's WER in units of 1 / scoring.WER_SCALE, an integer summed exactly (see scoring)."""

    CANDIDATE = "candidate"
    LIVE = "live"
    SOURCES = [(CANDIDATE, "Candidate"), (LIVE, "Live")]
    ERROR = scoring.ERROR
    NO_TEXT = scoring.NO_TEXT
    FAILURES = [("", "Scored"), (ERROR, "Error"), (NO_TEXT, "No text")]

    flag = models.ForeignKey(Flag, on_delete=models.CASCADE, related_name="scores")
    control = models.ForeignKey(
        ControlLine, on_delete=models.CASCADE, null=True, blank=True, related_name="scores"
    )
    transcriber = models.ForeignKey(
        "transcribers.Transcriber", on_delete=models.PROTECT, related_name="scores"
    )
    source = models.CharField(max_length=10, choices=SOURCES, default=CANDIDATE)
    failed = models.BooleanField(default=False)
    failure = models.CharField(max_length=10, choices=FAILURES, blank=True, default="")
    hypothesis = models.TextField(blank=True)
    match = models.BooleanField(default=False)
    wer = models.FloatField(null=True, blank=True)
    wer_units = models.BigIntegerField(null=True, blank=True)
    case_or_punctuation_only = models.BooleanField(default=False)
    substitutions = models.PositiveIntegerField(default=0)
    deletions = models.PositiveIntegerField(default=0)
    insertions = models.PositiveIntegerField(default=0)
    reference_words = models.PositiveIntegerField(default=0)
    normalizer_version = models.CharField(max_length=20)
    scored_at = models.DateTimeField(auto_now=True)
    # The audio cost of the transcription scored (candidates; none for the live transcript or a failed one).
    cost = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    # On a live score (one per item): whether the bank's candidates disagree on the item, some matching and some
    # not among their scored texts. Kept by every score write and candidate change (aggregates.py).
    disagree = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["flag", "transcriber", "source"],
                condition=Q(control__isnull=True),
                name="score_once_per_flag",
            ),
            models.UniqueConstraint(
                fields=["control", "transcriber", "source"],
                condition=Q(control__isnull=False),
                name="score_once_per_control",
            ),
            models.CheckConstraint(condition=Q(source__in=["candidate", "live"]), name="score_source_valid"),
            models.CheckConstraint(
                condition=Q(failed=False, failure="") | Q(failed=True, failure__in=["error", "no text"]),
                name="score_failure_reason",
            ),
        ]
        # Covering indexes (PostgreSQL): the results page aggregates and pairs scores with index-only scans.
        indexes = [
            models.Index(
                fields=["flag"],
                include=["source", "transcriber", "failed", "match", "wer_units"],
                name="score_by_flag_covering",
            ),
            models.Index(
                fields=["transcriber", "source", "flag"],
                include=["control", "failed", "match"],
                name="score_by_transcriber_covering",
            ),
            # The items of a flag (its live scores), with whether candidates disagree: the turn table's rows.
            models.Index(
                fields=["flag", "control"],
                include=["disagree"],
                condition=Q(source="live"),
                name="score_items",
            ),
        ]

    def __str__(self):
        item = f"control {self.control_id}" if self.control_id else f"flag {self.flag_id}"
        return f"{self.transcriber_id} on {item}: {'match' if self.match else self.wer}"


# ---------------------------------------------------------------- per-day aggregates of a bank's scores
# Kept by the aggregates package in the transaction of every score write and removal, so a bank's results read a
# few rows per candidate and day instead of every score. The day is the one its flag joined the bank on
# (Flag.joined_at, in the organization's timezone). `manage.py rebuild_results` recomputes them from the scores and
# reports any drift.


class ScoreTotal(models.Model):
    """One transcriber's scores (live or candidate) on a bank's items of one day: what CandidateSummary sums."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    source = models.CharField(max_length=10, choices=Score.SOURCES)
    transcriber = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    scored = models.BigIntegerField(default=0)
    matches = models.BigIntegerField(default=0)
    failed = models.BigIntegerField(default=0)
    wer_units = models.BigIntegerField(default=0)  # the exact WER sum of the scored lines (scoring.WER_SCALE)
    cost_micros = models.BigIntegerField(default=0)  # audio cost in millionths of a dollar, summed exactly

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["bank", "day", "source", "transcriber"], name="score_total_once")
        ]

    def __str__(self):
        return f"{self.source} {self.transcriber_id} in bank {self.bank_id} on {self.day}"


class PairTotal(models.Model):
    """Two candidates on the bank's items of one day that both scored (neither failed): how many, and on how many
    only one of them matched. `low` is the lower transcriber id. What the paired test against the runner-up reads."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    low = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    high = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    both = models.BigIntegerField(default=0)
    low_only = models.BigIntegerField(default=0)
    high_only = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["bank", "day", "low", "high"], name="pair_total_once"),
            models.CheckConstraint(condition=Q(low__lt=models.F("high")), name="pair_total_ordered"),
        ]

    def __str__(self):
        return f"{self.low_id} / {self.high_id} in bank {self.bank_id} on {self.day}"


class TagTotal(models.Model):
    """One transcriber's scores on the flagged lines (not control lines) of a bank's flags of one day that carry
    `tag`: what the results page's per-tag table sums (the live rows also count the tag's flags)."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    tag = models.CharField(max_length=500)
    source = models.CharField(max_length=10, choices=Score.SOURCES)
    transcriber = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    scored = models.BigIntegerField(default=0)
    matches = models.BigIntegerField(default=0)
    failed = models.BigIntegerField(default=0)
    wer_units = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bank", "day", "tag", "source", "transcriber"], name="tag_total_once"
            )
        ]

    def __str__(self):
        return f"{self.source} {self.transcriber_id} on {self.tag!r} in bank {self.bank_id} on {self.day}"


class FlagTotal(models.Model):
    """The bank's flags of one day that carry `controls` control lines, and how many of their items (flags,
    controls) the bank's candidates disagree on: the control mix and the turn table's counts."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    controls = models.PositiveSmallIntegerField()
    flags = models.BigIntegerField(default=0)
    disagree_flags = models.BigIntegerField(default=0)
    disagree_controls = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["bank", "day", "controls"], name="flag_total_once")]

    def __str__(self):
        return f"{self.flags} flags with {self.controls} controls in bank {self.bank_id} on {self.day}"


# ---------------------------------------------------------------- the judge's pick and full-call runs


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
    judge_claimed_at = models.DateTimeField(null=True, blank=True)
    patterns_done = models.BooleanField(default=False)
    verdict = models.TextField(blank=True)
    judge_model = models.CharField(max_length=100, blank=True)
    judge_prompt_version = models.CharField(max_length=20, blank=True)
    judge_input_tokens = models.PositiveIntegerField(default=0)
    judge_output_tokens = models.PositiveIntegerField(default=0)
    judge_cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    # Label requests the judge was sent, and those the rule labeller spared it (each request labels up to a few
    # lines of one call: see pipeline.label_requests).
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
