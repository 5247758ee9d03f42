"""The provider is checked against the registry its engine modules fill (Transcriber.clean, providers.py) instead
of the field's choices, so a new provider needs no migration of its own."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("transcribers", "0005_streaming"),
    ]

    operations = [
        migrations.AlterField(
            model_name="transcriber",
            name="provider",
            field=models.CharField(
                help_text="A registered provider (oncore/transcribers/providers.py), e.g. deepgram or faster_whisper.",
                max_length=32,
            ),
        ),
    ]
