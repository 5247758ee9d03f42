"""manage.py rebuild_results [--bank ID ...] [--check]: recompute the banks' per-day totals, the items' disagree
marks and the calls' line and flag counters from the scores, flags and lines, and say what had drifted."""

import sys

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from transcriber_tests import aggregates
from transcriber_tests.models import Bank

TABLES = {
    "score": "score totals",
    "pair": "pair totals",
    "flag": "flag totals",
    "tag": "tag totals",
    "group": "tenant and assistant totals",
    "group_pair": "tenant and assistant pair totals",
    "latency": "latency totals",
    "entity": "entity totals",
}


class Command(BaseCommand):
    help = (
        "Recompute every bank's per-day totals (results, paired test, control mix, turn-table counts, per tenant "
        "and assistant, latencies), each "
        "item's disagree mark and each call's line and flag counters from the rows they count, and report any "
        "drift. The writes keep them in step; run this after changing rows outside the app (the Django admin's "
        "deletes of calls or tenants, SQL by hand). With --check nothing is changed and the exit status is 1 "
        "when something drifted. Score writes to the banks being rebuilt wait until it is done."
    )

    def add_arguments(self, parser):
        parser.add_argument("--bank", type=int, action="append", help="Only this bank (repeat for several).")
        parser.add_argument("--check", action="store_true", help="Report drift only; change nothing.")

    def handle(self, *args, bank=None, check=False, **options):
        if bank:
            missing = set(bank) - set(Bank.objects.filter(pk__in=bank).values_list("pk", flat=True))
            if missing:
                raise CommandError(f"No bank with id {', '.join(map(str, sorted(missing)))}.")
        with transaction.atomic():
            drift = aggregates.rebuild(bank, fix=not check)
        lines = [
            f"{TABLES.get(t, t + ' totals')}: {n} row{'s' if n != 1 else ''} differed"
            for t, n in drift.rows.items()
        ]
        lines += [f"disagree marks: {drift.marks} wrong", f"calls: {drift.calls} with wrong counters"]
        for line in lines:
            self.stdout.write(line)
        for example in drift.examples:
            self.stdout.write(f"  {example}")
        if not drift.any:
            self.stdout.write("no drift: every total matches the rows it counts")
        elif check:
            self.stdout.write("drift found (nothing changed: run without --check to rebuild)")
            sys.exit(1)
        else:
            self.stdout.write("rebuilt: the totals now match the rows they count")
