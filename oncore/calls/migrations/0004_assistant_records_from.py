"""An assistant's recording setting: it records calls from `records_from` on (null: none), until `records_until`
(null: it still records). Existing assistants record none until it is set; their calls keep what they were."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("calls", "0003_call_counters_and_newest"),
    ]

    operations = [
        migrations.AddField(
            model_name="assistant",
            name="records_from",
            field=models.DateTimeField(
                blank=True,
                help_text="Recording was turned on then; empty: the assistant records no calls.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="assistant",
            name="records_until",
            field=models.DateTimeField(
                blank=True,
                help_text="Recording was turned off again then; empty: it still records.",
                null=True,
            ),
        ),
        migrations.AddConstraint(
            model_name="assistant",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("records_until__isnull", True),
                    models.Q(
                        ("records_from__isnull", False), ("records_until__gt", models.F("records_from"))
                    ),
                    _connector="OR",
                ),
                name="assistant_records_until_after_from",
            ),
        ),
    ]
