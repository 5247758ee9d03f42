"""Per-day aggregates of every bank's scores (ScoreTotal, PairTotal, FlagTotal), each item's disagree mark, the
score's cost, and the index the turn table walks. Existing scores get their cost from their transcription; the
totals themselves are computed from the scores by 0009, once every kind of total has its table."""

import django.db.models.deletion
from django.db import migrations, models

# A candidate's score costs what its transcription of the item's line cost (the line of its control, else its flag's).
COSTS_SQL = """
UPDATE transcriber_tests_score SET cost = (
  SELECT t.cost FROM transcriber_tests_transcription t
  WHERE t.transcriber_id = transcriber_tests_score.transcriber_id AND t.status = 'done' AND t.line_id = COALESCE(
    (SELECT c.line_id FROM transcriber_tests_controlline c WHERE c.id = transcriber_tests_score.control_id),
    (SELECT f.line_id FROM transcriber_tests_flag f WHERE f.id = transcriber_tests_score.flag_id)))
WHERE source = 'candidate'
"""


class Migration(migrations.Migration):
    dependencies = [
        ("calls", "0003_call_counters_and_newest"),
        ("transcriber_tests", "0007_rule_labels_and_fair_judge"),
        ("transcribers", "0004_catalogue_2026_11"),
    ]

    operations = [
        migrations.CreateModel(
            name="FlagTotal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                ("controls", models.PositiveSmallIntegerField()),
                ("flags", models.BigIntegerField(default=0)),
                ("disagree_flags", models.BigIntegerField(default=0)),
                ("disagree_controls", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.CreateModel(
            name="PairTotal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                ("both", models.BigIntegerField(default=0)),
                ("low_only", models.BigIntegerField(default=0)),
                ("high_only", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.CreateModel(
            name="ScoreTotal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                (
                    "source",
                    models.CharField(choices=[("candidate", "Candidate"), ("live", "Live")], max_length=10),
                ),
                ("scored", models.BigIntegerField(default=0)),
                ("matches", models.BigIntegerField(default=0)),
                ("failed", models.BigIntegerField(default=0)),
                ("wer_units", models.BigIntegerField(default=0)),
                ("cost_micros", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RemoveIndex(
            model_name="flag",
            name="transcriber_bank_id_58888e_idx",
        ),
        migrations.AddField(
            model_name="score",
            name="cost",
            field=models.DecimalField(blank=True, decimal_places=6, max_digits=12, null=True),
        ),
        migrations.AddField(
            model_name="score",
            name="disagree",
            field=models.BooleanField(default=False),
        ),
        migrations.AddIndex(
            model_name="flag",
            index=models.Index(fields=["bank", "-created_at", "-id"], name="flag_bank_newest"),
        ),
        migrations.AddIndex(
            model_name="score",
            index=models.Index(
                condition=models.Q(("source", "live")),
                fields=["flag", "control"],
                include=("disagree",),
                name="score_items",
            ),
        ),
        migrations.AddField(
            model_name="flagtotal",
            name="bank",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="transcriber_tests.bank"
            ),
        ),
        migrations.AddField(
            model_name="pairtotal",
            name="bank",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="transcriber_tests.bank"
            ),
        ),
        migrations.AddField(
            model_name="pairtotal",
            name="high",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="transcribers.transcriber"
            ),
        ),
        migrations.AddField(
            model_name="pairtotal",
            name="low",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="transcribers.transcriber"
            ),
        ),
        migrations.AddField(
            model_name="scoretotal",
            name="bank",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="transcriber_tests.bank"
            ),
        ),
        migrations.AddField(
            model_name="scoretotal",
            name="transcriber",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="transcribers.transcriber"
            ),
        ),
        migrations.AddConstraint(
            model_name="flagtotal",
            constraint=models.UniqueConstraint(fields=("bank", "day", "controls"), name="flag_total_once"),
        ),
        migrations.AddConstraint(
            model_name="pairtotal",
            constraint=models.UniqueConstraint(fields=("bank", "day", "low", "high"), name="pair_total_once"),
        ),
        migrations.AddConstraint(
            model_name="pairtotal",
            constraint=models.CheckConstraint(
                condition=models.Q(("low__lt", models.F("high"))), name="pair_total_ordered"
            ),
        ),
        migrations.AddConstraint(
            model_name="scoretotal",
            constraint=models.UniqueConstraint(
                fields=("bank", "day", "source", "transcriber"), name="score_total_once"
            ),
        ),
        migrations.RunSQL(COSTS_SQL, migrations.RunSQL.noop),
    ]
