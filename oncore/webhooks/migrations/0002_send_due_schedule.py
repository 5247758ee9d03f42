from django.db import migrations


def create_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name="oncore-webhooks",
        defaults={
            "func": "oncore.webhooks.tasks.send_due",
            "schedule_type": "I",
            "minutes": 1,
            "repeats": -1,
        },
    )


def drop_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="oncore-webhooks").delete()


class Migration(migrations.Migration):
    """Every minute: send the deliveries whose backoff has passed, and recover those whose sender died."""

    dependencies = [("webhooks", "0001_initial"), ("django_q", "0018_task_success_index")]
    operations = [migrations.RunPython(create_schedule, drop_schedule)]
