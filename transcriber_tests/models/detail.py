"""Per-day totals of what a candidate gets wrong and of how its lines cluster in calls, kept like the others
(aggregates/detail.py, in the transaction of every score write) so the results page reads a few rows per
candidate and day whatever the bank's size:

- ConfusionTotal: each candidate's confusion pairs (a substitution "for → four", a deletion, an insertion) on
  the bank's items of the day, from the alignment WER counts (lib/alignment.py, stored on each score).
- CallTotal and CallPairTotal: the calls behind the accuracy, for the call-level bootstrap (lib/trust.py). A
  call here is a call's flags that joined the bank on one day, with their controls; CallTotal counts the calls
  on which a candidate scored `scored` items and matched `matches` of them, CallPairTotal the calls on which two
  candidates both scored `both` items and only one of them matched `low_only` / `high_only` of them."""

from django.db import models
from django.db.models import Q

from .banks import Bank


class ConfusionTotal(models.Model):
    """How often one candidate made one confusion on a bank's items of one day. `kind` is "s" (substitution),
    "d" (deletion: no heard word) or "i" (insertion: no expected word); the words are normalized."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    transcriber = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(
        max_length=1, choices=[("s", "Substitution"), ("d", "Deletion"), ("i", "Insertion")]
    )
    expected_word = models.CharField(max_length=64, blank=True)
    heard_word = models.CharField(max_length=64, blank=True)
    n = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bank", "day", "transcriber", "kind", "expected_word", "heard_word"],
                name="confusion_total_once",
            ),
            models.CheckConstraint(condition=Q(kind__in=["s", "d", "i"]), name="confusion_total_kind"),
        ]

    def __str__(self):
        return f"{self.kind} {self.expected_word!r}>{self.heard_word!r} x{self.n} of {self.transcriber_id}"


class CallTotal(models.Model):
    """The calls of a bank's day on which one candidate scored `scored` items (at least one) and matched
    `matches` of them: `calls` of them."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    transcriber = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    scored = models.PositiveIntegerField()
    matches = models.PositiveIntegerField()
    calls = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bank", "day", "transcriber", "scored", "matches"], name="call_total_once"
            ),
        ]

    def __str__(self):
        return f"{self.calls} calls of {self.transcriber_id} at {self.matches}/{self.scored} on {self.day}"


class CallPairTotal(models.Model):
    """The calls of a bank's day on which two candidates (`low` the lower transcriber id) both scored `both`
    items (at least one), only `low` matched `low_only` of them and only `high` matched `high_only`."""

    bank = models.ForeignKey(Bank, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    low = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    high = models.ForeignKey("transcribers.Transcriber", on_delete=models.CASCADE, related_name="+")
    both = models.PositiveIntegerField()
    low_only = models.PositiveIntegerField()
    high_only = models.PositiveIntegerField()
    calls = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bank", "day", "low", "high", "both", "low_only", "high_only"],
                name="call_pair_total_once",
            ),
            models.CheckConstraint(condition=Q(low__lt=models.F("high")), name="call_pair_total_ordered"),
        ]

    def __str__(self):
        return f"{self.calls} calls of {self.low_id} / {self.high_id} on {self.day}"
