"""Per-day totals per tag (TagTotal), for the results page's table per error tag; then every total (0008's and
this one's), each item's disagree mark and each call's counters, computed from the scores, flags and lines with
the app's own code (aggregates.rebuild, as `manage.py rebuild_results` does). A later migration that adds a kind
of total builds them again in its turn, rather than this one."""

import django.db.models.deletion
from django.db import migrations, models


def build_totals(apps, schema_editor):
    """Every total from the scores (nothing to do on a new database)."""
    if not apps.get_model("transcriber_tests", "Flag").objects.exists():
        return
    from transcriber_tests import aggregates

    aggregates.rebuild()


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
        migrations.RunPython(build_totals, migrations.RunPython.noop),
    ]
