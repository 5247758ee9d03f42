"""Flag.settled: False from a flag's request until the queue has done the rest of making it (actions.flags.settle).
Every flag before it was made whole in its request: settled."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("transcriber_tests", "0026_recount")]

    operations = [
        migrations.AddField(
            model_name="flag", name="settled", field=models.BooleanField(db_default=True, default=True)
        ),
        migrations.AddIndex(
            model_name="flag",
            index=models.Index(
                condition=models.Q(("settled", False)), fields=["created_at"], name="flag_unsettled"
            ),
        ),
    ]
