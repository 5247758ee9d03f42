"""An organization with 100,000 calls and 1,000,000 lines (four tenants, eight assistants, a year of dates, one call
in a hundred flagged), and the server time of the calls page and GET /api/v1/calls (first page, a deep page, each
filter) and of a 200-line call's page, beside the old way in the same run, as a ratio.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/oncore_bench .venv/bin/python bench/calls_page.py
    DATABASE_URL=... .venv/bin/python bench/calls_page.py --calls 20000 --lines 10     # a quicker look

It creates and drops its own test database (test_<name>), so it never touches real data. The old way is the query
the calls list ran before (kept here): every call's lines and flags counted before the page was cut, dates
compared as dates, "has flags" as a subquery per call, the total counted exactly and deep pages reached by offset
(the dashboard's page 500, the API's offset 50,000); its figures are those queries alone (its pages and templates
are gone), so the ratios understate the gain. The new way reads the counters stored on each call, walks an
index newest first and reaches deep pages by a cursor (?after=). Targets at 100,000 calls: calls page and API list
<= 100 ms median for the first page and for a deep page, with any filter; a 200-line call's page <= 100 ms."""

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oncore.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-for-a-throwaway-database")
os.environ.setdefault("ALLOWED_HOSTS", "testserver")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("MEDIA_ROOT", tempfile.mkdtemp(prefix="oncore-calls-bench-"))

import django  # noqa: E402

django.setup()

from django.core.paginator import Paginator  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count, Exists, OuterRef  # noqa: E402
from django.utils import timezone  # noqa: E402

from transcriber_tests import queries  # noqa: E402
from transcriber_tests.models import Flag  # noqa: E402
from transcriber_tests.shapes.calls import call_out  # noqa: E402


def old_calls_list(
    organization, *, tenant=None, assistant=None, date_from=None, date_to=None, has_flags=None
):
    """queries.calls_list as it was."""
    qs = queries.calls_of(organization).annotate(
        old_lines=Count("lines", distinct=True), old_flags=Count("lines__flag", distinct=True)
    )
    qs = queries._where(
        qs,
        tenant_id=tenant,
        assistant_id=assistant,
        started_at__date__gte=date_from,
        started_at__date__lte=date_to,
    )
    if has_flags is not None:
        flagged = Exists(Flag.objects.filter(line__call=OuterRef("pk")))
        qs = qs.filter(flagged if has_flags else ~flagged)
    return qs.order_by("-started_at", "-id")


def old_dashboard_page(organization, number, **filters):
    """What the calls page read before: Paginator over the annotated list (an exact count, then an offset)."""
    page = Paginator(old_calls_list(organization, **filters), 50).get_page(number)
    return [(c.pk, c.old_lines, c.old_flags) for c in page.object_list], page.paginator.count


def old_api_list(organization, offset, **filters):
    """What GET /calls read before: the exact count, then the page by offset, each call converted."""
    qs = old_calls_list(organization, **filters)
    return qs.count(), [call_out(c, c.old_lines, c.old_flags) for c in qs[offset : offset + 50]]


