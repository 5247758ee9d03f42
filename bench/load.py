"""Load: the app under gunicorn on PostgreSQL with two queue workers, driven by 50 concurrent simulated admins
for 60 seconds (results pages, turn tables, flagging lines, CSV exports, the calls list and call pages), against
127.0.0.1 only. The workers run at a lower priority (nice 10), as the README advises where web and queue share a
machine.

    .venv/bin/python bench/load.py [--users 50] [--seconds 60] [--flags 2000] [--think 1 5]

Every admin signs in first with a session made for it beforehand (as Django's login makes one: the password
hashes are not what this measures); the measured period starts when all are in. Each admin then waits 1-5 s between actions (uniform; Locust's customary `between(1, 5)`),
after a random first pause so they do not all click at the same instant. `--think 0.3 1.2` is a stress run: every
admin clicking about once a second.

Needs the PostgreSQL server on 127.0.0.1:5432 (trust auth); creates and drops its own database `oncore_load`.
Candidates are a Deepgram catalogue entry pointed at a local server that speaks Deepgram's API, so the queue does
real HTTP work without leaving the machine. Prints requests/s, p50/p95/p99 latency per kind, errors, and whether
every flag made during the load ended scored. Target: no errors, p95 <= 300 ms for page reads."""

import argparse
import asyncio
import multiprocessing
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DB = "oncore_load"
DB_URL = f"postgres://postgres@127.0.0.1:5432/{DB}"
PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
PASSWORD = "load-test-password-1"
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
FAILURES = []  # what each failed request got, printed after the figures
# What an admin does, and how often: the bank's results, a page of its turn table, flagging a line, its results
# CSV, the calls list, a call's page. The page reads are the four pages (not the flag, not the CSV export).
KINDS = ("results", "turns", "flag", "csv", "calls", "call")
WEIGHTS = (4, 3, 2, 1, 1, 1)
READS = ("results", "turns", "calls", "call")
ERROR = re.compile(r'<(?:div|p) class="error"[^>]*>(.*?)</(?:div|p)>', re.S)  # the flag form's error
CALL_LINK = re.compile(r'href="/calls/(\d+)/')


def serve_vendor(conn):
    """The local Deepgram-speaking server, in its own process so it does not share the load generator's GIL."""
    from tests.transcribers.vendor_servers import FakeDeepgram

    vendor = FakeDeepgram(transcript="table for four at 8:30").start()
    conn.send((vendor.base_url, vendor.key))
    conn.recv()
    vendor.stop()


