"""Latency and cost beside accuracy, per tenant and assistant (issue 27): each candidate score carries its
transcription's latency and audio seconds (copied here from the transcriptions already done, as new scores copy
them), and three per-day totals split by tenant and assistant, with the candidates' latencies in fixed buckets.
The recount after this migration fills them (aggregates.rebuild)."""

import django.db.models.deletion
from django.db import migrations, models


def copy_timing(apps, schema_editor):
    """Every candidate score takes the latency and audio seconds of the transcription it scored, where that came
    back (done): one statement per column, on PostgreSQL and SQLite alike."""
    Score = apps.get_model("transcriber_tests", "Score")
    Transcription = apps.get_model("transcriber_tests", "Transcription")
    Flag = apps.get_model("transcriber_tests", "Flag")
    ControlLine = apps.get_model("transcriber_tests", "ControlLine")
    q = schema_editor.connection.ops.quote_name
    score, t = q(Score._meta.db_table), q(Transcription._meta.db_table)
    flag, control = q(Flag._meta.db_table), q(ControlLine._meta.db_table)
    line = (
        f"COALESCE((SELECT c.line_id FROM {control} c WHERE c.id = {score}.control_id), "
        f"(SELECT f.line_id FROM {flag} f WHERE f.id = {score}.flag_id))"
    )
    for column, source in (("latency_s", "latency_s"), ("audio_s", "audio_seconds")):
        schema_editor.execute(
            f"UPDATE {score} SET {q(column)} = (SELECT tr.{q(source)} FROM {t} tr "
            f"WHERE tr.transcriber_id = {score}.transcriber_id AND tr.status = 'done' AND tr.line_id = {line}) "
            f"WHERE {score}.source = 'candidate'"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("transcriber_tests", "0011_review_correction"),
        ("transcribers", "0004_catalogue_2026_11"),
    ]

    operations = [
        migrations.AddField(
            model_name="score",
            name="audio_s",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="score",
            name="latency_s",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name="GroupPairTotal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                ("tenant_id", models.BigIntegerField()),
                ("assistant_id", models.BigIntegerField()),
                ("both", models.BigIntegerField(default=0)),
                ("low_only", models.BigIntegerField(default=0)),
                ("high_only", models.BigIntegerField(default=0)),
                (
                    "bank",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="transcriber_tests.bank",
                    ),
                ),
                (
                    "high",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="transcribers.transcriber",
                    ),
                ),
                (
                    "low",
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
                        fields=("bank", "day", "tenant_id", "assistant_id", "low", "high"),
                        name="group_pair_total_once",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("low__lt", models.F("high"))), name="group_pair_total_ordered"
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="GroupTotal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                ("tenant_id", models.BigIntegerField()),
                ("assistant_id", models.BigIntegerField()),
                (
                    "source",
                    models.CharField(choices=[("candidate", "Candidate"), ("live", "Live")], max_length=10),
                ),
                ("scored", models.BigIntegerField(default=0)),
                ("matches", models.BigIntegerField(default=0)),
                ("failed", models.BigIntegerField(default=0)),
                ("wer_units", models.BigIntegerField(default=0)),
                ("cost_micros", models.BigIntegerField(default=0)),
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
                        fields=("bank", "day", "tenant_id", "assistant_id", "source", "transcriber"),
                        name="group_total_once",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="LatencyTotal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                ("tenant_id", models.BigIntegerField()),
                ("assistant_id", models.BigIntegerField()),
                ("bucket", models.PositiveSmallIntegerField()),
                ("lines", models.BigIntegerField(default=0)),
                ("latency_us", models.BigIntegerField(default=0)),
                ("audio_us", models.BigIntegerField(default=0)),
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
                        fields=("bank", "day", "tenant_id", "assistant_id", "transcriber", "bucket"),
                        name="latency_total_once",
                    )
                ],
            },
        ),
        migrations.RunPython(copy_timing, migrations.RunPython.noop),
    ]
