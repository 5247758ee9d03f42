"""Queue throughput: flag lines into a bank, start the real queue (`manage.py qcluster`, two workers, PostgreSQL),
and time until every line transcription is final. Candidates are Deepgram catalogue entries pointed at a local
server that speaks Deepgram's API (in its own process), so each task does real clip cutting, HTTP and scoring.

    .venv/bin/python bench/queue_drain.py [--flags 500] [--chain 0 2]

Runs once per --chain value (ONCORE_TASK_CHAIN_S: 0 is one line per broker task; 2 is the default, where a task
goes straight on with its organization's next ready line), each on a fresh database `oncore_load`."""

import argparse
import multiprocessing
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import load  # noqa: E402


def drain_once(flags: int, chain: float, vendor_url: str, vendor_key: str) -> None:
    media = load.ROOT / "var" / "load-media"
    env = {
        "DATABASE_URL": load.DB_URL,
        "DJANGO_SETTINGS_MODULE": "oncore.settings",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-for-a-throwaway-database",
        "MEDIA_ROOT": str(media),
        "DEEPGRAM_API_KEY": vendor_key,
        "LOAD_VENDOR_URL": vendor_url,
        "Q_WORKERS": "2",
        "ONCORE_ORG_CONCURRENCY": "4",
        "ONCORE_TASK_CHAIN_S": str(chain),
        "LOG_LEVEL": "WARNING",
    }
    load.psql(f"DROP DATABASE IF EXISTS {load.DB}")
    load.psql(f"CREATE DATABASE {load.DB}")
    bank_id, lines_by_user = load.setup_data(env, 100, max(1, flags // 80 + 1), media)
    from django.db import connections
    from django.db.models import Count

    from oncore.calls.models import Line
    from transcriber_tests import actions
    from transcriber_tests.models import Bank, Transcription

    bank = Bank.objects.get(pk=bank_id)
    line_ids = [pk for ids in lines_by_user.values() for pk in ids][:flags]
    for line in Line.objects.filter(pk__in=line_ids).select_related("call"):
        actions.do_flag_line(line, "table for four at 8:30", bank=bank)
    waiting = Transcription.objects.filter(status__in=["queued", "running"])
    ids = list(waiting.values_list("id", flat=True))
    total = len(ids)
    started = time.monotonic()
    worker = subprocess.Popen(
        [str(load.ROOT / ".venv" / "bin" / "python"), "manage.py", "qcluster"],
        cwd=load.ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while waiting.exists() and time.monotonic() - started < 600:
            time.sleep(0.1)
        elapsed = time.monotonic() - started
        statuses = dict(
            Transcription.objects.filter(pk__in=ids).order_by().values_list("status").annotate(n=Count("id"))
        )
        print(
            f"ONCORE_TASK_CHAIN_S={chain:g}: {total} line transcriptions ({flags} flags with a control, 2 "
            f"candidates; lines shared by a flag and a control are transcribed once) final in {elapsed:.1f} s = "
            f"{total / elapsed:.1f} per second, counting the cluster's start; they ended {statuses}"
        )
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        connections.close_all()
        load.psql(f"DROP DATABASE IF EXISTS {load.DB}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flags", type=int, default=500)
    parser.add_argument("--chain", type=float, nargs="+", default=[0.0, 2.0])
    args = parser.parse_args()
    vendor_end, ours = multiprocessing.Pipe()
    vendor = multiprocessing.Process(target=load.serve_vendor, args=(vendor_end,), daemon=True)
    vendor.start()
    vendor_url, vendor_key = ours.recv()
    try:
        for chain in args.chain:
            drain_once(args.flags, chain, vendor_url, vendor_key)
    finally:
        ours.send("stop")
        vendor.join(timeout=10)


if __name__ == "__main__":
    main()
