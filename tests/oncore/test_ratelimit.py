"""Rate limits on what costs more as the data grow (fourth penetration test, finding 4: the trust figures took
seconds and +132 MB a request, and nothing bounded how often a key or a session could ask): each API key and each
dashboard session may send ONCORE_RATE_LIMIT_PER_MINUTE requests a minute to each group of costly endpoints, then
429 with Retry-After until the minute ends."""

import html
import os
import subprocess
import sys

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.urls import reverse

from oncore import ratelimit
from tests.api_schema import api_schema
from tests.fixtures import ApiClient, assert_error

pytestmark = pytest.mark.django_db

# Every operation whose cost grows with the data, and its group.
LIMITED = {
    "bank_results": "results",
    "bank_groups": "results",
    "bank_trends": "results",
    "bank_tags": "results",
    "bank_languages": "results",
    "turn_table": "turns",
    "bank_uncertainty": "trust",
    "confusions": "confusions",
    "expected_checks": "checks",
    "export_results": "exports",
    "export_turns": "exports",
    "export_confusions": "exports",
    "export_run": "exports",
}
# Their dashboard pages.
PAGES = {
    "tt:bank": "results",
    "tt:turn_table": "turns",
    "tt:bank_trust": "trust",
    "tt:export_results": "exports",
    "tt:export_turns": "exports",
    "tt:export_confusions": "exports",
}


@pytest.fixture
def limit(settings):
    settings.ONCORE = {**settings.ONCORE, "RATE_LIMIT_PER_MINUTE": 3}
    return 3


@pytest.fixture
def frozen_minute(monkeypatch):
    """The clock 15 s into a minute; `advance(s)` moves it on."""
    now = [1_800_000_000.0 + 15]
    monkeypatch.setattr(ratelimit.time, "time", lambda: now[0])

    def advance(seconds):
        now[0] += seconds

    return advance


def test_a_key_past_the_limit_gets_429_with_retry_after_and_what_to_do(api, bank, limit, frozen_minute):
    for _ in range(limit):
        assert api.get(f"/banks/{bank.pk}/results").status_code != 429
    refused = api.get(f"/banks/{bank.pk}/results")
    error = assert_error(refused, 429, "rate_limited")
    assert refused["Retry-After"] == "45"  # the rest of the minute
    assert error["detail"] == {"group": "results", "limit": 3, "retry_after": 45}
    assert "a key may send 3 a minute. Wait 45 s (Retry-After), then send it again." in error["message"]
    # The group counts together: the trend is refused too; another group is not.
    assert_error(api.get(f"/banks/{bank.pk}/trends"), 429, "rate_limited")
    assert api.get(f"/banks/{bank.pk}/turns").status_code == 200
    frozen_minute(45)  # the next minute
    assert api.get(f"/banks/{bank.pk}/results").status_code != 429


def test_each_key_counts_alone(api, client, org, bank, limit):
    from oncore.accounts.models import ApiKey

    for _ in range(limit + 1):
        api.get(f"/banks/{bank.pk}/uncertainty")
    assert_error(api.get(f"/banks/{bank.pk}/uncertainty"), 429, "rate_limited")
    other = ApiClient(client, ApiKey.generate(org, name="other")[1])
    assert other.get(f"/banks/{bank.pk}/uncertainty").status_code != 429


def test_a_refused_invalid_request_is_not_counted(api, bank, limit):
    for _ in range(limit + 2):
        assert_error(api.get(f"/banks/{bank.pk}/results", {"window": "0"}), 422, "validation_error")
    assert api.get(f"/banks/{bank.pk}/results").status_code != 429


def test_every_costly_operation_is_limited_and_says_so_in_the_schema():
    schema = api_schema()
    declared = {
        op["operationId"]
        for item in schema["paths"].values()
        for op in item.values()
        if "rate_limited" in op["responses"].get("429", {}).get("x-error-codes", [])
    }
    assert declared == set(LIMITED)
    for item in schema["paths"].values():
        for op in item.values():
            if op["operationId"] in LIMITED:
                assert "Retry-After" in op["responses"]["429"]["headers"]


@pytest.mark.parametrize(("operation", "group"), LIMITED.items())
def test_each_costly_operation_counts_in_its_group(api, done_run, limit, operation, group, frozen_minute):
    paths = {op["operationId"]: path for path, item in api_schema()["paths"].items() for op in item.values()}
    path = paths[operation].format(bank_id=done_run.bank_id, run_id=done_run.pk).removeprefix("/api/v1")
    for _ in range(limit):
        assert api.get(path).status_code != 429, path  # 200, or 503 while a figure is first computed
    refused = assert_error(api.get(path), 429, "rate_limited")
    assert refused["detail"]["group"] == group


@pytest.mark.parametrize(("name", "group"), PAGES.items())
def test_a_dashboard_session_past_the_limit_is_told_how_long_to_wait(
    admin_client, admin_user, bank, limit, frozen_minute, name, group
):
    url = reverse(name, args=[bank.pk])
    for _ in range(limit):
        assert admin_client.get(url).status_code != 429
    refused = admin_client.get(url)
    assert refused.status_code == 429 and refused["Retry-After"] == "45"
    page = html.unescape(refused.content.decode())
    assert (
        f"may ask for {ratelimit.GROUPS[group]} 3 times a minute. Wait 45 seconds, then reload the page."
        in page
    )
    elsewhere = Client()  # the same person in another session counts alone
    elsewhere.force_login(admin_user)
    assert elsewhere.get(url).status_code != 429


def test_the_default_is_generous_and_a_bad_value_stops_the_server():
    assert django_settings.ONCORE["RATE_LIMIT_PER_MINUTE"] == 60
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "oncore.settings", "DEBUG": "1"}
    environment.pop("DATABASE_URL", None)
    code = "import django; django.setup(); from oncore.config import config; print(config().rate_limit_per_minute)"
    for value, said in (("0", "must be at least 1"), ("lots", "is not a whole number")):
        started = subprocess.run(
            [sys.executable, "-c", code],
            cwd=django_settings.BASE_DIR,
            env={**environment, "ONCORE_RATE_LIMIT_PER_MINUTE": value},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert started.returncode != 0 and "ONCORE_RATE_LIMIT_PER_MINUTE=" in started.stderr, value
        assert said in started.stderr, started.stderr[-500:]
    allowed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=django_settings.BASE_DIR,
        env={**environment, "ONCORE_RATE_LIMIT_PER_MINUTE": "600"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert allowed.returncode == 0 and allowed.stdout.strip() == "600", allowed.stderr