def median_ms(work, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def get(client, url, **headers):
    response = client.get(url, headers=headers)
    assert response.status_code == 200, (url, response.status_code, response.content[:300])
    return response


def line(what, new, old=None, target=100):
    ratio = f"{old / new:7.1f}x" if old else "        "
    old_text = f"old {old:9,.1f} ms" if old else f"{'':16}"
    met = "met" if new <= target else "NOT met"
    print(f"{what:44} new {new:7,.1f} ms   {old_text}   {ratio}   target <= {target} ms: {met}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--lines", type=int, default=10, help="lines per call")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(args)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(args):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from oncore.accounts.models import ApiKey, Membership, Organization
    from oncore.transcribers.models import Transcriber
    from tests.fixtures import make_call
    from transcriber_tests.actions.synthetic import fill_calls

    org = Organization.objects.create(name="Call centre", slug="call-centre")
    user = get_user_model().objects.create_user("bench-admin", password="x")
    Membership.objects.create(user=user, organization=org, role="admin")
    start = time.perf_counter()
    tenants = fill_calls(org, calls=args.calls, lines_per_call=args.lines)
    fill_s = time.perf_counter() - start
    live = Transcriber.objects.get(slug="calls-live-1")
    big = make_call(tenants[0], live, caller_texts=[f"line {i}" for i in range(100)], seconds_per_line=1.0)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    print(
        f"database: {connection.vendor}; {args.calls:,} calls, {args.calls * args.lines:,} lines in one organization "
        f"(filled in {fill_s:.0f} s); medians of {args.repeats} requests, server time; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    client = Client()
    client.force_login(user)
    api_key = ApiKey.generate(org, name="bench")[1]
    auth = {"Authorization": f"Bearer {api_key}"}
    r = args.repeats
    old_r = max(3, r // 3)

    deep_rank = min(25_000, args.calls // 2)  # the dashboard's page 500 (50 a page)
    deep_call = queries.calls_list(org)[deep_rank - 1]
    cursor = queries.CallCursor.of(deep_call)
    api_deep_rank = min(50_000, args.calls // 2)  # the API's offset 50,000
    api_cursor = queries.CallCursor.of(queries.calls_list(org)[api_deep_rank - 1])
    today = timezone.now().date()
    filters = {
        "tenant": ({"tenant": tenants[1].pk}, f"tenant={tenants[1].pk}"),
        "assistant": (
            {"assistant": tenants[2].assistants.first().pk},
            f"assistant={tenants[2].assistants.first().pk}",
        ),
        "last 30 days": (
            {"date_from": today - timedelta(days=30), "date_to": today},
            f"date_from={today - timedelta(days=30)}&date_to={today}",
        ),
        "has flags": ({"has_flags": True}, "has_flags=on"),
    }

    print("\nnew: the whole request; old: the old list's queries alone (count, page, counts per call)")
    print("\ncalls page (dashboard)")
    new = median_ms(lambda: get(client, "/calls/"), r)
    old = median_ms(lambda: old_dashboard_page(org, 1), old_r)
    line("first page", new, old)
    new = median_ms(lambda: get(client, f"/calls/?after={cursor}"), r)
    old = median_ms(lambda: old_dashboard_page(org, deep_rank // 50 + 1), old_r)
    line(f"deep page (after call {deep_rank:,}; old: page {deep_rank // 50 + 1})", new, old)
    for name, (kwargs, query) in filters.items():
        new = median_ms(lambda query=query: get(client, f"/calls/?{query}"), r)
        old = median_ms(lambda kwargs=kwargs: old_dashboard_page(org, 1, **kwargs), old_r)
        line(f"first page, {name}", new, old)

    print("\nGET /api/v1/calls")
    new = median_ms(lambda: get(client, "/api/v1/calls", **auth), r)
    old = median_ms(lambda: old_api_list(org, 0), old_r)
    line("first page", new, old)
    new = median_ms(lambda: get(client, f"/api/v1/calls?after={api_cursor}", **auth), r)
    old = median_ms(lambda: old_api_list(org, api_deep_rank), old_r)
    line(f"deep page (after call {api_deep_rank:,}; old: offset)", new, old)
    for name, (kwargs, query) in filters.items():
        api_query = query.replace("has_flags=on", "has_flags=true")
        new = median_ms(lambda api_query=api_query: get(client, f"/api/v1/calls?{api_query}", **auth), r)
        old = median_ms(lambda kwargs=kwargs: old_api_list(org, 0, **kwargs), old_r)
        line(f"first page, {name}", new, old)

    print("\na call's page")
    new = median_ms(lambda: get(client, f"/calls/{big.pk}/"), r)
    line(f"{big.n_lines}-line call, recorded (lines 200 a page)", new)
    new = median_ms(lambda: get(client, f"/api/v1/calls/{big.pk}", **auth), r)
    line(f"GET /api/v1/calls/{{id}}, {big.n_lines} lines", new)


if __name__ == "__main__":
    main()
