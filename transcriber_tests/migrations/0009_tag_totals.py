"""Per-day totals per tag (TagTotal), for the results page's table per error tag. Every total (0008's and this
one's) is built from the scores by the latest migration (0012_recount), which runs the app's own code once the
tables are as that code expects them; this one built them itself when it was the latest."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("transcriber_tests", "0008_score_totals"),
        ("transcribers", "0004_catalogue_2026_11"),
    ]

    operations = [
        migrations.CreateModel(
            name="TagTotal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                ("tag", models.CharField(max_length=500)),
                (
                    "source",
                    models.CharField(choices=[("candidate", "Candidate"), ("live", "Live")], max_length=10),
                ),
                ("scored", models.BigIntegerField(default=0)),
                ("matches", models.BigIntegerField(default=0)),
                ("failed", models.BigIntegerField(default=0)),
                ("wer_units", models.BigIntegerField(default=0)),
                (
                    "bank",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="transcriber_tests.bank",
                    ),
                ),
                (
                    "transcriber",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="transcribers.transcriber",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("bank", "day", "tag", "source", "transcriber"), name="tag_total_once"
                    )
                ],
            },
        ),
    ]