def cpu_ms(match) -> float:
    """CPU milliseconds (user + system) spent so far by every process whose command line `match` accepts."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if match(cmdline):
            total += (int(fields[11]) + int(fields[12])) * TICK_MS  # utime, stime
    return total


def is_web(cmdline: str) -> bool:
    return "gunicorn" in cmdline and "oncore.wsgi" in cmdline


def is_db(cmdline: str, db: str = DB) -> bool:
    return cmdline.startswith("postgres:") and db in cmdline


def is_queue(cmdline: str) -> bool:
    return "qcluster" in cmdline


class LockWaits(threading.Thread):
    """Samples, every 0.2 s, the database's backends waiting for a lock: on what (the verb and table of their
    statement) and what the backend holding them up is doing (its state and statement): where requests queue
    behind one another rather than for the CPU."""

    def __init__(self, db_url: str):
        super().__init__(daemon=True)
        self.db_url, self.samples, self.waiting = db_url, 0, 0
        self.on, self.holders = Counter(), Counter()
        self.done = threading.Event()

    @staticmethod
    def what(query: str) -> str:
        found = re.search(r'(?:FROM|INTO|UPDATE)\s+"?(\w+)"?', query)
        return (
            f"{query.split(None, 1)[0] if query.strip() else '?'} {found.group(1) if found else query[:30]}"
        )

    def run(self):
        import psycopg

        with psycopg.connect(self.db_url, autocommit=True) as conn:
            while not self.done.wait(0.2):
                rows = conn.execute(
                    "SELECT w.query, b.state, b.query FROM pg_stat_activity w "
                    "LEFT JOIN pg_stat_activity b ON b.pid = (pg_blocking_pids(w.pid))[1] "
                    "WHERE w.datname = current_database() AND w.wait_event_type = 'Lock'"
                ).fetchall()
                self.samples += 1
                self.waiting += len(rows)
                for query, state, holding in rows:
                    self.on[self.what(query)] += 1
                    self.holders[f"{state}: {self.what(holding or '')}"] += 1

    def report(self) -> str:
        self.done.set()
        self.join(timeout=5)
        n = max(1, self.waiting)

        def top(counter):
            return ", ".join(f"{t} {c / n:.0%}" for t, c in counter.most_common(4))

        return (
            f"backends waiting for a lock: {self.waiting / max(1, self.samples):.2f} on average "
            f"({self.samples} samples)"
            + (f"\n  waiting in: {top(self.on)}\n  held up by: {top(self.holders)}" if self.waiting else "")
        )


def psql(sql):
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c", sql], check=True)


def setup_data(env, n_flags, n_users, media):
    """Runs in this process against the load database: organization, admins, a full bank, flaggable calls."""
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model

    from oncore.accounts.models import Membership, Organization
    from transcriber_tests.actions.synthetic import fill_bank

    org = Organization.objects.create(name="Load", slug="load")
    from django.contrib.auth.hashers import make_password

    hashed = make_password(PASSWORD)  # hashed once (slow on purpose), shared by every admin
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"admin{i}", password=hashed) for i in range(n_users)
    )
    Membership.objects.bulk_create(Membership(user=u, organization=org, role="admin") for u in users)
    bank = fill_bank(org, flags=n_flags, candidates=2, name="Load")
    vendor_candidates(bank, env["LOAD_VENDOR_URL"], "load")
    # Recorded calls to flag during the load: one 10-minute stereo recording shared by every call.
    path = Path(media) / "load.flac"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_recording(path)
    lines_by_user = calls_to_flag(org, users, path, "load")
    return bank.pk, lines_by_user


def vendor_candidates(bank, vendor_url: str, name: str) -> None:
    """Make the bank's candidates two Deepgram catalogue entries that call the fake vendor at `vendor_url` (with
    DEEPGRAM_API_KEY), instead of fill_bank's."""
    from django.db import transaction

    from oncore.transcribers.models import Transcriber
    from transcriber_tests import aggregates
    from transcriber_tests.models import Candidate

    vendors = [
        Transcriber.objects.create(
            slug=f"{name}-deepgram-{i}",
            provider="deepgram",
            model="nova-3",
            display_name=f"Deepgram ({name} {i})",
            price_per_minute="0.0043",
            api_key_env="DEEPGRAM_API_KEY",
            options={"base_url": vendor_url},
        )
        for i in range(2)
    ]
    with transaction.atomic():
        Candidate.objects.filter(bank=bank).delete()
        Candidate.objects.bulk_create(
            [Candidate(bank=bank, transcriber=t, position=i) for i, t in enumerate(vendors)]
        )
        aggregates.candidates_changed(bank.pk)


def write_recording(path) -> None:
    """The ten-minute stereo recording every call to flag shares (300 Hz caller, 500 Hz assistant, 8 kHz)."""
    import numpy as np

    from oncore import audio

    rate = 8000
    t = np.arange(600 * rate) / rate
    audio.write_recording(
        path, np.stack([0.2 * np.sin(2 * np.pi * 300 * t), 0.2 * np.sin(2 * np.pi * 500 * t)], 1), rate
    )


