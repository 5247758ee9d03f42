"""The queue's task entry points moved to transcriber_tests/work/tasks.py (issue 35): django-q2 finds a task by its
dotted path, so the minutely schedules made by 0002 and 0003 (0005 moved the second once before) are pointed at
the new module. Tasks already queued under the old paths still run: transcriber_tests/tasks.py,
transcriber_tests/runs/tasks.py and transcriber_tests/snapshots.py keep those names.

The figures a snapshot keeps are pickled, and a pickle names each class by its module: several of those classes
moved with the same change (lib/trust.py, lib/charts.py, lib/tradeoff.py, queries/snapshots.py), so the snapshots
kept so far are dropped. They are caches of what the scores say: a results key is computed again on its next read,
a trust key by the queue.

The judge step of a full-call run now claims its run on the queue core (oncore.queue), which counts each claim:
Run.judge_claims."""

from django.db import migrations, models

MOVED = [
    ("oncore-pump", "transcriber_tests.tasks.pump_all", "transcriber_tests.work.tasks.pump_all"),
    ("oncore-runs", "transcriber_tests.runs.tasks.advance_all", "transcriber_tests.work.tasks.advance_all"),
]


def forwards(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    for name, old, new in MOVED:
        Schedule.objects.filter(name=name, func=old).update(func=new)
    apps.get_model("transcriber_tests", "Snapshot").objects.all().delete()


def backwards(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    for name, old, new in MOVED:
        Schedule.objects.filter(name=name, func=new).update(func=old)
    apps.get_model("transcriber_tests", "Snapshot").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("django_q", "0018_task_success_index"),
        ("transcriber_tests", "0019_recount"),
    ]

    operations = [
        migrations.AddField(
            model_name="run", name="judge_claims", field=models.PositiveIntegerField(default=0)
        ),
        migrations.RunPython(forwards, backwards),
    ]
