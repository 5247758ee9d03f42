from django.core.management.base import BaseCommand

from transcriber_tests.models import Run
from transcriber_tests.work import tasks as run_tasks


class Command(BaseCommand):
    help = (
        "Drive queued and running full-call runs to their end in this process, line transcriptions included "
        "(no worker needed): for demos and machines without a queue cluster."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "run", type=int, nargs="*", help="Run id(s); default: every queued or running run."
        )
        parser.add_argument("--max-seconds", type=float, default=600.0)

    def handle(self, run, max_seconds, **options):
        ids = run or list(
            Run.objects.filter(status__in=Run.ACTIVE).order_by("id").values_list("pk", flat=True)
        )
        if not ids:
            self.stdout.write("No queued or running runs.")
        for run_id in ids:
            status = run_tasks.drain_run(run_id, max_seconds)
            self.stdout.write(f"Run {run_id}: {status}.")