def calls_to_flag(org, users, recording, name: str) -> dict[str, list[int]]:
    """Two recorded calls of 40 caller lines for each admin to flag, all on one recording (saved once to the
    storage): {username: [line ids]}."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage
    from django.utils import timezone

    from oncore.calls.models import Assistant, Call, Line
    from oncore.transcribers.models import Transcriber

    stored = default_storage.save(f"recordings/{name}-load.flac", ContentFile(Path(recording).read_bytes()))
    tenant = org.tenants.first()
    assistant = Assistant.objects.create(tenant=tenant, name=f"{name} assistant")
    live = Transcriber.objects.get(slug__startswith=f"{name}-live")
    lines_by_user = {}
    for i, user in enumerate(users):
        calls = [
            Call.objects.create(
                tenant=tenant,
                assistant=assistant,
                started_at=timezone.now(),
                recorded=True,
                recording=stored,
                live_transcriber=live,
                n_lines=40,
                external_id=f"{name}-{i}-{c}",
            )
            for c in range(2)
        ]
        lines = Line.objects.bulk_create(
            Line(
                call=call,
                position=p,
                speaker="caller",
                text="table for four at eight thirty",
                start_s=p * 4.0,
                end_s=p * 4.0 + 3.0,
            )
            for call in calls
            for p in range(40)
        )
        lines_by_user[user.username] = [line.pk for line in lines]
    return lines_by_user


def sessions_for(usernames) -> dict[str, str]:
    """A signed-in session for each admin, made as Django's own login makes one ({username: session key}): the
    load measures the pages, and 200 password hashes at once (slow on purpose: about 110 core-seconds) would
    only delay it."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model

    engine = import_module(settings.SESSION_ENGINE)
    keys = {}
    for user in get_user_model().objects.filter(username__in=list(usernames)):
        session = engine.SessionStore()
        session.update(
            {
                SESSION_KEY: str(user.pk),
                BACKEND_SESSION_KEY: settings.AUTHENTICATION_BACKENDS[0],
                HASH_SESSION_KEY: user.get_session_auth_hash(),
            }
        )
        session.create()
        keys[user.username] = session.session_key
    return keys


async def log_in(name, stats, base=BASE, session=None):
    """A logged-in client of the server at `base`, or None: with the password through the login form, or with a
    `session` key made beforehand (sessions_for). Logins are timed apart: password hashing is slow on purpose
    (200 at once are about 110 core-seconds: the last waits about a minute on two cores, hence the timeout)."""
    client = httpx.AsyncClient(base_url=base, timeout=120.0, follow_redirects=False)
    start = time.perf_counter()
    login_page = await client.get("/login/")  # its form sets the CSRF cookie
    if session is not None:
        client.cookies.set("sessionid", session)
        ok = (await client.get("/calls/")).status_code == 200
    else:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login_page.text).group(1)
        response = await client.post(
            "/login/", data={"username": name, "password": PASSWORD, "csrfmiddlewaretoken": token}
        )
        ok = response.status_code == 302
    stats["login"].append(((time.perf_counter() - start) * 1000, ok))
    if not ok:
        await client.aclose()
        return None
    return client


def said(html: str) -> str:
    """What a refused answer says: its form's error where it has one, else its first 300 characters."""
    errors = ERROR.search(html)
    return re.sub(r"<[^>]+>", " ", errors.group(1)).strip() if errors else html[:300]


async def user_loop(client, lines, bank_id, deadline, stats, flagged, think):
    """One admin: a random first pause (admins do not all click at the same instant), then actions until the
    deadline, each followed by a think time."""
    try:
        csrf = client.cookies.get("csrftoken")
        calls = []  # the call ids the calls page links to, once it was read
        lines = list(lines)
        random.shuffle(lines)
        await asyncio.sleep(random.uniform(0, think[1]))
        while time.monotonic() < deadline:
            kind = random.choices(KINDS, weights=WEIGHTS)[0]
            start = time.perf_counter()
            ok = True
            try:
                if kind == "results":
                    r = await client.get(f"/banks/{bank_id}/")
                    ok = r.status_code == 200
                elif kind == "turns":
                    page = random.randint(1, 20)
                    r = await client.get(f"/banks/{bank_id}/turns/?page={page}")
                    ok = r.status_code == 200
                elif kind == "flag" and lines:
                    line = lines.pop()
                    r = await client.post(
                        f"/lines/{line}/flag/",
                        data={"expected_text": "table for four at 8:30", "tags": "time", "bank": bank_id},
                        headers={"X-CSRFToken": csrf, "HX-Request": "true"},
                    )
                    ok = r.status_code == 200 and "Flagged" in r.text
                    if ok:
                        flagged.append(line)
                elif kind == "calls":
                    r = await client.get("/calls/")
                    ok = r.status_code == 200
                    calls = CALL_LINK.findall(r.text) or calls
                elif kind == "call":
                    r = await client.get(f"/calls/{random.choice(calls)}/" if calls else "/calls/")
                    ok = r.status_code == 200
                elif kind == "csv":
                    async with client.stream("GET", f"/banks/{bank_id}/results.csv") as r:
                        async for _ in r.aiter_bytes():
                            pass
                    ok = r.status_code == 200
                else:
                    continue
                if not ok:
                    FAILURES.append(
                        f"{kind}: HTTP {r.status_code} {said(r.text)!r}"
                        if kind != "csv"
                        else f"{kind}: HTTP {r.status_code}"
                    )
            except httpx.HTTPError as exc:
                ok = False
                FAILURES.append(f"{kind}: {exc.__class__.__name__}: {exc}")
            stats[kind].append(((time.perf_counter() - start) * 1000, ok))
            await asyncio.sleep(random.uniform(*think))
    finally:
        await client.aclose()


