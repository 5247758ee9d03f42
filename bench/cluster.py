"""Several hosts on this one machine, in network namespaces joined by a bridge: a services host (PostgreSQL, Redis,
an S3-compatible server and a fake vendor, each started here with its own data directory), two web hosts
(gunicorn), two worker hosts (qcluster) and a load generator. 200 simulated admins for 120 s (bench/load.py's
behaviour: log in, read results pages and turn tables, flag lines into a bank, export the results, with think
time); halfway, every process of one worker host is killed. Prints requests, errors, page-read p50/p95/p99, flags
made and fully scored, lines transcribed twice, and how long the queue took to drain after the load.

    sudo .venv/bin/python bench/cluster.py [--users 200] [--seconds 120] [--flags 2000] [--think 1 5]

Run as root (ip netns). Traffic stays on the namespaces' own addresses (10.18.0.0/24, on a bridge inside a
namespace of its own); every namespace, process and data directory it made is removed when it ends, also on an
error or Ctrl-C. Targets: 0 errors, page reads p95 <= 300 ms, every flag scored, nothing transcribed twice.

"Transcribed twice": a line transcription claimed again although its first claim did not die with the killed host
(claims are conditional updates with a lease, so a second delivery of a task finds the row taken). The rows that
were running on the killed host when it died are transcribed again once their lease (Q_TIMEOUT) runs out: they are
counted apart, as the work the kill lost."""

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PY = sys.executable
PREFIX = "oc18"
NET = "10.18.0"
ADDRESSES = {"svc": 1, "web1": 11, "web2": 12, "wrk1": 21, "wrk2": 22, "load": 31}
SVC = f"{NET}.{ADDRESSES['svc']}"
WEBS = ["web1", "web2"]
WORKERS = ["wrk1", "wrk2"]
PG_BIN = Path("/usr/lib/postgresql/15/bin")
BUCKET = "oncore-cluster"
PASSWORD = "load-test-password-1"
S3_KEYS = {
    "AWS_ACCESS_KEY_ID": "cluster",
    "AWS_SECRET_ACCESS_KEY": "cluster",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def netns(host: str) -> str:
    return f"{PREFIX}-{host}"


def run(*args, **kwargs):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True, **kwargs)


def in_ns(host: str, *args) -> list[str]:
    return ["ip", "netns", "exec", netns(host), *[str(a) for a in args]]


# ---------------------------------------------------------------- the network


def our_namespaces() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split("\n")
    return [line.split()[0] for line in listed if line.startswith(f"{PREFIX}-")]


def kill_namespace(name: str, sig=signal.SIGKILL) -> int:
    """Signal every process in a namespace; how many there were."""
    pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), sig)
        except ProcessLookupError:
            pass
    return len(pids)


def remove_network() -> None:
    for name in our_namespaces():
        kill_namespace(name)
    time.sleep(0.5)
    for name in our_namespaces():
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)


def build_network() -> None:
    """A bridge in a namespace of its own, and one namespace per host with a veth to it."""
    switch = netns("sw")
    run("ip", "netns", "add", switch)
    run("ip", "-n", switch, "link", "add", "br0", "type", "bridge")
    run("ip", "-n", switch, "link", "set", "br0", "up")
    for host, last in ADDRESSES.items():
        name = netns(host)
        run("ip", "netns", "add", name)
        run(
            "ip",
            "link",
            "add",
            f"v-{host}",
            "netns",
            switch,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            name,
        )
        run("ip", "-n", switch, "link", "set", f"v-{host}", "master", "br0", "up")
        run("ip", "-n", name, "addr", "add", f"{NET}.{last}/24", "dev", "eth0")
        run("ip", "-n", name, "link", "set", "eth0", "up")
        run("ip", "-n", name, "link", "set", "lo", "up")


# ---------------------------------------------------------------- the hosts


