"""Queue throughput: flag lines into a bank, start the real queue (`manage.py qcluster`, PostgreSQL), and time
until every line transcription is final.

Batch (the default): two workers; the candidates are Deepgram catalogue entries pointed at a local server that
speaks Deepgram's API (in its own process), so each task does real clip cutting, HTTP and scoring.

    .venv/bin/python bench/queue_drain.py [--flags 500] [--chain 0 2]

Runs once per --chain value (ONCORE_TASK_CHAIN_S: 0 is one line per broker task; 2 is the default, where a task
goes straight on with its organization's next ready line), each on a fresh database `oncore_load`.

Streaming: the demo's calls (fixtures/demo/: recorded speech, lines of 1 to 9 s) and a bank whose one candidate
is streaming, each of its timed caller lines flagged with what was said; every line is replayed as a live call,
its clip in 20 ms frames paced in real time, through the queue's workers (as many as --streams, each value in
turn: ONCORE_ORG_STREAMS = ONCORE_ORG_CONCURRENCY = Q_WORKERS, a session holding its worker for the line's
duration).

    .venv/bin/python bench/queue_drain.py --streaming deepgram [--streams 2 4] [--lines 65]
    .venv/bin/python bench/queue_drain.py --streaming local [--streams 2] [--lines 65]

`deepgram`: a fake Deepgram live vendor (tests/transcribers/stream_vendors.py, a WebSocket server in its own
process that answers at once); `local`: the catalogue's Whisper tiny.en streaming entry (faster-whisper with the
local-agreement policy, on this machine's CPU beside the workers). Prints streaming lines per minute (from the
cluster's start, and from the first session's start to the last final), the clip seconds replayed per wall
second, time to final p50/p95, the pacing accuracy (frames sent within +-5 ms of their schedule, from every row's
frames_sent and frames_off_schedule; the worst offset, from the sessions' pacing log lines) and, for `local`, the
accuracy against what was said. Each value runs on a fresh database `oncore_stream_drain`."""

import argparse
import math
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
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


# ---------------------------------------------------------------- streaming

STREAM_DB = "oncore_stream_drain"
STREAM_DB_URL = f"postgres://postgres@127.0.0.1:5432/{STREAM_DB}"
PACED = re.compile(
    r"streaming session paced: frames=(\d+) off_schedule=(\d+) worst_offset_ms=([\d.]+) time_to_final_s=(-?[\d.]+)"
)


def serve_stream_vendor(conn):
    """The fake Deepgram live vendor (a WebSocket server), in its own process."""
    from tests.transcribers.stream_vendors import FakeDeepgramLive

    with FakeDeepgramLive(transcript="table for four at eight thirty") as vendor:
        conn.send((vendor.base_url, vendor.key, vendor.key_env))
        conn.recv()


def _pct(values, q):
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)] if ordered else float("nan")


def stream_setup(env, kind: str, vendor, limit: int | None):
    """The demo's calls, and a bank whose one candidate is streaming with each timed caller line flagged (what was
    said, from the fixtures): its Transcription ids."""
    import json

    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("load_demo", flags=0, no_runs=True, stdout=open(os.devnull, "w"))
    from django.conf import settings

    from oncore.accounts.models import Organization
    from oncore.calls.models import Line
    from oncore.transcribers.models import Transcriber
    from transcriber_tests import actions
    from transcriber_tests.models import Transcription

    if kind == "local":
        entry = Transcriber.objects.get(slug="whisper-tiny-en-streaming")
    else:
        base_url, _key, key_env = vendor
        entry = Transcriber.objects.create(
            slug="drain-deepgram-live",
            provider="deepgram",
            model="nova-3",
            mode=Transcriber.STREAMING,
            display_name="Deepgram live (fake vendor)",
            price_per_minute="0.0077",
            api_key_env=key_env,
            options={"base_url": base_url},
        )
    fixtures = json.loads((settings.BASE_DIR / "fixtures" / "demo" / "calls.json").read_text())["calls"]
    said = {(c["external_id"], i): ln["said"] for c in fixtures for i, ln in enumerate(c["lines"])}
    org = Organization.objects.get(slug="demo")
    bank = actions.do_create_bank(org, name="Streaming drain", controls_per_flag=0)
    actions.do_add_candidate(bank, entry, confirmed=True)
    lines = (
        Line.objects.filter(call__tenant__organization=org, speaker=Line.CALLER, start_s__isnull=False)
        .exclude(call__recording="")
        .select_related("call")
        .order_by("call__started_at", "position")
    )
    for line in list(lines)[:limit]:
        text = said[(line.call.external_id, line.position)]
        actions.do_flag_line(line, text, bank=bank, confirm_matches_live=True)
    return entry, bank, list(Transcription.objects.filter(transcriber=entry).values_list("id", flat=True))


