"""Exact scores: the bank threshold as a Decimal; on every score, why it failed ("error" or "no text") and its
WER as an integer number of 1 / WER_SCALE (see transcriber_tests/lib/scoring.py). Existing scores are backfilled:
failed ones get "error", a scored text with no words becomes a "no text" failure, and every scored line gets
its wer_units, computed in SQL from its integer counts."""

from decimal import Decimal

from django.db import migrations, models
from django.db.models import BigIntegerField, ExpressionWrapper, F

WER_SCALE = 5_354_228_880  # transcriber_tests.scoring.WER_SCALE when this migration was written
BATCH = 500


def backfill(apps, schema_editor):
    from transcriber_tests.lib.scoring import has_words  # pure: the normalizer this migration runs with

    Score = apps.get_model("transcriber_tests", "Score")
    Score.objects.filter(failed=True).update(failure="error")
    # A text with no words scores S = I = 0 and D = every expected word; only those can be "no text".
    maybe_empty = Score.objects.filter(failed=False, match=False, substitutions=0, insertions=0)
    no_text = [
        pk for pk, text in maybe_empty.values_list("pk", "hypothesis").iterator() if not has_words(text)
    ]
    for start in range(0, len(no_text), BATCH):
        Score.objects.filter(pk__in=no_text[start : start + BATCH]).update(
            failed=True,
            failure="no text",
            match=False,
            wer=None,
            case_or_punctuation_only=False,
            substitutions=0,
            deletions=0,
            insertions=0,
            reference_words=0,
        )
    errors = F("substitutions") + F("deletions") + F("insertions")
    Score.objects.filter(failed=False, reference_words__gt=0).update(
        wer_units=ExpressionWrapper(
            (errors * (2 * WER_SCALE) + F("reference_words")) / (F("reference_words") * 2),
            output_field=BigIntegerField(),
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("transcriber_tests", "0005_runs_tasks_path"),
        ("transcribers", "0002_seed_catalogue"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="score", name="score_by_flag_covering"),
        migrations.AddField(
            model_name="score",
            name="failure",
            field=models.CharField(
                blank=True,
                choices=[("", "Scored"), ("error", "Error"), ("no text", "No text")],
                default="",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="score", name="wer_units", field=models.BigIntegerField(blank=True, null=True)
        ),
        migrations.AlterField(
            model_name="bank",
            name="threshold",
            field=models.DecimalField(
                decimal_places=4,
                default=Decimal("0.6"),
                help_text="Accuracy marker, a fraction 0..1.",
                max_digits=5,
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="score",
            index=models.Index(
                fields=["flag"],
                include=("source", "transcriber", "failed", "match", "wer_units"),
                name="score_by_flag_covering",
            ),
        ),
        migrations.AddConstraint(
            model_name="score",
            constraint=models.CheckConstraint(
                condition=models.Q(models.Q(("failed", False), ("failure", "")))
                | models.Q(("failed", True), ("failure__in", ["error", "no text"])),
                name="score_failure_reason",
            ),
        ),
    ]
