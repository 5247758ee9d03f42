from django.core.management.base import BaseCommand, CommandError

from oncore import llm
from transcriber_tests.models import Bank
from transcriber_tests.work import picks


class Command(BaseCommand):
    help = (
        "Ask the judge to pick among matching versions on every flag and control line of a bank where two or "
        "more candidates matched but wrote the line differently. Items already picked cost nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("bank", type=int, nargs="+", help="Bank id(s).")

    def handle(self, bank, **options):
        if not llm.judge_configured():
            raise CommandError("judge not configured: set ANTHROPIC_API_KEY to fill the judge's picks.")
        for bank_id in bank:
            found = Bank.objects.filter(pk=bank_id).first()
            if found is None:
                raise CommandError(f"No bank {bank_id}.")
            result = picks.fill_picks(found)
            self.stdout.write(
                f"{found.name}: {result.items} items, {result.picked} picked, "
                f"{result.failed} where the judge failed."
            )
