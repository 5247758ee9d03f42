"""Several hosts on one machine: two web processes (gunicorn) and two queue workers (qcluster), sharing PostgreSQL,
Redis (cache, broker, log-in counters) and an S3-compatible server (moto), all on 127.0.0.1. A call imported
through one web process and flagged through it is transcribed by a worker from the bucket; its results appear on
the other web process, whose cached results are invalidated by a write it never saw; its audio plays from the
bucket through either; failed log-ins counted by one are refused by the other.

Needs PostgreSQL and Redis (skipped without them outside CI; CI runs it: bench/cluster.py does the same with
separate network namespaces, under load)."""

import json
import os
import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np
import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from oncore import audio
from oncore.accounts.models import ApiKey
from tests.fixtures import S3_ENV, STT_KEY_ENV, make_bucket
from transcriber_tests import actions
from transcriber_tests.models import Bank

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "pw-for-tests-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(check, seconds: float, what: str):
    """Poll `check` until it returns something true; fail naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            found = check()
        except httpx.HTTPError:
            found = None
        if found:
            return found
        time.sleep(0.3)
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}")


@contextmanager
def hosts(env: dict, logs: Path):
    """Two gunicorn web processes and two qcluster workers with `env`; yields the two web base URLs."""
    bin_dir = Path(sys.executable).parent
    procs, urls = [], []
    try:
        for i in range(2):
            port = free_port()
            urls.append(f"http://127.0.0.1:{port}")
            procs.append(
                subprocess.Popen(
                    [str(bin_dir / "gunicorn"), "oncore.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1"],
                    cwd=ROOT,
                    env=env,
                    stdout=(logs / f"web{i}.log").open("w"),
                    stderr=subprocess.STDOUT,
                )
            )
            procs.append(
                subprocess.Popen(
                    [sys.executable, "manage.py", "qcluster"],
                    cwd=ROOT,
                    env=env,
                    stdout=(logs / f"worker{i}.log").open("w"),
                    stderr=subprocess.STDOUT,
                )
            )
        for url in urls:
            wait_for(
                lambda url=url: httpx.get(f"{url}/healthz", timeout=5).status_code == 200,
                90,
                f"{url}/healthz",
            )
        yield urls
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


def calls_file(tenant, live) -> bytes:
    lines = []
    for i, text in enumerate(["Shivon, table for for at 830", "yes that's right", "thank you bye"]):
        lines += [
            {"speaker": "caller", "text": text, "start_s": 4 * i + 0.2, "end_s": 4 * i + 1.8},
            {"speaker": "assistant", "text": "Sure.", "start_s": 4 * i + 2.2, "end_s": 4 * i + 3.6},
        ]
    call = {
        "external_id": "multi-1",
        "tenant": tenant.slug,
        "started_at": "2026-01-05T10:00:00+00:00",
        "recording": "multi-1.flac",
        "live_transcriber": {"slug": live.slug},
        "lines": lines,
    }
    return json.dumps({"format": "oncore-calls/1", "calls": [call]}).encode()


def log_in(client: httpx.Client, password: str) -> int:
    page = client.get("/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    return client.post(
        "/login/", data={"username": "ada", "password": password, "csrfmiddlewaretoken": token}
    ).status_code


def test_two_web_processes_and_two_workers_share_one_state(
    postgresql, redis_url, s3_server, org, tenant, admin_user, live_transcriber, make_transcriber, tmp_path
):
    bank = actions.do_create_bank(org, name="Shared", controls_per_flag=0)
    actions.do_add_candidate(
        bank, make_transcriber("good", "Siobhan, table for four at eight thirty"), confirmed=True
    )
    actions.do_add_candidate(bank, make_transcriber("bad", "Shivon table for four at 830"), confirmed=True)
    key = ApiKey.generate(org, name="hosts")[1]
    # The web processes hash passwords as production does (the tests' fast hasher is not among theirs).
    admin_user.password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    admin_user.save(update_fields=["password"])
    recording = tmp_path / "multi-1.flac"
    t = np.arange(8000 * 13) / 8000
    audio.write_recording(recording, np.stack([np.sin(t * 2000), np.sin(t * 3000)], axis=1) * 0.2, 8000)
    bucket = make_bucket(s3_server)
    env = {
        **os.environ,
        **S3_ENV,
        "DJANGO_SETTINGS_MODULE": "oncore.settings",
        "DATABASE_URL": postgresql,
        "REDIS_URL": redis_url,
        "STORAGE_BUCKET": bucket,
        "STORAGE_ENDPOINT_URL": s3_server,
        "STORAGE_REGION": "us-east-1",
        "STORAGE_ADDRESSING_STYLE": "path",
        "DEBUG": "0",
        "ONCORE_RATE_LIMIT_PER_MINUTE": "100000",  # the test polls several times a second
        "SECURE_COOKIES": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "Q_WORKERS": "1",
        "Q_POLL": "0.2",
        "LOG_LEVEL": "WARNING",
        STT_KEY_ENV: "test-key",
    }
    # The bank's figures were asked of this test process's own queue while the fixtures were made: the hosts'
    # queue is another (Redis), so they are asked of it afresh.
    Bank.objects.update(snapshots_dispatched_at=None)
    api_headers = {"Authorization": f"Bearer {key}"}
    with hosts(env, tmp_path) as (url_a, url_b):
        a = httpx.Client(base_url=url_a, timeout=30, headers=api_headers)
        b = httpx.Client(base_url=url_b, timeout=30, headers=api_headers)
        files = {
            "file": ("calls.json", calls_file(tenant, live_transcriber)),
            "recordings": ("multi-1.flac", recording.read_bytes()),
        }
        imported = a.post("/api/v1/calls/import", files=files)
        assert imported.status_code == 200 and imported.json()["calls"] == 1, imported.text

        results = f"/api/v1/banks/{bank.pk}/results"
        before = [c.get(results).json() for c in (a, b)]  # each process computes and caches the empty results
        assert all(r["candidates"][0]["scored"] == 0 for r in before)

        call = b.get("/api/v1/calls", params={"external_id": "multi-1"}).json()["items"][0]
        detail = b.get(f"/api/v1/calls/{call['id']}").json()
        line = next(item for item in detail["line_items"] if item["position"] == 0)
        flagged = a.post(
            "/api/v1/flags",
            json={
                "line_id": line["id"],
                "expected_text": "Siobhan, table for four at eight thirty",
                "bank_id": bank.pk,
            },
        )
        assert flagged.status_code == 201, flagged.text

        def scored_on_b():
            body = b.get(results).json()
            return (
                body if body["pending"] == 0 and all(c["scored"] == 1 for c in body["candidates"]) else None
            )

        body = wait_for(
            scored_on_b, 90, "a worker to transcribe and score the flag, seen on the other web process"
        )
        accuracy = {c["transcriber"]["slug"]: c["accuracy"] for c in body["candidates"]}
        assert accuracy == {"test-good": 1.0, "test-bad": 0.0}
        assert (
            a.get(results).json()["candidates"] == body["candidates"]
        )  # A's cached copy was invalidated too

        import redis

        shared = redis.Redis.from_url(redis_url)
        assert any(b"bank-results" in k for k in shared.keys("*"))  # the results cache lives in Redis

        clip = b.get(f"/api/v1/lines/{line['id']}/audio", headers={"Range": "bytes=0-99"})
        assert clip.status_code == 206 and clip.content[:4] == b"RIFF" and len(clip.content) == 100

        with (
            httpx.Client(base_url=url_a, timeout=30) as browser_a,
            httpx.Client(base_url=url_b, timeout=30) as browser_b,
        ):
            assert log_in(browser_b, PASSWORD) == 302  # logs in through either process
            for _ in range(5):
                assert log_in(browser_a, "wrong") == 200
            assert log_in(browser_b, PASSWORD) == 429  # the failures counted on A pause the user on B
