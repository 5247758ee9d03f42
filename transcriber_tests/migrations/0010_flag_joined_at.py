"""A flag counts in its bank from when it joined the bank (Flag.joined_at), not from when it was made. Flags made
before this joined their bank, as far as anything recorded says, when they were made: joined_at = created_at, so
every per-day total stays where it was."""

import django.utils.timezone
from django.conf import settings
from django.db import migrations, models
from django.db.models import F


def joined_when_made(apps, schema_editor):
    apps.get_model("transcriber_tests", "Flag").objects.update(joined_at=F("created_at"))


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_organization_timezone"),
        ("calls", "0003_call_counters_and_newest"),
        ("transcriber_tests", "0009_tag_totals"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(model_name="flag", name="flag_bank_newest"),
        migrations.AddField(
            model_name="flag", name="joined_at", field=models.DateTimeField(default=django.utils.timezone.now)
        ),
        migrations.RunPython(joined_when_made, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="flag",
            index=models.Index(fields=["bank", "-joined_at", "-id"], name="flag_bank_newest"),
        ),
    ]
