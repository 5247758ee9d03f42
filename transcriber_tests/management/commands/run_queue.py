from django.core.management.base import BaseCommand

from transcriber_tests.models import Transcription
from transcriber_tests.work import tasks


class Command(BaseCommand):
    help = "Run every queued line transcription in this process until the queue is idle (no worker needed)."

    def add_arguments(self, parser):
        parser.add_argument("--max-seconds", type=float, default=600.0)

    def handle(self, max_seconds, **options):
        ran = tasks.drain(max_seconds)
        left = Transcription.objects.filter(status__in=Transcription.ACTIVE).count()
        self.stdout.write(f"Ran {ran} transcriptions; {left} still waiting (retries wait for their backoff).")
