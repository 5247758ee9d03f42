"""REDIS_URL: the cache (results, the log-in throttle's counters) and the queue's broker move to Redis, so every
process of every host sees the same; without it, a local memory cache, the ORM broker and counters in the
database, as a single machine needs. Checked against the Redis server on 127.0.0.1:6379 (its database 11)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from oncore.accounts import login
from oncore.accounts.models import LoginFailure

ROOT = Path(__file__).resolve().parents[2]


def run_django(code: str, **env) -> str:
    """Run Python in a fresh process with the project's settings (as a web or worker host would), printing JSON."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "oncore.settings", "DEBUG": "1", **env}
    environment.pop("DATABASE_URL", None)  # these processes touch no database
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()\n" + code],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_it_switches_the_cache_the_broker_and_the_login_counters_with_redis_url():
    code = (
        "import json; from django.conf import settings as s\n"
        "print(json.dumps([s.CACHES['default']['BACKEND'], s.Q_CLUSTER.get('redis'), 'orm' in s.Q_CLUSTER, "
        "s.ONCORE['LOGIN_COUNTERS']]))"
    )
    with_redis = json.loads(run_django(code, REDIS_URL="redis://127.0.0.1:6379/11"))
    assert with_redis == [
        "django.core.cache.backends.redis.RedisCache",
        "redis://127.0.0.1:6379/11",
        False,
        "cache",
    ]
    alone = json.loads(run_django(code, REDIS_URL=""))
    assert alone == ["django.core.cache.backends.locmem.LocMemCache", None, True, "database"]


def test_processes_share_the_cache_and_the_login_counters_through_redis(redis_url):
    env = {"REDIS_URL": redis_url}
    # One process counts three failures and caches a value; another sees both, and counts two more.
    run_django(
        "from oncore.accounts import login\n"
        "[login._record_failure('ada', '10.0.0.9') for _ in range(3)]\n"
        "from django.core.cache import cache; cache.set('shared-probe', 'from the first process', 60); print(1)",
        **env,
    )
    seen = run_django(
        "import json; from oncore.accounts import login\n"
        "[login._record_failure('ada', '10.0.0.9') for _ in range(2)]\n"
        "from django.core.cache import cache\n"
        "print(json.dumps([cache.get('shared-probe'), login.failures('ada', '10.0.0.9'), "
        "login.is_paused('ada', '10.0.0.9')]))",
        **env,
    )
    assert json.loads(seen) == ["from the first process", [5, 5], True]


@pytest.fixture
def cache_counters(settings):
    settings.ONCORE = {**settings.ONCORE, "LOGIN_COUNTERS": "cache"}


def test_the_throttle_counts_in_the_cache_when_told_and_forgets_on_success(
    cache_counters, client, admin_user
):
    for _ in range(4):
        response = client.post(
            reverse("login"), {"username": "ADA", "password": "wrong"}, REMOTE_ADDR="10.0.0.2"
        )
        assert response.status_code == 200
    assert login.failures("ada", "10.0.0.2") == (4, 4) and not LoginFailure.objects.exists()
    ok = client.post(
        reverse("login"), {"username": "ada", "password": "pw-for-tests-1"}, REMOTE_ADDR="10.0.0.2"
    )
    # Forgotten for the address too, as the database counters forget them: both backends throttle alike.
    assert ok.status_code == 302 and login.failures("ada", "10.0.0.2") == (0, 0)
    for _ in range(5):
        client.post(reverse("login"), {"username": "ada", "password": "wrong"}, REMOTE_ADDR="10.0.0.2")
    refused = client.post(
        reverse("login"), {"username": "ada", "password": "pw-for-tests-1"}, REMOTE_ADDR="10.0.0.2"
    )
    assert refused.status_code == 429


def test_the_cache_counters_forget_failures_older_than_the_window(cache_counters, monkeypatch, settings):
    settings.ONCORE = {**settings.ONCORE, "LOGIN_WINDOW_MINUTES": 2}
    login._record_failure("ada", "10.0.0.3")
    minute = login._minute()
    monkeypatch.setattr(login, "_minute", lambda: minute + 3)
    assert login.failures("ada", "10.0.0.3") == (0, 0)
