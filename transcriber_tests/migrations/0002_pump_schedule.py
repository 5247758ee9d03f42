from django.db import migrations


def create_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name="oncore-pump",
        defaults={
            "func": "transcriber_tests.tasks.pump_all",
            "schedule_type": "I",
            "minutes": 1,
            "repeats": -1,
        },
    )


def drop_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="oncore-pump").delete()


class Migration(migrations.Migration):
    """Every minute: dispatch retries whose backoff has passed and recover rows whose worker died."""

    dependencies = [("transcriber_tests", "0001_initial"), ("django_q", "0018_task_success_index")]
    operations = [migrations.RunPython(create_schedule, drop_schedule)]