class Cluster:
    def __init__(self, folder: Path, args):
        self.folder, self.args = folder, args
        self.procs = []
        self.env = {
            **os.environ,
            **S3_KEYS,
            "DJANGO_SETTINGS_MODULE": "oncore.settings",
            "DATABASE_URL": f"postgres://postgres@{SVC}:5432/oncore",
            "REDIS_URL": f"redis://{SVC}:6379/0",
            "STORAGE_BUCKET": BUCKET,
            "STORAGE_ENDPOINT_URL": f"http://{SVC}:5000",
            "STORAGE_REGION": "us-east-1",
            "STORAGE_ADDRESSING_STYLE": "path",
            "SECRET_KEY": "cluster-bench-only-secret-key-for-a-throwaway-database",
            "DEBUG": "0",
            "SECURE_COOKIES": "0",
            "ALLOWED_HOSTS": ",".join(f"{NET}.{ADDRESSES[w]}" for w in WEBS),
            "LOG_LEVEL": "WARNING",
            # A task killed with its host is handed out again once its lease (Q_TIMEOUT) runs out.
            "Q_WORKERS": "2",
            "Q_TIMEOUT": "30",
            "Q_RETRY": "40",
            "ONCORE_ORG_CONCURRENCY": "8",
            "ONCORE_ORG_QUEUE_LIMIT": "100000",  # the load is one organization: measure the queue, not the cap
        }

    def start(self, host: str, name: str, *command, env=None, nice=0):
        log = (self.folder / f"{host}-{name}.log").open("w")
        prefix = ["nice", "-n", str(nice)] if nice else []
        proc = subprocess.Popen(
            in_ns(host, *prefix, *command),
            cwd=ROOT,
            env=env or self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.procs.append(proc)
        return proc

    def start_services(self) -> None:
        pg = self.folder / "pg"
        pg.mkdir()
        shutil.chown(self.folder, "postgres")
        shutil.chown(pg, "postgres")
        as_postgres = ["runuser", "-u", "postgres", "--"]
        run(*as_postgres, PG_BIN / "initdb", "-D", pg, "-A", "trust", "-U", "postgres")
        with (pg / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {NET}.0/24 trust\n")
        run(
            *in_ns("svc"),
            *as_postgres,
            PG_BIN / "pg_ctl",
            "-D",
            pg,
            "-l",
            self.folder / "svc-postgres.log",
            "-w",
            "-o",
            f"-c listen_addresses={SVC} -c port=5432 -c unix_socket_directories={pg} -c max_connections=200",
            "start",
        )
        run(*in_ns("svc"), *as_postgres, PG_BIN / "createdb", "-h", SVC, "-U", "postgres", "oncore")
        redis_dir = self.folder / "redis"
        redis_dir.mkdir()
        self.start(
            "svc", "redis", "redis-server", "--bind", SVC, "--port", "6379", "--save", "", "--appendonly", "no",
            "--protected-mode", "no", "--dir", redis_dir,
        )  # fmt: skip
        self.start("svc", "s3", Path(PY).parent / "moto_server", "-H", SVC, "-p", "5000")
        self.start("svc", "vendor", PY, __file__, "--role", "vendor", "--folder", self.folder)
        vendor = wait_file(self.folder / "vendor.json", 30, "the fake vendor")
        self.env["DEEPGRAM_API_KEY"] = vendor["key"]
        self.env["CLUSTER_VENDOR_URL"] = vendor["url"]
        wait_port(SVC, 6379, 30)
        wait_port(SVC, 5000, 60)

    def start_hosts(self) -> None:
        for web in WEBS:
            self.start(
                web,
                "gunicorn",
                Path(PY).parent / "gunicorn",
                "oncore.wsgi",
                "-b",
                f"{NET}.{ADDRESSES[web]}:8000",
                "-w",
                "2",
                "-k",
                "gthread",
                "--threads",
                "4",
                "--keep-alive",
                "30",
                "--log-level",
                "warning",
            )
        for worker in WORKERS:
            self.start(worker, "qcluster", PY, "manage.py", "qcluster", nice=10)

    def role(self, name: str, host: str = "load") -> subprocess.Popen:
        """This script in another role, in a host's namespace, its output on this terminal."""
        return subprocess.Popen(
            in_ns(host, PY, __file__, "--role", name, "--folder", self.folder, *self.role_args()),
            cwd=ROOT,
            env=self.env,
        )

    def role_args(self) -> list[str]:
        a = self.args
        return ["--users", a.users, "--seconds", a.seconds, "--flags", a.flags, "--think", *a.think]

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def wait_file(path: Path, seconds: float, what: str) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            return json.loads(path.read_text())
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not start within {seconds:.0f} s")


def wait_port(host: str, port: int, seconds: float) -> None:
    """Wait until a port answers, from the load generator's host (the only way in)."""
    code = (
        "import socket, sys, time\n"
        f"end = time.monotonic() + {seconds}\n"
        "while time.monotonic() < end:\n"
        "    try:\n"
        f"        socket.create_connection(('{host}', {port}), 1).close(); sys.exit(0)\n"
        "    except OSError:\n"
        "        time.sleep(0.2)\n"
        "sys.exit(1)\n"
    )
    if subprocess.run(in_ns("load", PY, "-c", code)).returncode:
        raise RuntimeError(f"nothing answered on {host}:{port} within {seconds:.0f} s")


# ---------------------------------------------------------------- roles inside the namespaces


def role_vendor(folder: Path) -> None:
    """The fake vendor (Deepgram's API) on the services host; writes its address, then its request count."""
    from tests.json_server import LocalHttpServer
    from tests.transcribers.vendor_servers import FakeDeepgram

    LocalHttpServer.host = SVC
    vendor = FakeDeepgram(transcript="table for four at 8:30").start()
    (folder / "vendor.json").write_text(json.dumps({"url": vendor.base_url, "key": vendor.key}))
    while True:
        (folder / "vendor-count.tmp").write_text(str(len(vendor.requests)))
        os.replace(folder / "vendor-count.tmp", folder / "vendor-count")
        time.sleep(0.5)


def role_setup(folder: Path, args) -> None:
    """Schema, bucket, organization, admins, a full bank and recorded calls to flag: the plan for the load."""
    import django

    django.setup()
    import boto3
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command

    from bench import load
    from oncore.accounts.models import Membership, Organization
    from transcriber_tests.actions.synthetic import fill_bank

    boto3.client("s3", endpoint_url=os.environ["STORAGE_ENDPOINT_URL"]).create_bucket(Bucket=BUCKET)
    call_command("migrate", verbosity=0)
    org = Organization.objects.create(name="Cluster", slug="cluster")
    hashed = make_password(PASSWORD)  # once: every admin has the same password
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"admin{i}", password=hashed) for i in range(args.users)
    )
    Membership.objects.bulk_create(Membership(user=u, organization=org, role="admin") for u in users)
    bank = fill_bank(org, flags=args.flags, candidates=2, name="Cluster")
    load.vendor_candidates(bank, os.environ["CLUSTER_VENDOR_URL"], "cluster")
    # One ten-minute stereo recording in the bucket, shared by every call to flag.
    path = folder / "load.flac"
    load.write_recording(path)
    lines_by_user = load.calls_to_flag(org, users, path, "cluster")
    (folder / "plan.json").write_text(json.dumps({"bank": bank.pk, "lines": lines_by_user}))


