"""The per-day totals of every bank's scores. Kept by the aggregates package in the transaction of every score write
and removal, so a bank's results read a few rows per candidate and day instead of every score. The day is the
one its flag joined the bank on (Flag.joined_at, in the organization's timezone). `manage.py rebuild_results`
recomputes them from the scores and reports any drift."""

from django.db import models
from django.db.models import Q

from .banks import Bank, Score

MICROS = 1_000_000  # costs are summed in millionths of a dollar (Score.cost has six decimal places): exact


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
    # Of `scored` and `matches`, those on control lines (the rest are on flagged lines): where a lead comes from.
    control_scored = models.BigIntegerField(default=0)
    control_matches = models.BigIntegerField(default=0)

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


# Per tenant and assistant (the calls of a bank's items): plain ids, not foreign keys, so a row outlives neither
# its bank nor a renamed assistant; `assistant_id` 0 is a call with no assistant. `manage.py rebuild_results`
# recomputes them (after an assistant was deleted, say: its calls then have none).


class GroupTotal(models.Model):
    """ScoreTotal split by the tenant and assistant of the items' calls: the results' filter by tenant or
    assistant, and the per-tenant and per-assistant tables."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    tenant_id = models.BigIntegerField()
    assistant_id = models.BigIntegerField()
    source = models.CharField(max_length=10, choices=Score.SOURCES)
    transcriber = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    scored = models.BigIntegerField(default=0)
    matches = models.BigIntegerField(default=0)
    failed = models.BigIntegerField(default=0)
    wer_units = models.BigIntegerField(default=0)
    cost_micros = models.BigIntegerField(default=0)
    control_scored = models.BigIntegerField(default=0)  # as ScoreTotal's
    control_matches = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bank", "day", "tenant_id", "assistant_id", "source", "transcriber"],
                name="group_total_once",
            )
        ]

    def __str__(self):
        return f"{self.source} {self.transcriber_id} of tenant {self.tenant_id} in bank {self.bank_id} on {self.day}"


class GroupPairTotal(models.Model):
    """PairTotal split by the tenant and assistant of the items' calls: the lead test under the results' filter."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    tenant_id = models.BigIntegerField()
    assistant_id = models.BigIntegerField()
    low = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    high = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    both = models.BigIntegerField(default=0)
    low_only = models.BigIntegerField(default=0)
    high_only = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bank", "day", "tenant_id", "assistant_id", "low", "high"],
                name="group_pair_total_once",
            ),
            models.CheckConstraint(condition=Q(low__lt=models.F("high")), name="group_pair_total_ordered"),
        ]

    def __str__(self):
        return (
            f"{self.low_id} / {self.high_id} of tenant {self.tenant_id} in bank {self.bank_id} on {self.day}"
        )


class LatencyTotal(models.Model):
    """One candidate's latencies on a bank's items of one day, counted in the fixed log-spaced buckets of
    lib/tradeoff.py (`bucket`): how many lines, and their latencies and audio seconds summed in microseconds. The
    window's p50 and p95 are read from the merged counts (within lib/tradeoff.py RESOLUTION), the real-time factor from
    the sums. `tenant_id` 0 (and `assistant_id` 0) counts every tenant's calls; the other rows split them by the
    tenant and assistant of the items' calls."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    tenant_id = models.BigIntegerField()
    assistant_id = models.BigIntegerField()
    transcriber = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    bucket = models.PositiveSmallIntegerField()
    lines = models.BigIntegerField(default=0)
    latency_us = models.BigIntegerField(default=0)
    audio_us = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bank", "day", "tenant_id", "assistant_id", "transcriber", "bucket"],
                name="latency_total_once",
            )
        ]

    def __str__(self):
        return f"{self.lines} lines of {self.transcriber_id} in bucket {self.bucket} of bank {self.bank_id} on {self.day}"


class EntityTotal(models.Model):
    """One candidate's entities (lib.entities: names, times, dates, numbers, ids of what was said) on a bank's scored
    items of one day: per `category`, how many its texts kept (`right`) of how many were said (`n`), on how many
    `lines`; `category` "" counts every category (its `lines` are the lines with any entity). `tenant_id` 0 (and
    `assistant_id` 0) counts every tenant's calls, the other rows split them by the tenant and assistant of the
    items' calls, as LatencyTotal's. What a bank's entity accuracy (queries.entities) sums."""

    EVERY = ""  # the category of the rows that count every category

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    tenant_id = models.BigIntegerField()
    assistant_id = models.BigIntegerField()
    transcriber = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    category = models.CharField(max_length=20, blank=True)
    lines = models.BigIntegerField(default=0)
    right = models.BigIntegerField(default=0)
    n = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bank", "day", "tenant_id", "assistant_id", "transcriber", "category"],
                name="entity_total_once",
            )
        ]

    def __str__(self):
        return f"{self.right} of {self.n} {self.category or 'entities'} of {self.transcriber_id} in bank {self.bank_id} on {self.day}"
