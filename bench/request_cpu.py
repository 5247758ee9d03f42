"""The CPU one request costs, by kind: the load bench's data (bench/load.py's set-up: a bank of --flags flags, two
vendor candidates on a local Deepgram-speaking server) served by gunicorn as the load bench serves it, and each
kind of request sent --n times, one after another, while the CPU time of every server process is read from /proc
before and after: the web workers and the PostgreSQL backends (the machine's whole cost of serving it, the client
excluded). A flag's queue work (settling it, transcribing it and its controls with both candidates, scoring, the totals) is
measured apart: the queue worker is started after the flags and its CPU read until the queue is empty. The call
page is read as a supervisor reads calls: each once before (`call`: its flag boxes kept by that read), after its
flags' scores landed (`call_scored`: each flag's version moved, then the queue's build of its boxes, before the
kind is measured: the boxes the queue stored), and with a person's edit of one of its flags since its last read
that nothing has built since (`call_changed`: that flag's box rendered again; the bench moves its version before
each read, one small UPDATE counted with the database). Then a profile: each kind again in this process through
Django's test client (DEBUG off), under cProfile, its top functions by own time.

    .venv/bin/python bench/request_cpu.py [--flags 2000] [--n 40] [--web-workers 2] [--profile-top 12]
        [--kinds keys,results,turns,flag,csv,turns_csv,calls,call,call_scored,call_changed]

Needs the PostgreSQL server on 127.0.0.1:5432 (trust auth); creates and drops its own database `oncore_cpu`.
Run it on a quiet machine: another process's work is not counted, but it slows this one's caches."""

import argparse
import cProfile
import io
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import load  # noqa: E402 (the load bench's set-up, reused as it is)

DB = "oncore_cpu"
PORT = 8766
BASE = f"http://127.0.0.1:{PORT}"
KINDS = (
    "keys",
    "results",
    "turns",
    "flag",
    "csv",
    "turns_csv",
    "calls",
    "call",
    "call_scored",
    "call_changed",
)


def is_db(cmdline: str) -> bool:
    return load.is_db(cmdline, DB)


def requests_of(kind, bank_id, lines, call_ids, i):
    """(method, path, data, headers) of the i-th request of a kind."""
    if kind == "keys":  # a trivial page: the floor every page's cost stands on
        return "GET", "/settings/api-keys/", None
    if kind == "results":
        return "GET", f"/banks/{bank_id}/", None
    if kind == "turns":
        return "GET", f"/banks/{bank_id}/turns/?page={1 + i % 20}", None
    if kind == "flag":
        return (
            "POST",
            f"/lines/{lines.pop()}/flag/",
            {
                "expected_text": "table for four at 8:30",
                "tags": "time",
                "bank": bank_id,
            },
        )
    if kind == "csv":
        return "GET", f"/banks/{bank_id}/results.csv", None
    if kind == "turns_csv":
        return "GET", f"/banks/{bank_id}/turns.csv", None
    if kind == "calls":
        return "GET", "/calls/", None
    return "GET", f"/calls/{call_ids[i % len(call_ids)]}/", None  # call, call_scored, call_changed


def prepare(kind, call_ids) -> str:
    """call_scored: every call's flags written to since its last read (their version moved) and the queue's part
    done after it (the call's boxes rendered and stored: queries/boxes.py build), as when their scores land. Says
    what the build cost (this process's CPU: the queue worker's)."""
    if kind != "call_scored":
        return ""
    from django.db.models import F

    from transcriber_tests.models import Flag
    from transcriber_tests.queries import boxes

    Flag.objects.filter(line__call__in=call_ids).update(items_version=F("items_version") + 1)
    t0 = time.process_time()
    built = boxes.build(call_ids)
    ms = (time.process_time() - t0) * 1000
    flags = Flag.objects.filter(line__call__in=call_ids).count()
    return f"  (the queue's build before: {ms / len(call_ids):.1f} ms CPU per call, {ms / max(built, 1):.1f} per box; {built} of {flags} boxes)"


def changed(kind, call_ids, i) -> None:
    """call_changed: the call read next has had a person's write to one of its flags since it was last read (that
    flag's version moved, as every such write moves it), so the page renders that flag's box again instead of
    reading it kept."""
    if kind == "call_changed":
        from django.db.models import F

        from transcriber_tests.models import Flag

        first = Flag.objects.filter(line__call=call_ids[i % len(call_ids)]).order_by("pk").values("pk")[:1]
        Flag.objects.filter(pk__in=first).update(items_version=F("items_version") + 1)


def over_http(client, kind, bank_id, lines, call_ids, n) -> tuple[float, float, float, str]:
    """Send n requests of a kind one after another: (web ms, database ms, wall ms) per request, and what its
    preparation said."""
    csrf = client.cookies.get("csrftoken")
    built = prepare(kind, call_ids)
    web0, db0, t0 = load.cpu_ms(load.is_web), load.cpu_ms(is_db), time.perf_counter()
    for i in range(n):
        method, path, data = requests_of(kind, bank_id, lines, call_ids, i)
        changed(kind, call_ids, i)
        if method == "GET":
            r = client.get(path)
        else:
            r = client.post(path, data=data, headers={"X-CSRFToken": csrf, "HX-Request": "true"})
        assert r.status_code == 200, (kind, r.status_code, r.text[:300])
    wall = (time.perf_counter() - t0) * 1000
    return (load.cpu_ms(load.is_web) - web0) / n, (load.cpu_ms(is_db) - db0) / n, wall / n, built