def role_drive(folder: Path, args) -> None:
    """The load generator: every admin logs in, then acts until the deadline; halfway it asks for the kill."""
    import django

    django.setup()
    from bench import load

    plan = json.loads((folder / "plan.json").read_text())
    stats = {k: [] for k in ("login", *load.KINDS)}
    flagged, timing = [], {}
    lost = {}

    def snapshot():
        from transcriber_tests.models import Transcription

        lost["running"] = set(Transcription.objects.filter(status="running").values_list("pk", flat=True))

    async def logins():
        gate = asyncio.Semaphore(8)

        async def one(i, name):
            async with gate:
                base = f"http://{NET}.{ADDRESSES[WEBS[i % 2]]}:8000"
                return await load.log_in(name, stats, base)

        return await asyncio.gather(*(one(i, name) for i, name in enumerate(plan["lines"])))

    async def kill_halfway(started):
        await asyncio.sleep(args.seconds / 2)
        (folder / "kill-now").write_text("1")
        while not (folder / "killed").exists():
            await asyncio.sleep(0.1)
        timing["killed"] = time.monotonic() - started
        await asyncio.to_thread(snapshot)

    async def main():
        start = time.monotonic()
        clients = await logins()
        timing["logins"] = time.monotonic() - start
        # Every admin lands on the results page once before the measured period: each web process loads what
        # it loads on its first results page (the language detector's models), as a running site has.
        gate = asyncio.Semaphore(16)

        async def land(client):
            async with gate:
                await client.get(f"/banks/{plan['bank']}/")

        await asyncio.gather(*(land(c) for c in clients if c is not None))
        started = timing["started"] = time.monotonic()
        deadline = started + args.seconds
        await asyncio.gather(
            kill_halfway(started),
            *(
                load.user_loop(c, lines, plan["bank"], deadline, stats, flagged, args.think)
                for c, lines in zip(clients, plan["lines"].values(), strict=True)
                if c is not None
            ),
        )
        timing["ended"] = time.monotonic()

    asyncio.run(main())
    report(folder, args, stats, flagged, timing, lost.get("running", set()), load)


