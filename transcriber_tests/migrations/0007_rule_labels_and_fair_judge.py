from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("transcriber_tests", "0006_exact_scores")]

    operations = [
        migrations.AddField(
            model_name="run",
            name="judge_label_requests",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="run",
            name="judge_calls_saved",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AlterField(
            model_name="runline",
            name="label_source",
            field=models.CharField(
                blank=True,
                choices=[
                    ("flag", "Scored against the flag"),
                    ("judge", "Judge"),
                    ("rule", "Rule (same after canonicalization)"),
                ],
                max_length=8,
            ),
        ),
        migrations.AddField(
            model_name="runline",
            name="live_shown_first",
            field=models.BooleanField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="runline",
            name="label_prompt_version",
            field=models.CharField(blank=True, help_text="Prompt (or rule) version.", max_length=40),
        ),
        migrations.AddField(
            model_name="runline",
            name="label_error",
            field=models.TextField(blank=True, help_text="Why the judge left this line unlabelled."),
        ),
        migrations.AddField(
            model_name="runline",
            name="human_label",
            field=models.CharField(
                blank=True,
                choices=[
                    ("candidate_right", "Candidate right"),
                    ("live_right", "Live right"),
                    ("same_meaning", "Same meaning"),
                    ("both_wrong", "Both wrong"),
                ],
                max_length=16,
            ),
        ),
    ]
