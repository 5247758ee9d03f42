from django.db import models
from django.db.models import Q

from .recording import recording_setting, why_not_recorded


class Assistant(models.Model):
    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="assistants")
    name = models.CharField(max_length=200)
    instructions = models.TextField(blank=True)
    transcriber = models.ForeignKey(
        "transcribers.Transcriber", on_delete=models.PROTECT, null=True, blank=True, related_name="assistants"
    )
    # Recording: the assistant records its calls from `records_from` on (null: it records none), until
    # `records_until` when recording was turned off again (null: it still records). One period, the latest:
    # turning recording on again starts a new one. A call keeps what it was (Call.recorded, set at import);
    # the setting decides it only for calls imported without their own, and says why a call was not recorded.
    records_from = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Recording was turned on then; empty: the assistant records no calls.",
    )
    records_until = models.DateTimeField(
        null=True, blank=True, help_text="Recording was turned off again then; empty: it still records."
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(records_until__isnull=True)
                | Q(records_from__isnull=False, records_until__gt=models.F("records_from")),
                name="assistant_records_until_after_from",
            )
        ]

    def __str__(self):
        return self.name

    def records_at(self, moment) -> bool:
        """Whether the assistant was recording calls at that moment."""
        return (
            self.records_from is not None
            and self.records_from <= moment
            and (self.records_until is None or moment < self.records_until)
        )


class Call(models.Model):
    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="calls")
    assistant = models.ForeignKey(
        Assistant, on_delete=models.SET_NULL, null=True, blank=True, related_name="calls"
    )
    external_id = models.CharField(
        max_length=200, blank=True, help_text="The caller system's id, for re-imports."
    )
    started_at = models.DateTimeField()
    recording = models.FileField(upload_to="recordings/%Y/%m/", blank=True)
    recorded = models.BooleanField(default=False)
    live_transcriber = models.ForeignKey(
        "transcribers.Transcriber",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="live_calls",
        help_text="The transcriber this call actually ran on.",
    )
    live_transcriber_name = models.CharField(
        max_length=200,
        blank=True,
        help_text="The live transcriber's name, for older calls where only it is known.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Counters kept by the writes that change them (the import sets n_lines; flagging and deleting a flag move
    # n_flags, in the same transaction), so the calls list reads them instead of counting every call's lines.
    # `manage.py rebuild_results` recounts them.
    n_lines = models.PositiveIntegerField(default=0, help_text="Lines of the call.")
    n_flags = models.PositiveIntegerField(default=0, help_text="Flagged lines of the call.")
    # Moved by every write to the flags on its lines and their items (controls, scores, judge's picks): the UPDATE
    # that takes the call's lock each takes first (transcriber_tests aggregates.lock_call, work/picks.py). (Each
    # flag's box is kept by its own flag's items_version.) A default in the database too, so a host still on the
    # release before inserts calls.
    flags_version = models.PositiveBigIntegerField(default=0, db_default=0, editable=False)

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "external_id"], condition=~Q(external_id=""), name="call_external_id_unique"
            )
        ]
        # Newest first, with the id as tie-break, for keyset pages: over every tenant (an organization's calls,
        # walked in order and filtered by tenant), per tenant, and the flagged calls alone.
        indexes = [
            models.Index(fields=["-started_at", "-id"], name="call_newest"),
            models.Index(fields=["tenant", "-started_at", "-id"], name="call_tenant_newest"),
            models.Index(
                fields=["-started_at", "-id"], condition=Q(n_flags__gt=0), name="call_flagged_newest"
            ),
        ]

    def __str__(self):
        return f"Call {self.pk} ({self.started_at:%Y-%m-%d %H:%M})"

    @property
    def not_recorded_reason(self) -> str | None:
        """Why the call has no recording to replay (its assistant's recording setting), or None."""
        return why_not_recorded(self)

    @property
    def assistant_recording(self) -> str:
        """Its assistant's recording setting in words ("it records calls from 14 March 2026 on"), or "" (no
        assistant, or one that never had recording turned on)."""
        if self.assistant is None:
            return ""
        return recording_setting(self.assistant, self.tenant.organization.zone, near=self.started_at)

    @property
    def live_transcriber_label(self) -> str:
        if self.live_transcriber_id:
            return str(self.live_transcriber)
        return self.live_transcriber_name or "unknown"


# No timing beyond this many seconds is stored (a database-level backstop: import checks timing against the
# recording's duration). On PostgreSQL, NaN compares above every number, so this also keeps NaN and ±Infinity
# out, which JSON cannot carry.
MAX_TIMING_S = 1_000_000.0


class Line(models.Model):
    CALLER = "caller"
    ASSISTANT = "assistant"
    SPEAKERS = [(CALLER, "Caller"), (ASSISTANT, "Assistant")]

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="lines")
    position = models.PositiveIntegerField()
    speaker = models.CharField(max_length=10, choices=SPEAKERS)
    text = models.TextField(blank=True, help_text="The live transcript as stored.")
    start_s = models.FloatField(null=True, blank=True)
    end_s = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["call", "position"]
        constraints = [
            models.UniqueConstraint(fields=["call", "position"], name="line_position_unique"),
            models.CheckConstraint(
                condition=Q(speaker__in=["caller", "assistant"]), name="line_speaker_valid"
            ),
            models.CheckConstraint(
                condition=Q(start_s__isnull=True) | Q(end_s__isnull=True) | Q(end_s__gt=models.F("start_s")),
                name="line_end_after_start",
            ),
            models.CheckConstraint(
                condition=(Q(start_s__isnull=True) | Q(start_s__gte=0))
                & (Q(end_s__isnull=True) | Q(end_s__lte=MAX_TIMING_S)),
                name="line_timing_in_range",
            ),
        ]

    def __str__(self):
        return f"{self.call_id}#{self.position} {self.speaker}: {self.text[:40]}"

    @property
    def has_timing(self) -> bool:
        return self.start_s is not None and self.end_s is not None

    @property
    def duration_s(self) -> float | None:
        return (self.end_s - self.start_s) if self.has_timing else None
