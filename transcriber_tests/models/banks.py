"""Banks and their candidates, flags and their control lines, line transcriptions and their scores."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from ..lib import scoring

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
    # Moved by every change to the bank's own settings (its fields; its candidates, their order and names: actions
    # scores.settings_changed): with its flags' items_version, the version of the call page's kept flag boxes.
    settings_version = models.PositiveBigIntegerField(default=0, db_default=0, editable=False)
    # Moved forward by every write that changes the bank's results: the version its figures' snapshots carry.
    results_changed_at = models.DateTimeField(default=timezone.now)
    # Moved forward by every judge's pick written on its items (work/picks.py): with results_changed_at, the version
    # of the turn table's rendered pages (queries/turns.py turn_page).
    picks_changed_at = models.DateTimeField(default=timezone.now)
    # The rebuild of its snapshots (queries/snapshots.py): wanted since (a results change, none built since), handed to a
    # queue worker at (a rebuild pending or running), and when the last one started (one per few seconds).
    snapshots_wanted_at = models.DateTimeField(null=True, blank=True)
    snapshots_dispatched_at = models.DateTimeField(null=True, blank=True)
    snapshots_built_at = models.DateTimeField(null=True, blank=True)

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
    # Made through the API: the organization key that made it (created_by is then empty). Who typed the expected
    # text, on the flag, in the API and in the list of expected texts to check.
    created_by_key = models.ForeignKey(
        "accounts.ApiKey", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # When it joined its bank (made in it, or moved in; for a flag in no bank, when it was made or left): a flag
    # counts in its bank's window, and its scores in the per-day totals, from that day.
    joined_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    # Its expected text is worth checking: two of its bank's candidates agree with each other (after
    # normalization) but not with it, or the live transcript and every candidate that scored the line do. Kept by
    # every score write and candidate change (aggregates.detail); False in no bank.
    check_expected = models.BooleanField(default=False)
    # False from a flag's request until the queue has done the rest of making it (actions.flags.settle): retired
    # the controls its line served, drawn its own, scored it and counted it in its bank. Until then it has no
    # controls or scores, and its bank's totals, redraws and line scores leave it out. True in the database too, so
    # a host still on the release before writes its flags settled, as it makes them whole.
    settled = models.BooleanField(default=True, db_default=True)
    # Moved by every write to its items (its controls, their scores and the judge's picks; its line's scores), under
    # its call's lock each takes first (aggregates.lock_call): with updated_at, the version of its box on the call
    # page (queries/boxes.py). A default in the database too, so a host still on the release before inserts flags.
    items_version = models.PositiveBigIntegerField(default=0, db_default=0, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # A bank's flags newest in the bank first, ties by id: the turn table walks it in order, a page at a time.
            models.Index(fields=["bank", "-joined_at", "-id"], name="flag_bank_newest"),
            # The few whose expected text is worth checking: the results page lists them.
            models.Index(
                fields=["bank", "-joined_at", "-id"],
                condition=Q(check_expected=True),
                name="flag_check_expected",
            ),
            # The few its request left to the queue (settled False): the schedule looks for those left behind.
            models.Index(fields=["created_at"], condition=Q(settled=False), name="flag_unsettled"),
        ]

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
    # Its expected text (the live transcript) is worth checking: every candidate contradicts it badly, or they
    # agree against it (aggregates.detail keeps the mark, as Flag.check_expected).
    check_expected = models.BooleanField(default=False)

    class Meta:
        ordering = ["flag", "id"]
        constraints = [models.UniqueConstraint(fields=["flag", "line"], name="control_once_per_flag")]
        indexes = [
            models.Index(fields=["flag"], condition=Q(check_expected=True), name="control_check_expected")
        ]

    def __str__(self):
        return f"Control line {self.line_id} of flag {self.flag_id}"


class Transcription(models.Model):
    """One transcriber's text for one line's audio; shared by every bank and item on that line."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    STATUSES = [(QUEUED, "Queued"), (RUNNING, "Running"), (DONE, "Done"), (FAILED, "Failed")]
    ACTIVE = (QUEUED, RUNNING)  # waiting for a worker, or with one
    FINISHED = (DONE, FAILED)

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
    # From sending the line to its final text; for a streaming replay, from the end of the caller's speech.
    latency_s = models.FloatField(null=True, blank=True)
    # How the line was replayed, as its transcriber's catalogue entry says, and a streaming replay's figures
    # (oncore.transcribers.engines.streaming.session.StreamFigures); all None for a batch replay.
    BATCH = "batch"
    STREAMING = "streaming"
    MODES = [(BATCH, "Batch"), (STREAMING, "Streaming")]
    mode = models.CharField(max_length=10, choices=MODES, default=BATCH)
    first_partial_s = models.FloatField(
        null=True, blank=True, help_text="From the first frame to the first text."
    )
    time_to_first_partial_s = models.FloatField(
        null=True,
        blank=True,
        help_text="From the start of the caller's speech to the first text after it (the head latency).",
    )
    partials = models.PositiveIntegerField(
        null=True, blank=True, help_text="Partial results that carried text."
    )
    partial_revisions = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Partials and finals that changed a word an earlier partial had shown.",
    )
    final_segments = models.PositiveIntegerField(
        null=True, blank=True, help_text="Final segments that carried text."
    )
    finals_revised = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Final segments that differ from the last partial shown for them.",
    )
    frames_sent = models.PositiveIntegerField(null=True, blank=True)
    frames_off_schedule = models.PositiveIntegerField(
        null=True, blank=True, help_text="Frames sent more than 5 ms from their schedule."
    )
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
    # Its latency (seconds from sending the line to its final text) and the audio seconds it was given, copied from
    # the transcription scored like its cost (candidates whose transcription came back; none for the live
    # transcript): the per-day latency totals count them.
    latency_s = models.FloatField(null=True, blank=True)
    audio_s = models.FloatField(null=True, blank=True)
    # The alignment WER counts, as its confusion pairs (alignment.encode_confusions: " s:for>four d:the> "), and a
    # digest of the normalized text (alignment.text_key), so transcribers that agree are found with an equality.
    confusions = models.TextField(blank=True, default="")
    text_key = models.BigIntegerField(null=True, blank=True)
    # Its words aligned against the expected text (alignment.encode_steps), worked out when it is written, as its
    # WER is, so the turn table, a flag's results, the API and the CSV files read it and never align texts; "" for
    # a failed score.
    alignment = models.TextField(blank=True, default="")
    # Its turn-table CSV cells (shapes.turns.score_csv), encoded when it is written: the CSV joins them as they are.
    csv_cells = models.TextField(blank=True, default="")
    # The entities of its item's expected text (names, times, dates, numbers, ids), each marked kept or lost in its
    # text (lib.entities.encode of benchmark.selectors.entity_marks), worked out when it is written; "" for a failed
    # score. A bank's entity accuracy counts them (queries/entities.py); the turn table marks them.
    entities = models.TextField(blank=True, default="")
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
