"""Each score keeps the entities of its item's expected text, each marked kept or lost in its text (Score.entities,
issue 37 item 2); 0023 fills those of the scores stored before."""

from django.db import migrations, models


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
    ]