def stream_drain_once(kind: str, streams: int, vendor, limit: int | None) -> None:
    media = load.ROOT / "var" / "stream-drain-media"
    env = {
        "DATABASE_URL": STREAM_DB_URL,
        "DJANGO_SETTINGS_MODULE": "oncore.settings",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-for-a-throwaway-database",
        "MEDIA_ROOT": str(media),
        "Q_WORKERS": str(streams),
        "ONCORE_ORG_CONCURRENCY": str(streams),
        "ONCORE_ORG_STREAMS": str(streams),
        "LOG_LEVEL": "INFO",  # the sessions' pacing lines (streaming.session.PACING_LOG)
    }
    if vendor:
        env[vendor[2]] = vendor[1]
    load.psql(f"DROP DATABASE IF EXISTS {STREAM_DB}")
    load.psql(f"CREATE DATABASE {STREAM_DB}")
    entry, bank, ids = stream_setup(env, kind, vendor, limit)
    from django.db import connections
    from django.db.models import Count, Sum

    from transcriber_tests import queries
    from transcriber_tests.models import Transcription

    rows = Transcription.objects.filter(pk__in=ids)
    total = len(ids)
    log = tempfile.TemporaryFile(mode="w+")
    started = time.monotonic()
    worker = subprocess.Popen(
        [str(load.ROOT / ".venv" / "bin" / "python"), "manage.py", "qcluster"],
        cwd=load.ROOT,
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        while rows.filter(status__in=["queued", "running"]).exists() and time.monotonic() - started < 1800:
            time.sleep(0.2)
        elapsed = time.monotonic() - started
        statuses = dict(rows.order_by().values_list("status").annotate(n=Count("id")))
        done = rows.filter(status=Transcription.DONE)
        span = done.aggregate(audio=Sum("audio_seconds"))
        # The steady span: from the first session's start (the first final less its clip's duration: a session
        # lasts at least its audio) to the last final; rows are claimed before the cluster runs them.
        ends = list(done.order_by("updated_at").values_list("updated_at", "audio_seconds"))
        steady = (ends[-1][0] - ends[0][0]).total_seconds() + ends[0][1] if ends else float("nan")
        figures = done.aggregate(frames=Sum("frames_sent"), off=Sum("frames_off_schedule"))
        finals = list(done.exclude(latency_s=None).values_list("latency_s", flat=True))
        log.seek(0)
        paced = [m.groups() for m in PACED.finditer(log.read())]
        worst = max((float(w) for _, _, w, _ in paced), default=float("nan"))
        frames, off = figures["frames"] or 0, figures["off"] or 0
        n = statuses.get(Transcription.DONE, 0)
        print(
            f"{entry.display_name}, {streams} session{'s' if streams > 1 else ''} at once ({streams} workers, "
            f"ORG_STREAMS={streams}): {total} lines ({span['audio'] or 0:.1f} s of clips) in {elapsed:.1f} s "
            f"counting the cluster's start = {60 * n / elapsed:.1f} streaming lines per minute; "
            f"{60 * n / steady:.1f} per minute and {(span['audio'] or 0) / steady:.2f} clip seconds per second "
            f"from the first session's start to the last final ({steady:.1f} s); ended {statuses}"
        )
        print(
            f"  time to final p50 {_pct(finals, 50):.3f} s, p95 {_pct(finals, 95):.3f} s (n={len(finals)}); pacing: "
            f"{frames - off} of {frames} frames ({(frames - off) / frames if frames else float('nan'):.2%}) sent "
            f"within +-5 ms of schedule, worst offset {worst:.1f} ms over {len(paced)} logged sessions"
        )
        if kind == "local":
            card = next(c for c in queries.bank_results(bank, window_days=90).cards)
            s = card.summary
            print(
                f"  accuracy against what was said: {s.matches} of {s.scored} lines matched ({s.accuracy:.1%}), "
                f"mean WER {s.mean_wer:.3f}, {s.failed} failed"
            )
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        log.close()
        connections.close_all()
        load.psql(f"DROP DATABASE IF EXISTS {STREAM_DB}")


def stream_main(kind: str, streams_list, limit) -> None:
    if kind == "local":
        for streams in streams_list:
            stream_drain_once(kind, streams, None, limit)
        return
    vendor_end, ours = multiprocessing.Pipe()
    process = multiprocessing.Process(target=serve_stream_vendor, args=(vendor_end,), daemon=True)
    process.start()
    vendor = ours.recv()
    try:
        for streams in streams_list:
            stream_drain_once(kind, streams, vendor, limit)
    finally:
        ours.send("stop")
        process.join(timeout=10)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flags", type=int, default=500)
    parser.add_argument("--chain", type=float, nargs="+", default=[0.0, 2.0])
    parser.add_argument("--streaming", choices=["deepgram", "local"], help="drain streaming lines instead")
    parser.add_argument("--streams", type=int, nargs="+", default=[2], help="sessions at once (streaming)")
    parser.add_argument("--lines", type=int, default=None, help="at most this many lines (streaming)")
    args = parser.parse_args()
    if args.streaming:
        stream_main(args.streaming, args.streams, args.lines)
        return
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
