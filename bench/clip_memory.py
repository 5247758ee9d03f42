"""Peak memory of the line audio endpoint on a one-hour line of a 48 kHz stereo recording.

Writes one hour of 48 kHz stereo silence as FLAC (about 670 KB; it decodes to 691 MB of PCM) into a temporary
folder with a throwaway SQLite database, imports nothing else, times a caller line 0-3600 s, and fetches
GET /api/v1/lines/{id}/audio through the WSGI app (Django's test client), reading the body to the end: once
whole and once with `Range: bytes=0-99`. Each fetch runs in a fresh process, which prints its peak resident
memory (ru_maxrss, before and after the request), the peak Python allocation during the request (tracemalloc:
numpy arrays and bytes included), the bytes received and the time.

    .venv/bin/python bench/clip_memory.py [--minutes 60] [--rate 48000]

Target: the whole-clip request raises the process by at most 50 MB, whatever the line's length.
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
TARGET_MB = 50


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def measure(folder: Path, minutes: float, rate: int, range_header: str | None) -> dict:
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "oncore.settings",
            "SECRET_KEY": "bench-only-secret-key-for-a-throwaway-database",
            "DATABASE_URL": f"sqlite:///{folder / 'bench.sqlite3'}",
            "ONCORE_VAR_DIR": str(folder),
            "MEDIA_ROOT": str(folder / "media"),
            "ALLOWED_HOSTS": "testserver",
            "LOG_LEVEL": "WARNING",
        }
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.files import File
    from django.core.management import call_command
    from django.test import Client

    from oncore.accounts.models import ApiKey, Organization
    from oncore.calls.models import Call, Line

    call_command("migrate", verbosity=0)
    org = Organization.objects.create(name="Bench", slug="bench")
    tenant = org.tenants.create(name="Bench", slug="bench")
    call = Call.objects.create(tenant=tenant, started_at="2025-03-01T18:00:00Z", recorded=True)
    with (folder / "hour.flac").open("rb") as fh:
        call.recording.save("hour.flac", File(fh), save=True)
    line = Line.objects.create(
        call=call, position=0, speaker="caller", text="hello", start_s=0, end_s=minutes * 60
    )
    key = ApiKey.generate(org, name="bench")[1]
    client = Client(headers={"Authorization": f"Bearer {key}"})
    url = f"/api/v1/lines/{line.pk}/audio"
    client.get(f"/api/v1/calls/{call.pk}")  # imports and first-request set-up, not measured

    before = rss_mb()
    tracemalloc.start()
    started = time.perf_counter()
    response = client.get(url, headers={"Range": range_header} if range_header else {})
    if response.streaming:
        received = sum(len(chunk) for chunk in response.streaming_content)
    else:
        received = len(response.content)
    del response
    seconds = time.perf_counter() - started
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "request": f"Range: {range_header}" if range_header else "whole clip",
        "bytes": received,
        "seconds": round(seconds, 2),
        "rss_before_mb": round(before, 1),
        "rss_peak_mb": round(rss_mb(), 1),
        "traced_peak_mb": round(traced_peak / 2**20, 1),
    }


def write_recording(path: Path, minutes: float, rate: int) -> None:
    import numpy as np
    import soundfile as sf

    with sf.SoundFile(path, "w", samplerate=rate, channels=2, format="FLAC", subtype="PCM_16") as out:
        block = np.zeros((rate * 60, 2), dtype=np.int16)
        left = int(minutes * 60 * rate)
        while left > 0:
            out.write(block[: min(left, len(block))])
            left -= len(block)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--rate", type=int, default=48000)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # FOLDER|RANGE, in the child process
    args = parser.parse_args()
    if args.measure:
        folder, _, range_header = args.measure.partition("|")
        print(json.dumps(measure(Path(folder), args.minutes, args.rate, range_header or None)))
        return 0

    with tempfile.TemporaryDirectory(prefix="oncore-clip-memory-") as tmp:
        recording = Path(tmp) / "hour.flac"
        write_recording(recording, args.minutes, args.rate)
        print(
            f"recording: {args.minutes:g} min, {args.rate} Hz stereo FLAC, {recording.stat().st_size / 1024:.0f} KB; "
            f"one caller line 0-{args.minutes * 60:g} s"
        )
        worst = 0.0
        for range_header in ("", "bytes=0-99"):
            folder = Path(tempfile.mkdtemp(dir=tmp))
            (folder / "hour.flac").symlink_to(recording)
            child = subprocess.run(
                [sys.executable, __file__, "--minutes", str(args.minutes), "--rate", str(args.rate)]
                + ["--measure", f"{folder}|{range_header}"],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(child.stdout.strip().splitlines()[-1])
            grew = r["rss_peak_mb"] - r["rss_before_mb"]
            worst = max(worst, grew)
            print(
                f"{r['request']:>17}: {r['bytes'] / 2**20:8.1f} MB sent in {r['seconds']:5.2f} s; "
                f"peak RSS {r['rss_peak_mb']:7.1f} MB (+{grew:.1f} MB over {r['rss_before_mb']:.1f} MB); "
                f"peak Python allocation {r['traced_peak_mb']:.1f} MB"
            )
    verdict = "OK" if worst <= TARGET_MB else "OVER"
    print(
        f"{verdict}: the worst request raised the process by {worst:.1f} MB (target: at most {TARGET_MB} MB)"
    )
    return 0 if worst <= TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