def server_env(db_url: str, media, vendor_url: str, vendor_key: str) -> dict:
    """The environment the benches serve the app in: DEBUG off, a throwaway database, the fake vendor's key and
    address, two queue workers and an organization concurrency of 4."""
    return {
        "DATABASE_URL": db_url,
        "DJANGO_SETTINGS_MODULE": "oncore.settings",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-for-a-throwaway-database",
        "SECURE_COOKIES": "0",
        "MEDIA_ROOT": str(media),
        "DEEPGRAM_API_KEY": vendor_key,
        "LOAD_VENDOR_URL": vendor_url,
        "Q_WORKERS": "2",
        "ONCORE_ORG_CONCURRENCY": "4",
        "ALLOWED_HOSTS": "127.0.0.1,testserver",
        "LOG_LEVEL": "WARNING",
    }


def gunicorn_command(port: int, workers: int, threads: int = 4) -> list[str]:
    """The web server as the benches run it: gunicorn's threaded workers."""
    return [
        str(ROOT / ".venv" / "bin" / "gunicorn"),
        "oncore.wsgi",
        "-b",
        f"127.0.0.1:{port}",
        "-w",
        str(workers),
        "-k",
        "gthread",
        "--threads",
        str(threads),
        "--log-level",
        "warning",
        # Idle connections stay open longer than any think time: a server that closes one just as the client
        # reuses it fails that request (browsers retry; httpx does not).
        "--keep-alive",
        "30",
    ]


def queue_busy() -> bool:
    """Work left for the queue: line transcriptions waiting or running, or flags it has not settled yet."""
    from transcriber_tests.models import Flag, Transcription

    return (
        Transcription.objects.filter(status__in=["queued", "running"]).exists()
        or Flag.objects.filter(settled=False).exists()
    )


def wait_for(base: str) -> None:
    for _ in range(100):
        try:
            if httpx.get(f"{base}/login/", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)


def stop(procs) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


