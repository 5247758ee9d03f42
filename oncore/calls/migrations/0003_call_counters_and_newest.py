"""Stored line and flag counters on each call (the flag counters are set by transcriber_tests 0008), and the
newest-first indexes the calls list walks."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("calls", "0002_line_timing_in_range"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="call",
            name="calls_call_tenant__984a94_idx",
        ),
        migrations.AddField(
            model_name="call",
            name="n_flags",
            field=models.PositiveIntegerField(default=0, help_text="Flagged lines of the call."),
        ),
        migrations.AddField(
            model_name="call",
            name="n_lines",
            field=models.PositiveIntegerField(default=0, help_text="Lines of the call."),
        ),
        migrations.AddIndex(
            model_name="call",
            index=models.Index(fields=["-started_at", "-id"], name="call_newest"),
        ),
        migrations.AddIndex(
            model_name="call",
            index=models.Index(fields=["tenant", "-started_at", "-id"], name="call_tenant_newest"),
        ),
        migrations.AddIndex(
            model_name="call",
            index=models.Index(
                condition=models.Q(("n_flags__gt", 0)),
                fields=["-started_at", "-id"],
                name="call_flagged_newest",
            ),
        ),
        migrations.RunSQL(
            "UPDATE calls_call SET n_lines = (SELECT COUNT(*) FROM calls_line WHERE calls_line.call_id = calls_call.id)",
            migrations.RunSQL.noop,
        ),
    ]
