"""A bank of N flags x 8 candidates (each flag with one control: 18 scores a flag) over the calls of 4 tenants
(two assistants each), and the server time of its pages as an admin reads them, beside the API keys page (a page
that computes nothing) in the same run: the results page (its figures from their snapshot: the cards with each
candidate's latency p50/p95, cost and monthly projection, the trade-off chart, the per-tenant and per-assistant
tables and the expected texts to check), the same page filtered to one tenant, the trust page (call-level
bootstrap, flags planner, confusion pairs), the turn table's first page and its "only where candidates disagree"
page (each kept once rendered, until the bank's scores change), both again right after a score write on one of
their flags (the page made again: that flag's rows rendered, the others' kept), and the turn-table CSV export,
against their targets; the time and peak memory of a rebuild of the bank's snapshots (what the queue does after a
score write; the process's first, which pays one-time imports, printed beside it); then the figures the results
and trust pages show.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/oncore_bench .venv/bin/python bench/bank_page.py --flags 10000
    DATABASE_URL=... .venv/bin/python bench/bank_page.py --flags 100000      # 1.8 million scores

It creates and drops its own test database (test_<name>), so it never touches real data. Before each read of the
results and trust pages, and of the turn table "after a write", a score write is simulated (the bank's results
version moves, as every score write moves it, and for the turn table the written flag's items version), so each
read serves the newest snapshot while a newer one is due, as under a steady stream of flags. Targets on
PostgreSQL at 100,000 flags (server time, medians): results page <= 10 ms (filtered too), trust page <= 10 ms,
turn table page 1 <= 20 ms, "disagree" <= 30 ms (kept, and after a write), turn-table CSV >= 150,000 rows/s with
flat memory, a rebuild <= 1 s; and against the API keys page of the same run: results and trust <= 1.5x, turn
table <= 2.5x, "disagree" <= 3x. (The figures of the queries before the per-day totals, and of the pages before
the snapshots, are in the notes of the issues that replaced them.)"""

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
os.environ.setdefault(
    "ONCORE_RATE_LIMIT_PER_MINUTE", "1000000"
)  # one client reads each page many times a minute
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.db.models import F  # noqa: E402
from django.utils import timezone  # noqa: E402

from transcriber_tests.models import Bank, Flag, Score  # noqa: E402

CANDIDATES = 8
TENANTS = 4
# What the results page must carry, so a fast page is not a page that left its figures out.
RESULTS_MUST_SHOW = (
    b'class="tradeoff-chart"',
    b"Latency p50 / p95",
    b"A month at your volume",
    b'id="by-tenant-title"',
    b'class="data group-table"',
    b'id="check-expected-title"',
)
TRUST_MUST_SHOW = (b"calls resampled (bootstrap)", b"How many more flags", b"Confusion pairs of")


# ---------------------------------------------------------------- measuring


def timed_get(client, url, repeats, write=None, must_show=()):
    """Median server time of a GET. With `write`, each request first calls it (a score write's versions moved:
    `score_written`), so the read finds what it keeps one version behind, as under a stream of flags. Each answer
    must hold every bytes string of `must_show`."""
    times = []
    for _ in range(repeats):
        if write is not None:
            write()
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
        missing = [m for m in must_show if m not in response.content]
        assert not missing, (url, missing)
    return statistics.median(times)


def score_written(bank, flag=None):
    """What a score write moves: the bank's results version and, with `flag`, that flag's items version."""

    def write():
        Bank.objects.filter(pk=bank.pk).update(results_changed_at=timezone.now())
        if flag is not None:
            Flag.objects.filter(pk=flag.pk).update(items_version=F("items_version") + 1)

    return write


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


