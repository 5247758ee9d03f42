"""Cold pages: each page's first load after a restart. For every page, in turn: the app is started afresh under
gunicorn as the load bench serves it (bench/load.py: gthread workers, DEBUG off, PostgreSQL), made ready as a
deployment's readiness probe would (GET /healthz until it answers 200), then the page is asked for once (its
cold load: what the first admin after a deploy waits for) and once more (warm), and the server stopped. The user
is signed in by a session made in the database, so no other page warms the worker first.

    .venv/bin/python bench/cold_pages.py [--flags 300] [--workers 1]

The data: the load bench's bank of --flags flags with two candidates and calls to flag, the packaged entity
benchmark and code-switching fixtures (no runs). Needs the PostgreSQL server on 127.0.0.1:5432 (trust auth);
creates and drops its own database `oncore_cold`. Target: every page's first load <= 300 ms."""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import load  # noqa: E402 (the load bench's set-up and server, reused as they are)

DB = "oncore_cold"
PORT = 8767
BASE = f"http://127.0.0.1:{PORT}"
TARGET_MS = 300


def pages(bank_id, call_id, dataset_id):
    """(name, path, signed in?) of every page an admin opens, and the API's list of calls."""
    return [
        ("log-in page", "/login/", False),
        ("home", "/", True),
        ("banks (leaderboard)", "/banks/", True),
        ("bank results", f"/banks/{bank_id}/", True),
        ("trust page", f"/banks/{bank_id}/trust/", True),
        ("turn table", f"/banks/{bank_id}/turns/", True),
        ("bank edit", f"/banks/{bank_id}/edit/", True),
        ("bank runs", f"/banks/{bank_id}/runs/", True),
        ("new run", f"/banks/{bank_id}/runs/new/", True),
        ("calls", "/calls/", True),
        ("call page", f"/calls/{call_id}/", True),
        ("unbanked flags", "/flags/unbanked/", True),
        ("API keys", "/settings/api-keys/", True),
        ("webhooks", "/settings/webhooks/", True),
        ("entity benchmark runs", "/benchmark/", True),
        ("entity compare", "/benchmark/compare/", True),
        ("code-switching datasets", "/benchmark/codeswitch/", True),
        ("code-switching report", f"/benchmark/codeswitch/{dataset_id}/", True),
        ("API reference", "/api/v1/docs", False),
        ("API: calls", "/api/v1/calls", "key"),
    ]


def session_cookie(username: str) -> str:
    """A signed-in session for the user, made in the database as logging in would make it."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    user = get_user_model().objects.get(username=username)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def ready(base: str) -> None:
    for _ in range(300):
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not become ready in 30 s")


def timed_get(client, path, headers) -> tuple[float, int]:
    t0 = time.perf_counter()
    r = client.get(path, headers=headers)
    return (time.perf_counter() - t0) * 1000, r.status_code


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flags", type=int, default=300)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()

    media = load.ROOT / "var" / "cold-media"
    # no vendor: nothing is flagged here
    env = load.server_env(f"postgres://postgres@127.0.0.1:5432/{DB}", media, "http://127.0.0.1:9", "unused")
    load.psql(f"DROP DATABASE IF EXISTS {DB}")
    load.psql(f"CREATE DATABASE {DB}")
    try:
        bank_id, _ = load.setup_data(env, args.flags, 1, media)
        from benchmark import demo
        from benchmark.codeswitch import importer as cs_importer
        from benchmark.entity import importer as entity_importer
        from oncore.accounts.models import ApiKey, Organization
        from oncore.calls.models import Call

        entity_importer.import_dataset(demo.ENTITY_FIXTURE, out=lambda message: None)
        dataset = cs_importer.import_codeswitch(demo.CODESWITCH_FIXTURE, name="codeswitch-fixture").dataset
        call_id = Call.objects.filter(n_lines__gt=0).values_list("pk", flat=True).first()
        _, raw_key = ApiKey.generate(Organization.objects.get(slug="load"), name="cold")
        cookie = session_cookie("admin0")
        child_env = {**os.environ, **env}

        print(
            f"Each page's first load after a restart (gunicorn {args.workers} worker(s) x 4 threads, DEBUG off, "
            f"PostgreSQL; ready when /healthz answers), then its second; {args.flags:,} flags in the bank"
        )
        print(f"{'page':26} {'first ms':>9} {'second ms':>10}  status")
        worst = 0.0
        for name, path, auth in pages(bank_id, call_id, dataset.pk):
            server = subprocess.Popen(load.gunicorn_command(PORT, args.workers), cwd=load.ROOT, env=child_env)
            try:
                ready(BASE)
                headers = {"Authorization": f"Bearer {raw_key}"} if auth == "key" else {}
                with httpx.Client(base_url=BASE, timeout=60) as client:
                    if auth is True:
                        client.cookies.set("sessionid", cookie)
                    first, status = timed_get(client, path, headers)
                    second, _ = timed_get(client, path, headers)
            finally:
                load.stop([server])
            worst = max(worst, first)
            print(f"{name:26} {first:9.1f} {second:10.1f}  {status}")
        verdict = "met" if worst <= TARGET_MS else "missed"
        print(f"slowest first load {worst:.1f} ms; target <= {TARGET_MS} ms: {verdict}")
    finally:
        from django.db import connections

        connections.close_all()
        load.psql(f"DROP DATABASE IF EXISTS {DB}")


if __name__ == "__main__":
    main()