def pct(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--flags", type=int, default=2000, help="flags already in the bank before the load")
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--web-threads", type=int, default=4, help="threads of each web worker (gthread)")
    parser.add_argument(
        "--think",
        type=float,
        nargs=2,
        default=(1.0, 5.0),
        metavar=("MIN_S", "MAX_S"),
        help="each admin waits this long between actions (uniform)",
    )
    args = parser.parse_args()

    vendor_end, ours = multiprocessing.Pipe()
    vendor = multiprocessing.Process(target=serve_vendor, args=(vendor_end,), daemon=True)
    vendor.start()
    vendor_url, vendor_key = ours.recv()
    media = ROOT / "var" / "load-media"
    env = server_env(DB_URL, media, vendor_url, vendor_key)
    psql(f"DROP DATABASE IF EXISTS {DB}")
    psql(f"CREATE DATABASE {DB}")
    procs = []
    try:
        t0 = time.time()
        bank_id, lines_by_user = setup_data(env, args.flags, args.users, media)
        print(
            f"set-up: {args.flags:,} flags in the bank, {args.users} admins, "
            f"{sum(map(len, lines_by_user.values())):,} flaggable lines ({time.time() - t0:.0f} s)"
        )
        sessions = sessions_for(lines_by_user)
        child_env = {**os.environ, **env}
        py = str(ROOT / ".venv" / "bin" / "python")
        procs.append(
            subprocess.Popen(
                gunicorn_command(PORT, args.web_workers, args.web_threads), cwd=ROOT, env=child_env
            )
        )
        procs.append(
            subprocess.Popen(
                ["nice", "-n", "10", py, "manage.py", "qcluster"],
                cwd=ROOT,
                env=child_env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        wait_for(BASE)
        stats = {k: [] for k in ("login", *KINDS)}
        flagged = []
        timing = {}

        groups = {"web": is_web, "database": is_db, "queue": is_queue}
        cpu = {}
        locks = LockWaits(DB_URL)

        async def run_all():
            # Every admin logs in first; the measured period starts once all of them have.
            clients = await asyncio.gather(*(log_in(u, stats, session=sessions[u]) for u in lines_by_user))
            timing["started"] = time.monotonic()
            cpu.update({name: cpu_ms(match) for name, match in groups.items()})
            cpu["load generator"] = time.process_time() * 1000
            locks.start()
            deadline = timing["started"] + args.seconds
            await asyncio.gather(
                *(
                    user_loop(c, lines, bank_id, deadline, stats, flagged, args.think)
                    for c, lines in zip(clients, lines_by_user.values(), strict=True)
                    if c is not None
                )
            )

        asyncio.run(run_all())
        elapsed = time.monotonic() - timing["started"]
        cpu = {name: cpu_ms(match) - cpu[name] for name, match in groups.items()} | {
            "load generator": time.process_time() * 1000 - cpu["load generator"]
        }
        waits = locks.report()
        logins = [t for t, _ in stats["login"]]
        print(
            f"sign-in of {len(logins)} admins at once (sessions made beforehand), before the measured period: "
            f"p50 {pct(logins, 50):.0f} ms, "
            f"max {max(logins):.0f} ms"
        )

        total = sum(len(v) for k, v in stats.items() if k != "login")
        errors = sum(1 for v in stats.values() for _, ok in v if not ok)
        print(
            f"\n{args.users} admins for {args.seconds} s (think time {args.think[0]}-{args.think[1]} s): "
            f"{total:,} requests, {total / elapsed:.1f} requests/s, "
            f"{errors} errors"
        )
        print(f"{'kind':10} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>7}")
        reads = []
        for kind, values in stats.items():
            if kind == "login":
                continue
            times = [t for t, _ in values]
            if kind in READS:
                reads += times
            if values:
                print(
                    f"{kind:10} {len(values):6} {pct(times, 50):8.1f} {pct(times, 95):8.1f} {pct(times, 99):8.1f} "
                    f"{sum(1 for _, ok in values if not ok):7}"
                )
        print(
            f"page reads: p50 {pct(reads, 50):.1f} ms, p95 {pct(reads, 95):.1f} ms, p99 {pct(reads, 99):.1f} ms "
            f"(target p95 <= 300 ms: {'met' if pct(reads, 95) <= 300 else 'NOT met'})"
        )
        for failure in FAILURES[:10]:
            print(f"  failed: {failure}")
        print(
            f"CPU during the measured period, in cores busy (the machine has {os.cpu_count()}): "
            + ", ".join(f"{name} {ms / 1000 / elapsed:.2f}" for name, ms in cpu.items())
        )
        print(waits)

        from transcriber_tests.models import Score

        wait_until = time.monotonic() + 180
        while time.monotonic() < wait_until:
            if not queue_busy():
                break
            time.sleep(1)
        made = len(flagged)
        done = Score.objects.filter(
            flag__line_id__in=flagged, control__isnull=True, source="candidate"
        ).count()
        print(
            f"flags made during the load: {made}; candidate scores on them: {done} of {2 * made} "
            f"({'every flag ended scored' if done == 2 * made else 'SOME FLAGS NOT SCORED'}); "
            f"drained {time.monotonic() - (wait_until - 180):.0f} s after the load"
        )
    finally:
        stop(procs)
        ours.send("stop")
        vendor.join(timeout=10)
        from django.db import connections

        connections.close_all()
        psql(f"DROP DATABASE IF EXISTS {DB}")


if __name__ == "__main__":
    main()
