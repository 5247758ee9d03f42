"""A control line that became a flag stops being a control (flagging now retires it, actions._retire_controls):
banks made before kept such lines as controls scored against their wrong live text. Each is retired, with its
scores, and a replacement drawn from the same call when one is left, with the app's own code (as 0009 builds
the totals)."""

from django.db import migrations


def retire(apps, schema_editor):
    ControlLine = apps.get_model("transcriber_tests", "ControlLine")
    if not ControlLine.objects.filter(line__flag__isnull=False).exists():
        return
    from transcriber_tests import actions

    actions.retire_flagged_controls()


class Migration(migrations.Migration):
    dependencies = [("transcriber_tests", "0009_tag_totals")]

    operations = [migrations.RunPython(retire, migrations.RunPython.noop)]
