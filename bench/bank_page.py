"""A bank of N flags x 8 candidates (each flag with one control: 18 scores a flag), and the server time of the
results page (uncached), the turn table's first page, its "only where candidates disagree" page and the turn-table
CSV export, against their targets.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/oncore_bench .venv/bin/python bench/bank_page.py --flags 10000
    DATABASE_URL=... .venv/bin/python bench/bank_page.py --flags 100000      # 1.8 million scores

It creates and drops its own test database (test_<name>), so it never touches real data. "Uncached": before each
request the bank's results_changed_at moves, as every score write moves it, so the cached results miss as under a
steady stream of flags. Targets on PostgreSQL at 10,000 and 100,000 flags: results page uncached median <= 30 ms,
turn table page 1 <= 60 ms, "disagree" <= 100 ms, turn-table CSV >= 100,000 rows/s with flat memory. (The figures
of the queries before the per-day totals, which this bench printed beside these, are in the notes of the issue
that replaced them.)"""

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oncore.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-for-a-throwaway-database")
os.environ.setdefault("ALLOWED_HOSTS", "testserver")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from transcriber_tests.models import Bank, Score  # noqa: E402

CANDIDATES = 8


# ---------------------------------------------------------------- measuring


def timed_get(client, url, repeats, bank=None):
    """Median server time of a GET. With `bank`, each request first moves the bank's results_changed_at, as every
    score write does, so the cached results miss as they do under a stream of flags (the uncached path)."""
    times = []
    for _ in range(repeats):
        if bank is not None:
            Bank.objects.filter(pk=bank.pk).update(results_changed_at=timezone.now())
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(times)


def export(client, url):
    rows, size = -1, 0  # less the header row
    for chunk in client.get(url).streaming_content:
        rows += chunk.count(b"\n")
        size += len(chunk)
    return rows, size


def csv_figures(client, url):
    """(rows, bytes, seconds, peak traced memory): a first pass traces memory (and warms up), a second is timed."""
    tracemalloc.start()
    export(client, url)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    start = time.perf_counter()
    rows, size = export(client, url)
    return rows, size, time.perf_counter() - start, peak


def line(what, value, unit="ms", target=None, higher_is_better=False):
    met = ""
    if target is not None:
        ok = value >= target if higher_is_better else value <= target
        met = (
            f"   target {'>=' if higher_is_better else '<='} {target:,} {unit}: {'met' if ok else 'NOT met'}"
        )
    print(f"{what:28} {value:10,.1f} {unit}{met}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flags", type=int, default=10_000, help="flags in the bank (each with one control)")
    parser.add_argument("--repeats", type=int, default=15, help="requests per figure (median)")
    args = parser.parse_args()

    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        from django.contrib.auth import get_user_model
        from django.test import Client

        from oncore.accounts.models import Membership, Organization
        from transcriber_tests.synthetic import fill_bank

        org = Organization.objects.create(name="Bench", slug="bench")
        user = get_user_model().objects.create_user("bench-admin", password="x")
        Membership.objects.create(user=user, organization=org, role="admin")
        start = time.perf_counter()
        bank = fill_bank(org, flags=args.flags, candidates=CANDIDATES, name="Bench")
        fill_s = time.perf_counter() - start
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:  # what autovacuum does to a settled table
                cursor.execute("VACUUM ANALYZE")
        n_scores = Score.objects.filter(flag__bank=bank).count()
        print(
            f"database: {connection.vendor}; bank: {args.flags:,} flags + {args.flags:,} controls x {CANDIDATES} "
            f"candidates + live = {n_scores:,} scores (filled in {fill_s:.0f} s); medians of {args.repeats} "
            f"requests, server time; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        client = Client()
        client.force_login(user)
        urls = {
            "results page, uncached": (f"/banks/{bank.pk}/", bank, 30),
            "turn table, page 1": (f"/banks/{bank.pk}/turns/", None, 60),
            "turn table, disagree": (f"/banks/{bank.pk}/turns/?disagree=1", None, 100),
        }
        for what, (url, uncached, target) in urls.items():
            timed_get(client, url, 2, uncached)  # warm up
            line(what, timed_get(client, url, args.repeats, uncached), target=target)

        csv_url = f"/banks/{bank.pk}/turns.csv"
        rows, size, elapsed, peak = csv_figures(client, csv_url)
        line("turn-table CSV", rows / elapsed, "rows/s", 100_000, higher_is_better=True)
        print(
            f"{'':28} {rows:,} rows, {size / 1e6:.1f} MB; peak traced Python memory while streaming "
            f"{peak / 1e6:.1f} MB"
        )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


OLD_FLAG_BATCH = 1000


if __name__ == "__main__":
    main()
