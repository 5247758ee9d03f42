"""A flag with 5,000 edits (its note changed over and over) among 200 flags of one call, and the size and server
time of what shows it: GET /api/v1/flags/{id}, GET /api/v1/flags?limit=200, the call's page, and the history's
own pages (GET /api/v1/flags/{id}/history, the dashboard's "show all").

    .venv/bin/python bench/flag_history.py                       # SQLite
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/oncore_bench .venv/bin/python bench/flag_history.py
    .venv/bin/python bench/flag_history.py --edits 20000 --repeats 3

It creates and drops its own test database (test_<name>), so it never touches real data. Before the history was
bounded (issue 36), on PostgreSQL here: GET /flags/{id} 603.7 KiB in 220 ms, GET /flags?limit=200 678.8 KiB in
346 ms, the call's page 634.7 KiB in 560 ms; after: 1.0 KiB in 19 ms, 80.1 KiB in 63 ms, 159.0 KiB in 92 ms."""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oncore.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-for-a-throwaway-database")
os.environ.setdefault("ALLOWED_HOSTS", "testserver")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("MEDIA_ROOT", tempfile.mkdtemp(prefix="oncore-history-bench-"))
os.environ.setdefault("ONCORE_RATE_LIMIT_PER_MINUTE", "100000")  # the bench asks more often than a person

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.urls import reverse  # noqa: E402


def measure(client, url, repeats, **headers):
    """(median ms, KiB) of GET url."""
    times, size = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        response = client.get(url, headers=headers)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code, response.content[:300])
        size = len(response.content)
    return statistics.median(times), size / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=5000)
    parser.add_argument("--flags", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(args)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(args):
    from datetime import UTC, datetime, timedelta

    from django.contrib.auth import get_user_model
    from django.test import Client

    from oncore.accounts.models import ApiKey, Membership, Organization, Tenant
    from oncore.transcribers.models import Transcriber
    from tests.fixtures import make_call
    from transcriber_tests import actions
    from transcriber_tests.models import FlagEdit

    org = Organization.objects.create(name="Call centre", slug="call-centre")
    tenant = Tenant.objects.create(organization=org, name="Bistro", slug="bistro")
    user = get_user_model().objects.create_user("bench-admin", password="x")
    Membership.objects.create(user=user, organization=org, role="admin")
    live = Transcriber.objects.create(
        slug="bench-live",
        provider=Transcriber.GENERIC,
        model="live",
        display_name="Live",
        price_per_minute="0.006",
    )
    call = make_call(tenant, live, caller_texts=[f"caller line {i}" for i in range(args.flags)])
    flags = [
        actions.do_flag_line(line, f"what was said on line {line.position}", user=user)
        for line in call.lines.filter(speaker="caller").order_by("position")
    ]
    edited = flags[0]
    start = datetime.now(UTC) - timedelta(days=1)
    FlagEdit.objects.bulk_create(
        FlagEdit(
            flag=edited,
            at=start + timedelta(seconds=i),
            by=user,
            by_name=user.username,
            field=FlagEdit.NOTE,
            old=f"note number {i - 1}" if i else "",
            new=f"note number {i}",
        )
        for i in range(args.edits)
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    client = Client()
    client.force_login(user)
    auth = {"Authorization": f"Bearer {ApiKey.generate(org, name='bench')[1]}"}
    print(
        f"database: {connection.vendor}; one flag with {args.edits:,} edits among {len(flags)} flags of one call; "
        f"medians of {args.repeats} requests; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    urls = [
        (f"GET /api/v1/flags/{{id}} ({args.edits:,} edits)", f"/api/v1/flags/{edited.pk}", auth),
        (f"GET /api/v1/flags?limit={len(flags)}", f"/api/v1/flags?limit={len(flags)}", auth),
        ("the call's page", f"/calls/{call.pk}/", {}),
    ]
    urls += [
        ("GET /api/v1/flags/{id}/history?limit=200", f"/api/v1/flags/{edited.pk}/history?limit=200", auth),
        ("the flag's history page (show all)", reverse("tt:flag_history", args=[edited.pk]), {}),
    ]
    for what, url, headers in urls:
        ms, kib = measure(client, url, args.repeats, **headers)
        print(f"{what:48} {kib:9,.1f} KiB {ms:9,.1f} ms")


if __name__ == "__main__":
    main()
