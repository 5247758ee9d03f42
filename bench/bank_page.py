"""Fill a bank with 10,000 flags x 8 candidates and print the server time of the results page, the turn table's
first page and the full CSV export (rows per second, peak memory), in one run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/oncore_bench .venv/bin/python bench/bank_page.py

It creates and drops its own test database (test_<name>), so it never touches real data.
Targets: results page <= 150 ms median on PostgreSQL; CSV export >= 50,000 rows/s with flat memory."""

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

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

FLAGS = int(os.environ.get("BENCH_FLAGS", 10_000))
CANDIDATES = 8
REPEATS = 15


def timed_get(client, url, repeats=REPEATS, cold=False):
    from django.core.cache import cache

    times = []
    for _ in range(repeats):
        if cold:
            cache.clear()
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(times), max(times)


def main():
    setup_test_environment()
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
        bank = fill_bank(org, flags=FLAGS, candidates=CANDIDATES, name="Bench")
        fill_s = time.perf_counter() - start
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        client = Client()
        client.force_login(user)
        from transcriber_tests.models import Score

        n_scores = Score.objects.filter(flag__bank=bank).count()
        print(
            f"database: {connection.vendor}; bank: {FLAGS:,} flags + {FLAGS:,} controls x {CANDIDATES} candidates "
            f"+ live = {n_scores:,} scores (filled in {fill_s:.1f} s)"
        )

        med, worst = timed_get(client, f"/banks/{bank.pk}/", cold=True)
        print(
            f"results page, cold:    median {med:7.1f} ms   max {worst:7.1f} ms   ({REPEATS} requests, cache cleared; "
            "tables just bulk-filled)"
        )
        if connection.vendor == "postgresql":
            # What autovacuum does to a settled table: the visibility map lets the covering indexes answer alone.
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
            med, worst = timed_get(client, f"/banks/{bank.pk}/", cold=True)
            print(
                f"results page, cold:    median {med:7.1f} ms   max {worst:7.1f} ms   ({REPEATS} requests, cache "
                "cleared; after VACUUM)"
            )
        med, worst = timed_get(client, f"/banks/{bank.pk}/")
        print(
            f"results page:          median {med:7.1f} ms   max {worst:7.1f} ms   ({REPEATS} requests, as served)"
        )
        med, worst = timed_get(client, f"/banks/{bank.pk}/turns/")
        print(f"turn table, page 1:    median {med:7.1f} ms   max {worst:7.1f} ms   ({REPEATS} requests)")
        med, worst = timed_get(client, f"/banks/{bank.pk}/turns/?disagree=1")
        print(f"turn table, disagree:  median {med:7.1f} ms   max {worst:7.1f} ms   ({REPEATS} requests)")

        def export():
            rows, size = -1, 0  # less the header row
            for chunk in client.get(f"/banks/{bank.pk}/turns.csv").streaming_content:
                rows += chunk.count(b"\n")
                size += len(chunk)
            return rows, size

        start = time.perf_counter()
        rows, size = export()
        elapsed = time.perf_counter() - start
        tracemalloc.start()  # a second pass measures memory (tracing slows Python, so it is not timed)
        export()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"turn table CSV export: {rows:,} rows, {size / 1e6:.1f} MB in {elapsed:.2f} s = "
            f"{rows / elapsed:,.0f} rows/s; peak traced Python memory while streaming {peak / 1e6:.1f} MB"
        )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