def report(folder, args, stats, flagged, timing, running_at_kill, load) -> None:
    from django.db.models import Count, Q

    from transcriber_tests.models import Flag, Score, Transcription

    elapsed = timing["ended"] - timing["started"]
    logins = [t for t, _ in stats["login"]]
    print(
        f"log-in of {len(logins)} admins (8 at a time, then a first results page each, before the measured "
        f"period): {timing['logins']:.0f} s; "
        f"p50 {load.pct(logins, 50):.0f} ms, failures {sum(1 for _, ok in stats['login'] if not ok)}"
    )
    total = sum(len(v) for k, v in stats.items() if k != "login")
    errors = sum(1 for k, v in stats.items() if k != "login" for _, ok in v if not ok)
    print(
        f"\n{args.users} admins for {args.seconds} s (think {args.think[0]}-{args.think[1]} s), two web hosts, "
        f"two worker hosts (one killed at {timing['killed']:.0f} s): {total:,} requests, {total / elapsed:.1f}/s, "
        f"{errors} errors"
    )
    print(f"{'kind':10} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>7}")
    reads = []
    for kind, values in stats.items():
        if kind == "login" or not values:
            continue
        times = [t for t, _ in values]
        if kind in load.READS:
            reads += times
        print(
            f"{kind:10} {len(values):6} {load.pct(times, 50):8.1f} {load.pct(times, 95):8.1f} "
            f"{load.pct(times, 99):8.1f} {sum(1 for _, ok in values if not ok):7}"
        )
    p95 = load.pct(reads, 95)
    print(
        f"page reads: p50 {load.pct(reads, 50):.1f} ms, p95 {p95:.1f} ms, p99 {load.pct(reads, 99):.1f} ms "
        f"(target p95 <= 300 ms: {'met' if p95 <= 300 else 'NOT met'})"
    )
    for failure in load.FAILURES[:10]:
        print(f"  failed: {failure}")

    end_of_load = time.monotonic()
    waiting = Transcription.objects.filter(status__in=["queued", "running"])
    at_end = waiting.count()
    while waiting.exists() and time.monotonic() - end_of_load < 600:
        time.sleep(1)
    drained = time.monotonic() - end_of_load
    flags = Flag.objects.filter(line_id__in=flagged)
    items = flags.annotate(
        n_scored=Count("scores", filter=Q(scores__source=Score.CANDIDATE, scores__control__isnull=True))
    )
    fully = sum(1 for f in items if f.n_scored == 2)
    controls_done = Score.objects.filter(
        flag__in=flags, control__isnull=False, source=Score.CANDIDATE
    ).count()
    controls = sum(f.controls.count() for f in flags)
    again = set(Transcription.objects.filter(attempts__gt=1).values_list("pk", flat=True))
    vendor_requests = int((folder / "vendor-count").read_text())
    finished = Transcription.objects.filter(
        status__in=["done", "failed"], transcriber__slug__startswith="cluster-deepgram"
    ).count()
    print(
        f"\nflags made during the load: {len(flagged)}; fully scored (both candidates on the flag and on its "
        f"{controls} control lines: {controls_done} of {2 * controls}): {fully} "
        f"({'every flag scored' if fully == len(flagged) and controls_done == 2 * controls else 'NOT ALL SCORED'})"
    )
    print(
        f"lines transcribed twice: {len(again - running_at_kill)} (target 0); transcribed again after the kill "
        f"(running on the killed host, lease expired): {len(again & running_at_kill)}; vendor requests "
        f"{vendor_requests:,} for {finished:,} finished transcriptions"
    )
    print(
        f"queue after the load: {at_end:,} waiting; drained in {drained:.0f} s "
        f"({'drained' if not waiting.exists() else 'NOT DRAINED after 600 s'})"
    )


