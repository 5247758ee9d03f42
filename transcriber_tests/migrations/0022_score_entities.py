"""Each score keeps the entities of its item's expected text, each marked kept or lost in its text (Score.entities,
issue 37 item 2): the field, then the scores stored before it filled with the app's own code (scores.backfill_entities;
this is the latest migration, so the code and the tables agree), and every bank's results marked changed, so their
snapshots are computed again with the entity figures."""

from django.db import migrations, models
from django.utils import timezone


def fill(apps, schema_editor):
    if not apps.get_model("transcriber_tests", "Score").objects.exists():
        return  # nothing to fill on a new database
    from transcriber_tests.actions import scores

    scores.backfill_entities()
    apps.get_model("transcriber_tests", "Bank").objects.update(results_changed_at=timezone.now())


class Migration(migrations.Migration):
    dependencies = [
        ("transcriber_tests", "0021_stream_head"),
    ]

    operations = [
        migrations.AddField(
            model_name="score",
            name="entities",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
