"""How long until `make run`'s demo is complete: load_demo, then a queue worker at a lower priority (as make run
starts it), polling the database until nothing is left to compute.

    .venv/bin/python bench/demo_ready.py

Runs on a throwaway SQLite database and media folder (removed at the end). Prints the seconds load_demo took,
the seconds until every flag's line was scored, the full-call run done, the benchmark and code-switching runs
done and the entity runs scored, then the full-call run's audio path agreement, the demo bank's cards with each
one's latency (the streaming candidate's time to final) and the streaming replays' pacing.
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
POLL_S = 5
WORST = re.compile(r"streaming session paced: .*?worst_offset_ms=([\d.]+)")  # streaming.session.PACING_LOG
LIMIT_S = 1800


def manage(*args, env, **kwargs):
    return subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=env, check=True, **kwargs)


def left(env) -> str:
    """What is still to compute, in words ("" when nothing is)."""
    script = """
from benchmark.models import BenchmarkRun, CsRun
from transcriber_tests.models import Run, Transcription
parts = {
    "transcriptions": Transcription.objects.filter(status__in=Transcription.ACTIVE).count(),
    "full-call runs": Run.objects.filter(status__in=Run.ACTIVE).count(),
    "entity runs": BenchmarkRun.objects.exclude(status=BenchmarkRun.DONE, scored_at__isnull=False).count(),
    "code-switching runs": CsRun.objects.exclude(status=CsRun.DONE).count(),
}
print(", ".join(f"{n} {what}" for what, n in parts.items() if n))
"""
    out = manage("shell", "--no-imports", "-c", script, env=env, capture_output=True, text=True)
    return out.stdout.strip()


def outcome(env) -> str:
    """The full-call run's audio path agreement and the bank's cards over the default window."""
    script = """
from transcriber_tests.models import Bank, Run
from transcriber_tests.queries import bank_results
from transcriber_tests.queries.runs import run_summary
s = run_summary(Run.objects.get())
print(f"full-call run's audio path agreement: {s.calibration_matched} of {s.calibration_compared} calibration "
      f"lines ({s.audio_path_agreement:.1%})")
from django.db.models import Sum
from transcriber_tests.queries.tradeoff import bank_tradeoff
from transcriber_tests.models import Transcription
for bank in Bank.objects.order_by("name"):
    results = bank_results(bank)
    choices = bank_tradeoff(bank, results).by_id
    print(f"bank {bank.name}:" + (f" the leader's lead comes from {results.lead_from} alone" if results.lead_from else ""))
    for card in results.cards:
        c = card.summary
        found = choices[card.transcriber.pk].latency
        print(f"  {'leader ' if card.is_leader else ''}{card.transcriber}: {c.matches} of {c.scored} scored lines matched"
              + (f" ({c.accuracy:.1%}), {c.failed} failed" if c.scored else "")
              + f"; fixed {c.flags_fixed} of {c.flags_scored} flagged lines, kept {c.controls_kept} of {c.control_scored} controls"
              + (" (the live transcriber's model)" if card.live_model else "")
              + (f"; {found.measure} p50 {found.p50_s:.3f} s, p95 {found.p95_s:.3f} s (n={found.lines})" if found else ""))
streamed = Transcription.objects.filter(mode=Transcription.STREAMING, status=Transcription.DONE)
if streamed.exists():
    f = streamed.aggregate(frames=Sum("frames_sent"), off=Sum("frames_off_schedule"))
    print(f"streaming replays: {streamed.count()} lines, {f['frames'] - f['off']} of {f['frames']} frames "
          f"({(f['frames'] - f['off']) / f['frames']:.2%}) sent within +-5 ms of their schedule")
"""
    return manage(
        "shell", "--no-imports", "-c", script, env=env, capture_output=True, text=True
    ).stdout.strip()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DEBUG": "1",
            "DATABASE_URL": f"sqlite:///{tmp}/demo.sqlite3",
            "MEDIA_ROOT": f"{tmp}/media",
        }
        manage("migrate", "-v0", env=env)
        started = time.monotonic()
        manage("load_demo", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        loaded = time.monotonic() - started
        print(f"load_demo: {loaded:.0f} s")
        log = open(f"{tmp}/qcluster.log", "w+")  # the streaming sessions' pacing lines (INFO)
        worker = subprocess.Popen(
            ["nice", "-n", "10", PY, "manage.py", "qcluster"],
            cwd=ROOT,
            env={**env, "LOG_LEVEL": "INFO"},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            while time.monotonic() - started < LIMIT_S:
                time.sleep(POLL_S)
                waiting = left(env)
                if not waiting:
                    break
                print(f"{time.monotonic() - started:5.0f} s: {waiting}", flush=True)
            done = time.monotonic() - started
        finally:
            worker.terminate()
            worker.wait(timeout=60)
        print(f"complete {done:.0f} s after load_demo started" if not waiting else f"not complete: {waiting}")
        print(outcome(env))
        log.seek(0)
        worst = [float(m) for m in WORST.findall(log.read())]
        log.close()
        if worst:
            print(
                f"worst frame offset from its schedule: {max(worst):.1f} ms over {len(worst)} streaming sessions"
            )


if __name__ == "__main__":
    main()
