"""Peak memory and time of the largest call import allowed (ONCORE_MAX_LINES_PER_IMPORT lines), through the API.

Builds calls files of that many lines in two shapes: long calls (ONCORE_MAX_LINES_PER_CALL lines each: 10 calls of
5,000 at the defaults), each line with a 40-character text and its timing, and one-line calls (50,000 calls, lines
without timing, so the file stays under ONCORE_MAX_IMPORT_FILE_MB); and the penetration test's file, 88 calls of
5,000 lines of a speaker alone (9.2 MB), which is refused. Each is sent as
POST /api/v1/calls/import through the WSGI app (Django's test client) in a fresh process, twice: once timed, for
the seconds and the process's peak resident memory (ru_maxrss, before the request and at its end), and once with
tracemalloc on, for the peak Python allocation during the request (the upload, the parse, the validation and the
writes). The database is a throwaway SQLite file, or with DATABASE_URL a test database made and dropped
(test_<name>), so it never touches real data.

    .venv/bin/python bench/import_memory.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/oncore .venv/bin/python bench/import_memory.py

Target: the largest import allowed grows the process by at most 100 MB and takes at most 10 s; the refused file
costs less than the largest allowed.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MB, TARGET_S = 100, 10
TEXT = "Could I book a table for four at eight?"  # 40 characters, a caller's line


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def _line(i: int, kind: str) -> dict:
    if kind == "bare":  # the penetration test's lines: a speaker alone
        return {"speaker": "caller"}
    line = {"speaker": ("caller", "assistant")[i % 2], "text": TEXT}
    return line if kind == "lean" else {**line, "start_s": i * 2.0, "end_s": i * 2.0 + 1.5}


def calls_file(path: Path, lines: int, per_call: int, kind: str) -> dict:
    """A calls file of `lines` lines, `per_call` to a call, written compactly; returns what it holds. `kind`:
    "full" calls (live transcriber, `recorded`, lines with their timing), "lean" (lines without timing) or
    "bare" (lines of a speaker alone)."""
    calls, left = [], lines
    while left > 0:
        n = min(per_call, left)
        call = {
            "external_id": f"bench-{len(calls) + 1}",
            "tenant": "bench",
            "started_at": "2025-03-01T18:00:00Z",
        }
        if kind == "full":
            call.update(recorded=False, live_transcriber={"name": "Old STT"})
        calls.append({**call, "lines": [_line(i, kind) for i in range(n)]})
        left -= n
    data = {"format": "oncore-calls/1", "tenants": [{"slug": "bench", "name": "Bench"}], "calls": calls}
    path.write_text(json.dumps(data, separators=(",", ":")))
    return {"lines": lines, "calls": len(calls), "mb": path.stat().st_size / 2**20}


def measure(path: Path, trace: bool) -> dict:
    """In a fresh process: the import of `path` over the API, timed, or traced."""
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{path.parent / 'bench.sqlite3'}")
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "oncore.settings",
            "SECRET_KEY": "bench-only-secret-key-for-a-throwaway-database",
            "ONCORE_VAR_DIR": str(path.parent),
            "MEDIA_ROOT": str(path.parent / "media"),
            "ALLOWED_HOSTS": "testserver",
            "LOG_LEVEL": "WARNING",
            "ONCORE_MAX_IMPORT_FILE_MB": os.environ.get("ONCORE_MAX_IMPORT_FILE_MB", "10"),
        }
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.db import connection
    from django.test import Client
    from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

    from oncore.accounts.models import ApiKey, Organization
    from oncore.calls.models import Line

    test_db = connection.vendor != "sqlite"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True) if test_db else None
    try:
        if not test_db:
            from django.core.management import call_command

            call_command("migrate", verbosity=0)
        org = Organization.objects.create(name="Bench", slug="bench")
        key = ApiKey.generate(org, name="bench")[1]
        client = Client(headers={"Authorization": f"Bearer {key}"})
        client.get("/api/v1/organization")  # imports and first-request set-up, not measured
        # The request's body is made before the measurement: what is measured is the server's work on it (the
        # test client's copy of the body, one file's size, is counted in).
        upload = SimpleUploadedFile("calls.json", path.read_bytes(), content_type="application/json")
        body = encode_multipart(BOUNDARY, {"file": upload})
        del upload

        before = rss_mb()
        if trace:
            tracemalloc.start()
        started = time.perf_counter()
        response = client.generic("POST", "/api/v1/calls/import", body, content_type=MULTIPART_CONTENT)
        seconds = time.perf_counter() - started
        traced_peak = tracemalloc.get_traced_memory()[1] if trace else 0
        tracemalloc.stop()
        body = response.json()
        return {
            "status": response.status_code,
            "answer": body if response.status_code == 200 else body["error"]["message"][:160],
            "stored_lines": Line.objects.count(),
            "seconds": round(seconds, 2),
            "rss_before_mb": round(before, 1),
            "rss_peak_mb": round(rss_mb(), 1),
            "traced_peak_mb": round(traced_peak / 2**20, 1),
        }
    finally:
        if test_db:
            connection.creation.destroy_test_db(old_name, verbosity=0)


def child(path: Path, trace: bool) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--measure", f"{path}|{'trace' if trace else 'time'}"],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        sys.exit(f"the measuring process failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lines", type=int, help="lines of the import (default: ONCORE_MAX_LINES_PER_IMPORT)"
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # PATH|time or PATH|trace, in the child process
    args = parser.parse_args()
    if args.measure:
        path, _, how = args.measure.partition("|")
        print(json.dumps(measure(Path(path), how == "trace")))
        return 0

    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-for-a-throwaway-database")
    sys.path.insert(0, str(ROOT))
    os.environ["DJANGO_SETTINGS_MODULE"] = "oncore.settings"
    from django.conf import settings

    limit = settings.ONCORE["MAX_LINES_PER_IMPORT"]
    per_call = settings.ONCORE["MAX_LINES_PER_CALL"]
    lines = args.lines or limit
    database = "PostgreSQL" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "SQLite"
    print(f"ONCORE_MAX_LINES_PER_IMPORT={limit:,}, ONCORE_MAX_LINES_PER_CALL={per_call:,}; {database}")
    shapes = [
        (f"{lines:,} timed lines in calls of {per_call:,}", lines, per_call, "full"),
        (f"{lines:,} one-line calls", lines, 1, "lean"),
        ("the pen test's 88 calls x 5,000 lines (refused)", 88 * 5000, 5000, "bare"),
    ]
    failed = False
    allowed_peak = 0.0
    with tempfile.TemporaryDirectory(prefix="oncore-import-memory-") as tmp:
        for title, n, size, kind in shapes:
            folder = Path(tempfile.mkdtemp(dir=tmp))
            shape = calls_file(folder / "calls.json", n, size, kind)
            timed = child(folder / "calls.json", trace=False)
            (folder / "bench.sqlite3").unlink(missing_ok=True)
            traced = child(folder / "calls.json", trace=True)
            grew = timed["rss_peak_mb"] - timed["rss_before_mb"]
            print(
                f"{title}: {shape['calls']:,} calls, {shape['mb']:.1f} MB of JSON -> {timed['status']} "
                f"{timed['answer']}\n    {timed['seconds']:.2f} s; peak RSS {timed['rss_peak_mb']:.1f} MB "
                f"(+{grew:.1f} MB over {timed['rss_before_mb']:.1f} MB); peak Python allocation "
                f"{traced['traced_peak_mb']:.1f} MB ({traced['traced_peak_mb'] * 2**20 / n:,.0f} bytes a line)"
            )
            if n <= limit:
                allowed_peak = max(allowed_peak, traced["traced_peak_mb"])
                failed |= timed["status"] != 200 or grew > TARGET_MB or timed["seconds"] > TARGET_S
            else:
                failed |= timed["status"] != 400 or traced["traced_peak_mb"] > allowed_peak
    print(
        f"target: the largest import allowed grows the process by at most {TARGET_MB} MB in at most {TARGET_S} s, "
        f"and a file over the limit costs less: {'missed' if failed else 'met'}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