def profile(kind, bank_id, lines, call_ids, n, top) -> str:
    """The kind's requests through Django's test client in this process, under cProfile (CPU time): its top
    functions."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username="admin0"))
    method, path, data = requests_of(kind, bank_id, lines, call_ids, 0)  # warm what the server has warm
    client.get(path) if method == "GET" else client.post(path, data, HTTP_HX_REQUEST="true")
    for call_id in call_ids if kind.startswith("call") else []:  # each call read once, as over HTTP
        client.get(f"/calls/{call_id}/")
    prepare(kind, call_ids)
    prof = cProfile.Profile(time.process_time)  # this process's CPU: the database's wait is not counted
    for i in range(n):
        method, path, data = requests_of(kind, bank_id, lines, call_ids, i)
        changed(kind, call_ids, i)
        prof.enable()
        r = client.get(path) if method == "GET" else client.post(path, data, HTTP_HX_REQUEST="true")
        if getattr(r, "streaming", False):
            b"".join(r.streaming_content)
        prof.disable()
        assert r.status_code == 200, (kind, r.status_code)
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    total_ms = stats.total_tt * 1000 / n
    stats.sort_stats("tottime").print_stats(top)
    body = out.getvalue()
    body = body[body.find("   ncalls") :]
    out = io.StringIO()  # where the project's own functions spend it, with what they call
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(r"/(oncore|transcriber_tests)/", top)
    ours = out.getvalue()
    ours = ours[ours.find("   ncalls") :]
    return f"--- {kind}: {total_ms:.1f} ms per request in-process (profiled)\n{body}\nthe project's functions:\n{ours}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flags", type=int, default=2000)
    parser.add_argument("--n", type=int, default=40, help="requests of each kind")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--profile-top", type=int, default=12)
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--kinds", default=",".join(KINDS), help="the kinds to measure, by comma")
    args = parser.parse_args()

    vendor_end, ours = load.multiprocessing.Pipe()
    vendor = load.multiprocessing.Process(target=load.serve_vendor, args=(vendor_end,), daemon=True)
    vendor.start()
    vendor_url, vendor_key = ours.recv()
    media = load.ROOT / "var" / "cpu-media"
    env = load.server_env(f"postgres://postgres@127.0.0.1:5432/{DB}", media, vendor_url, vendor_key)
    env["ONCORE_RATE_LIMIT_PER_MINUTE"] = "1000000"  # each kind is sent --n times a minute by one client
    load.psql(f"DROP DATABASE IF EXISTS {DB}")
    load.psql(f"CREATE DATABASE {DB}")
    procs = []
    try:
        bank_id, lines_by_user = load.setup_data(env, args.flags, 2, media)
        lines = list(lines_by_user["admin0"]) + list(lines_by_user["admin1"])
        from oncore.calls.models import Call

        call_ids = list(Call.objects.filter(n_lines__gt=0).values_list("pk", flat=True)[:20])
        child_env = {**os.environ, **env}
        procs.append(
            subprocess.Popen(load.gunicorn_command(PORT, args.web_workers), cwd=load.ROOT, env=child_env)
        )
        load.wait_for(BASE)
        client = httpx.Client(base_url=BASE, timeout=60)
        page = client.get("/login/")
        token = load.re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        client.post(
            "/login/", data={"username": "admin0", "password": load.PASSWORD, "csrfmiddlewaretoken": token}
        )
        for kind in KINDS:  # every worker warm: its first requests import and build what it needs
            if kind != "flag":
                for i in range(2 * args.web_workers):
                    method, path, _ = requests_of(kind, bank_id, lines, call_ids, i)
                    client.get(path)
        for call_id in call_ids:  # each call read once, as a supervisor going through them has
            client.get(f"/calls/{call_id}/")

        print(
            f"{args.flags:,} flags in the bank; {args.n} requests of each kind, one after another; "
            f"gunicorn {args.web_workers} workers x 4 threads (gthread), PostgreSQL"
        )
        print(f"{'kind':10} {'web ms':>8} {'db ms':>7} {'total ms':>9} {'wall ms':>8}")
        kinds = [k for k in KINDS if k in args.kinds.split(",")]
        for kind in kinds:
            web, db, wall, note = over_http(client, kind, bank_id, lines, call_ids, args.n)
            print(f"{kind:10} {web:8.1f} {db:7.1f} {web + db:9.1f} {wall:8.1f}{note}")

        # The flags' queue work: a worker started now, its CPU read until the queue is empty.
        queue0 = load.cpu_ms(load.is_queue)
        db0 = load.cpu_ms(is_db)
        t0 = time.monotonic()
        py = str(load.ROOT / ".venv" / "bin" / "python")
        procs.append(
            subprocess.Popen(
                [py, "manage.py", "qcluster"],
                cwd=load.ROOT,
                env=child_env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        time.sleep(2)
        while load.queue_busy():
            if time.monotonic() - t0 > 300:
                print("the queue did not drain in 300 s")
                break
            time.sleep(0.5)
        queue = load.cpu_ms(load.is_queue) - queue0
        db = load.cpu_ms(is_db) - db0
        print(
            f"{'flag queue':10} {queue / args.n:8.1f} {db / args.n:7.1f} {(queue + db) / args.n:9.1f} "
            f"{(time.monotonic() - t0) * 1000 / args.n:8.1f}  (per flag: its transcriptions and scores, "
            "both candidates; the worker's idle polling included)"
        )

        if not args.no_profile:
            print()
            for kind in kinds:
                print(profile(kind, bank_id, lines, call_ids, max(5, args.n // 4), args.profile_top))
    finally:
        load.stop(procs)
        ours.send("stop")
        vendor.join(timeout=10)
        from django.db import connections

        connections.close_all()
        load.psql(f"DROP DATABASE IF EXISTS {DB}")


if __name__ == "__main__":
    main()