def rebuild_figures(bank):
    """(seconds of the first, seconds of the next, peak traced MB) of rebuilds of the bank's snapshots, as the
    queue runs them after a score write: the first in this process pays its one-time imports and models (the
    language tagger's, say), as a worker's first rebuild does; the next is what every later one costs, timed
    untraced (tracing every allocation nearly doubles it); a third, traced, gives the peak memory."""
    from transcriber_tests.actions import scores
    from transcriber_tests.queries import snapshots

    times = []
    for traced in (False, False, True):
        scores.results_changed(bank.pk)
        if traced:
            tracemalloc.start()
        start = time.perf_counter()
        snapshots.rebuild(bank.pk)
        times.append(time.perf_counter() - start)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return times[0], times[1], peak / 1e6


def line(what, value, unit="ms", target=None, higher_is_better=False):
    met = ""
    if target is not None:
        ok = value >= target if higher_is_better else value <= target
        met = (
            f"   target {'>=' if higher_is_better else '<='} {target:,} {unit}: {'met' if ok else 'NOT met'}"
        )
    print(f"{what:28} {value:10,.1f} {unit}{met}")


def print_figures(bank):
    """The figures the pages just timed show: each candidate's accuracy, latency and cost, the per-tenant table,
    the call-level intervals and the flags planner, the confusion pairs and the expected texts to check."""
    from transcriber_tests import queries
    from transcriber_tests.queries import confusion, reference_check, trust

    bank.refresh_from_db()
    screen = queries.results_screen(bank, queries.DEFAULT_WINDOW_DAYS)
    t = screen.tradeoff
    v = t.volume
    print(f"figures (last {screen.results.window_days} days; p50/p95 from the buckets, {t.resolution}):")
    print(
        f"  volume: {v.calls:,} calls, {v.minutes:,.0f} caller minutes in the last 30 days; on the live transcribers "
        + ("some unpriced" if v.now is None else f"${v.now:,.2f}")
    )
    for c in t.choices:
        lat = c.latency
        print(
            f"  {c.transcriber.display_name:24} {'★' if c.is_leader else ' '} accuracy {c.accuracy:.1%} "
            f"n={c.summary.scored:,}; latency p50 {lat.p50_s:.3f} s, p95 {lat.p95_s:.3f} s n={lat.lines:,}; "
            f"${c.cost_per_line * 1000:.2f}/1,000 lines; month ${c.projection.cost:,.2f}"
            f"{'; best trade-off' if c.on_front else ''}"
        )
    for table in (screen.by_tenant, screen.by_assistant):
        print(f"  by {table.by}: {len(table.rows)} rows (+{table.more} more)")
        for row in table.rows[:TENANTS]:
            cells = " ".join(f"{cell.accuracy:.0%}" if cell.scored else "—" for cell in row.cells)
            best = row.best.display_name if row.best else "none"
            print(f"    {row.group.name:28} {row.lines:7,} lines  {cells}  ★ {best}")
    tr = trust.bank_trust(bank, screen.results.window_days)
    for row in tr.rows[:3]:
        b = row.calls
        print(
            f"  {row.transcriber.display_name:24} Wilson {row.wilson[0]:.2%}-{row.wilson[1]:.2%}; "
            f"calls resampled {b.low:.2%}-{b.high:.2%} ({b.calls:,} calls, {b.resamples:,} resamples)"
        )
    if tr.lead_calls is not None:
        lc = tr.lead_calls
        print(
            f"  lead {tr.leader.display_name} over {tr.runner_up.display_name}: {lc.estimate * 100:+.2f} points, "
            f"95% {lc.low * 100:+.2f} to {lc.high * 100:+.2f} by calls; McNemar p = {tr.lead.p_value:.3g}"
        )
    if tr.plan is not None:
        print(f"  planner: {tr.plan.state}, {tr.plan.flags} more flags (power {tr.plan.power:.3g})")
    if tr.sentence:
        print(f"  note: {tr.sentence}")
    pairs = confusion.confusion_pairs(bank, screen.results.window_days)[0]
    top = ", ".join(f"{p.label} x{p.n:,}" for p in pairs.pairs[:3])
    print(f"  {pairs.transcriber.display_name} confusion pairs: {top} (of {pairs.errors:,} word errors)")
    checks, total = reference_check.expected_checks(bank, screen.results.window_days)
    print(f"  expected texts to check: {total:,}")


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
        from transcriber_tests.actions.synthetic import fill_bank

        org = Organization.objects.create(name="Bench", slug="bench")
        user = get_user_model().objects.create_user("bench-admin", password="x")
        Membership.objects.create(user=user, organization=org, role="admin")
        start = time.perf_counter()
        bank = fill_bank(org, flags=args.flags, candidates=CANDIDATES, name="Bench", tenants=TENANTS)
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
        tenant = org.tenants.order_by("pk").last()
        # The keys the pages read, computed once as the queue does after a score write; the rebuild timed.
        for url in (
            f"/banks/{bank.pk}/",
            f"/banks/{bank.pk}/?tenant={tenant.pk}",
            f"/banks/{bank.pk}/trust/",
        ):
            client.get(url)
        first_rebuild_s, rebuild_s, rebuild_mb = rebuild_figures(bank)
        written = score_written(bank)
        # A score written on the newest flag (page 1's first), and on the newest where candidates disagree.
        newest = Flag.objects.filter(bank=bank).order_by("-joined_at", "-id").first()
        disagreeing = (
            Flag.objects.filter(bank=bank, scores__source=Score.LIVE, scores__disagree=True)
            .order_by("-joined_at", "-id")
            .first()
        )
        urls = {
            "API keys page (baseline)": ("/settings/api-keys/", None, None, None, ()),
            "results page": (f"/banks/{bank.pk}/", written, 10, 1.5, RESULTS_MUST_SHOW),
            "results, one tenant": (
                f"/banks/{bank.pk}/?tenant={tenant.pk}",
                written,
                10,
                1.5,
                RESULTS_MUST_SHOW[:3],
            ),
            "trust page": (f"/banks/{bank.pk}/trust/", written, 10, 1.5, TRUST_MUST_SHOW),
            "turn table, page 1": (f"/banks/{bank.pk}/turns/", None, 20, 2.5, ()),
            "turn table, disagree": (f"/banks/{bank.pk}/turns/?disagree=1", None, 30, 3.0, ()),
            # A page is kept by its scores' version: read right after a score write, it is made again, the
            # written flag's rows rendered and the others' read kept.
            "turn table, after a write": (
                f"/banks/{bank.pk}/turns/",
                score_written(bank, newest),
                20,
                None,
                (),
            ),
            "disagree, after a write": (
                f"/banks/{bank.pk}/turns/?disagree=1",
                score_written(bank, disagreeing),
                30,
                None,
                (),
            ),
        }
        baseline = None
        for what, (url, written, target, ratio, must_show) in urls.items():
            timed_get(client, url, 2, written, must_show)  # warm up
            ms = timed_get(client, url, args.repeats, written, must_show)
            baseline = baseline or ms
            line(what, ms, target=target)
            if ratio is not None:
                line("  x the API keys page", ms / baseline, "x", ratio)
        line("rebuild of its figures", rebuild_s, "s", 1)
        print(
            f"{'':28} 3 keys (results, one tenant, trust); peak traced Python memory {rebuild_mb:.1f} MB (a third, traced); "
            f"the process's first rebuild {first_rebuild_s:.1f} s"
        )

        csv_url = f"/banks/{bank.pk}/turns.csv"
        rows, size, elapsed, peak = csv_figures(client, csv_url)
        line("turn-table CSV", rows / elapsed, "rows/s", 150_000, higher_is_better=True)
        print(
            f"{'':28} {rows:,} rows, {size / 1e6:.1f} MB; peak traced Python memory while streaming "
            f"{peak / 1e6:.1f} MB"
        )
        print_figures(bank)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


OLD_FLAG_BATCH = 1000


if __name__ == "__main__":
    main()
