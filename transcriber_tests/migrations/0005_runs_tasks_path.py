"""The full-call run tasks moved from transcriber_tests/run_tasks.py to transcriber_tests/runs/tasks.py: the
schedule made by 0003 names them by their dotted path."""

from django.db import migrations

OLD = "transcriber_tests.run_tasks.advance_all"
NEW = "transcriber_tests.runs.tasks.advance_all"


def forwards(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="oncore-runs", func=OLD).update(func=NEW)


def backwards(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="oncore-runs", func=NEW).update(func=OLD)


class Migration(migrations.Migration):
    dependencies = [
        ("django_q", "0018_task_success_index"),
        ("transcriber_tests", "0004_bank_results_changed_at"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