# ---------------------------------------------------------------- the orchestration


def orchestrate(args) -> int:
    if os.geteuid() != 0:
        sys.exit("bench/cluster.py needs root (ip netns, veth, a bridge): run it with sudo.")
    remove_network()  # what a run killed without its clean-up may have left
    folder = Path(tempfile.mkdtemp(prefix="oncore-cluster-"))
    cluster = Cluster(folder, args)
    interrupted = []

    def stop(signum, frame):
        interrupted.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        t0 = time.monotonic()
        build_network()
        cluster.start_services()
        setup = cluster.role("setup")
        if setup.wait() != 0:
            raise RuntimeError("the set-up failed")
        print(
            f"set-up: network, PostgreSQL, Redis, S3 server and fake vendor on {SVC}, schema, {args.flags:,} flags "
            f"in the bank, {args.users} admins ({time.monotonic() - t0:.0f} s)"
        )
        cluster.start_hosts()
        for web in WEBS:
            wait_port(f"{NET}.{ADDRESSES[web]}", 8000, 90)
        drive = cluster.role("drive")
        while drive.poll() is None:
            if (folder / "kill-now").exists() and not (folder / "killed").exists():
                n = kill_namespace(netns(WORKERS[1]))
                (folder / "killed").write_text("1")
                print(f"killed worker host {WORKERS[1]}: {n} processes (SIGKILL)")
            time.sleep(0.2)
        return drive.returncode
    except KeyboardInterrupt:
        print("interrupted: cleaning up")
        return 130
    finally:
        cluster.stop()
        remove_network()
        left = our_namespaces()
        if args.keep_logs:
            args.keep_logs.mkdir(parents=True, exist_ok=True)
            for log in folder.glob("*.log"):
                shutil.copy(log, args.keep_logs / log.name)
            print(f"logs of every process: {args.keep_logs}")
        shutil.rmtree(folder, ignore_errors=True)
        print("removed every namespace, process and data directory" if not left else f"LEFT BEHIND: {left}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=120)
    parser.add_argument("--flags", type=int, default=2000, help="flags already in the bank before the load")
    parser.add_argument("--think", type=float, nargs=2, default=(1.0, 5.0), metavar=("MIN_S", "MAX_S"))
    parser.add_argument(
        "--keep-logs", type=Path, metavar="FOLDER", help="copy every process's log there at the end"
    )
    parser.add_argument("--role", choices=["vendor", "setup", "drive"], help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "vendor":
        role_vendor(args.folder)
    elif args.role == "setup":
        role_setup(args.folder, args)
    elif args.role == "drive":
        random.seed()
        role_drive(args.folder, args)
    else:
        sys.exit(orchestrate(args))


if __name__ == "__main__":
    main()
