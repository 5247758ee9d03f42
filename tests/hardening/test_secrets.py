"""Secrets: vendor keys and the Anthropic key never reach the database, logs, pages, API bodies, CSV exports or
run manifests, even from a vendor that echoes its key back; API keys are stored as hashes and compared in
constant time; session and CSRF cookies are secure unless debugging."""

# ruff: noqa: F811 (tests take the imported fixtures as parameters)

import hashlib
import json
import logging
import re
import runpy
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.urls import reverse

from benchmark.entity import actions as benchmark_actions
from benchmark.entity import runs as benchmark_runs
from oncore.accounts import models as account_models
from oncore.accounts.models import ApiKey
from oncore.transcribers.models import Transcriber
from tests.llm_server import FakeAnthropic
from tests.transcribers.vendor_servers import FakeGeneric
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import JudgePick, Run, Transcription
from transcriber_tests.work import picks, tasks
from transcriber_tests.work import tasks as run_tasks

pytestmark = pytest.mark.django_db

VENDOR_ENV = "ONCORE_HARDENING_VENDOR_KEY"
VENDOR_KEY = "vk-hardening-5e1f0c93d7-VENDOR-SECRET"
ANTHROPIC_KEY = "sk-ant-hardening-a7d2b8c41f-LLM-SECRET"
# A distinctive piece of each key too, so a truncated or partly masked key is caught as well.
NEEDLES = (VENDOR_KEY, ANTHROPIC_KEY, "5e1f0c93d7", "a7d2b8c41f")
SAID = "Siobhan, table for four at eight thirty"
LOGGERS = (
    "",
    "httpx",
    "httpcore",
    "anthropic",
    "django",
    "django_q",
    "transcriber_tests",
    "oncore",
    "benchmark",
)
SETTINGS_FILE = Path(settings.BASE_DIR) / "oncore" / "settings.py"


def assert_no_secret(text, where):
    for needle in NEEDLES:
        assert needle not in text, f"a key ({needle[:6]}…) leaked into {where}"


def database_dump() -> str:
    """Every row of every table, every column as text."""
    parts = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            for row in cursor.fetchall():
                for value in row:
                    if isinstance(value, memoryview):
                        value = value.tobytes()
                    if isinstance(value, bytes):
                        value = value.decode("utf-8", "replace")
                    parts.append(f"{table}: {value}")
    return "\n".join(parts)


def body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8")
    return response.content.decode("utf-8")


@pytest.fixture
def debug_logs(caplog):
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def logged(caplog) -> str:
    return caplog.text + "\n".join(r.getMessage() for r in caplog.records)


@pytest.fixture
def vendors(monkeypatch):
    """Two fake vendors holding the distinctive key: one echoes it in every answer, one rejects it with a 401
    whose message repeats it."""
    monkeypatch.setenv(VENDOR_ENV, VENDOR_KEY)
    with FakeGeneric(key=VENDOR_KEY, transcript=SAID) as echo, FakeGeneric(key=VENDOR_KEY) as rejecting:
        echo.scenario, rejecting.scenario = "echo_key", "401"
        yield echo, rejecting


@pytest.fixture
def anthropic(monkeypatch):
    with FakeAnthropic(key=ANTHROPIC_KEY) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        yield server


def vendor_transcriber(server, slug) -> Transcriber:
    return Transcriber.objects.create(
        slug=slug,
        provider=Transcriber.GENERIC,
        model=slug,
        display_name=f"Vendor {slug}",
        price_per_minute="0.006",
        api_key_env=VENDOR_ENV,
        options={"url": f"{server.base_url}/transcribe", "json_path": "result.transcript"},
    )


def test_it_keeps_vendor_and_anthropic_keys_out_of_the_database_logs_pages_api_and_exports(
    org, recorded_call, make_transcriber, vendors, anthropic, debug_logs, admin_client, api
):
    echo_server, rejecting_server = vendors
    echo = vendor_transcriber(echo_server, "echo")
    rejecting = vendor_transcriber(rejecting_server, "rejecting")
    bank = actions.do_create_bank(org, name="Secrets", controls_per_flag=1)
    for t in (echo, make_transcriber("plain", "siobhan table for four at eight thirty"), rejecting):
        actions.do_add_candidate(bank, t, confirmed=True)

    # Flag -> transcribe -> score, and the judge's pick between the two matching versions.
    line = recorded_call.lines.get(position=0)
    flag = actions.do_flag_line(line, SAID, bank=bank, tags=["name"])
    tasks.drain()
    assert Transcription.objects.get(line=line, transcriber=echo).status == Transcription.DONE
    assert echo_server.requests and echo_server.requests[0].headers["authorization"] == f"Bearer {VENDOR_KEY}"
    failed = Transcription.objects.get(line=line, transcriber=rejecting)
    assert failed.status == Transcription.FAILED and "401" in failed.error and "[key removed]" in failed.error
    picks.maybe_pick_line(line.pk)
    assert JudgePick.objects.get(flag=flag, control=None).chosen_id is not None  # the judge was really asked

    # A full-call run with the judge, and one whose candidate is rejected on every line.
    judged = run_actions.do_start_run(bank, [recorded_call.pk], candidate=echo, confirmed=True)
    assert run_tasks.drain_run(judged.pk, max_seconds=60) == Run.DONE
    judged.refresh_from_db()
    assert judged.judge_status == Run.JUDGE_DONE
    assert anthropic.requests  # the fake API refuses any other key, so the judge really used this one
    broken = run_actions.do_start_run(bank, [recorded_call.pk], candidate=rejecting, confirmed=True)
    assert run_tasks.drain_run(broken.pk, max_seconds=60) == Run.DONE
    assert all(rl.candidate_failed for rl in broken.lines.all())

    assert_no_secret(database_dump(), "the database")

    # Pages, exports and API bodies, including the rejected vendor's error where it is shown.
    run_page = body(admin_client.get(reverse("runs:detail", args=[broken.pk])))
    assert "rejected the key in ONCORE_HARDENING_VENDOR_KEY (401)" in run_page and "[key removed]" in run_page
    run_csv = body(admin_client.get(reverse("runs:export", args=[broken.pk])))
    assert "[key removed]" in run_csv
    api_lines = api.get(f"/runs/{broken.pk}/lines")
    assert api_lines.status_code == 200 and "[key removed]" in body(api_lines)
    shown = [
        admin_client.get(reverse("tt:call", args=[recorded_call.pk])),
        admin_client.get(reverse("tt:bank", args=[bank.pk])),
        admin_client.get(reverse("tt:turn_table", args=[bank.pk])),
        admin_client.get(reverse("runs:detail", args=[judged.pk])),
        admin_client.get(reverse("runs:export", args=[judged.pk])),
        admin_client.get(reverse("tt:export_results", args=[bank.pk])),
        admin_client.get(reverse("tt:export_turns", args=[bank.pk])),
        admin_client.get(reverse("runs:bank_runs", args=[bank.pk])),
        api.get(f"/runs/{judged.pk}"),
        api.get(f"/runs/{broken.pk}"),
        api.get(f"/runs/{judged.pk}/lines.csv"),
        api.get(f"/banks/{bank.pk}/results"),
        api.get(f"/banks/{bank.pk}/turns"),
        api.get(f"/banks/{bank.pk}/turns.csv"),
        api.get(f"/banks/{bank.pk}/results.csv"),
        api.get(f"/calls/{recorded_call.pk}"),
        api.get("/flags"),
        api.get("/transcribers"),
    ]
    errors = [
        api.post("/flags", {"line_id": line.pk, "expected_text": SAID}),  # flag_exists
        api.post(f"/runs/{judged.pk}/retry-judge"),  # judge_not_failed
        api.get("/runs/999999"),  # not_found
        api.post("/flags", {"line_id": "x"}),  # validation_error
    ]
    for response in shown:
        assert response.status_code == 200, response
        assert_no_secret(body(response), response.wsgi_request.path)
    for response in errors:
        assert 400 <= response.status_code < 500 and "error" in response.json()
        assert_no_secret(body(response), f"the API error body of {response.wsgi_request.path}")
    for t in (echo, rejecting):
        assert_no_secret(
            body(admin_client.get(reverse("admin:transcribers_transcriber_change", args=[t.pk]))),
            "the admin's transcriber page",
        )

    assert debug_logs.records, "DEBUG logging was not captured"
    assert_no_secret(logged(debug_logs), "the logs")


def test_it_keeps_the_vendor_key_out_of_benchmark_runs_their_manifests_and_outputs(
    vendors, debug_logs, admin_client, tmp_path
):
    from benchmark.entity.importer import import_dataset
    from tests.benchmark.conftest import FIXTURE

    dataset = import_dataset(FIXTURE).dataset
    echo_server, rejecting_server = vendors
    done = benchmark_runs.create_run(dataset, vendor_transcriber(echo_server, "bench-echo"))
    failed = benchmark_runs.create_run(dataset, vendor_transcriber(rejecting_server, "bench-rejecting"))
    assert benchmark_runs.execute_run(done.pk).done == 5
    assert benchmark_runs.execute_run(failed.pk).failed == 5
    assert "[key removed]" in failed.hypotheses.first().error

    written = []
    for run in (done, failed):
        run.refresh_from_db()
        card = benchmark_actions.score_run(run, allow_incomplete=True)
        written += list(benchmark_actions.write_outputs(run, card, tmp_path / f"out-{run.pk}").values())
    assert_no_secret(database_dump(), "the database")
    for path in written:
        assert_no_secret(path.read_text(encoding="utf-8"), path.name)
    for run in (done, failed):
        for name in ("bench:run", "bench:run_manifest", "bench:run_summary", "bench:run_hits"):
            response = admin_client.get(reverse(name, args=[run.pk]))
            assert response.status_code == 200, (name, response.status_code)
            assert_no_secret(body(response), f"{name} of run {run.pk}")
    manifest = json.loads(body(admin_client.get(reverse("bench:run_manifest", args=[done.pk]))))
    assert manifest["run"]["transcriber"] == "bench-echo"  # it is the manifest of that run
    assert_no_secret(logged(debug_logs), "the logs")


def test_it_stores_api_keys_only_as_hashes_and_compares_them_in_constant_time(
    admin_client, org, api, monkeypatch
):
    page = admin_client.post(reverse("api_keys"), {"name": "Support portal"})
    assert page.status_code == 200
    raw = re.search(r"onc_[A-Za-z0-9_\-]{20,}", page.content.decode()).group(0)
    key = ApiKey.objects.get(name="Support portal")
    assert key.hashed_key == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in database_dump()
    assert raw not in admin_client.get(reverse("api_keys")).content.decode()  # shown once, never again

    # The key is looked up by its hash, then compared with hmac.compare_digest (constant time).
    compared = []
    real_compare = account_models.hmac.compare_digest

    def spy(a, b):
        compared.append((a, b))
        return real_compare(a, b)

    monkeypatch.setattr(account_models.hmac, "compare_digest", spy)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    assert admin_client.get("/api/v1/organization", **headers).status_code == 200
    assert compared == [(key.hashed_key, key.hashed_key)]
    wrong = raw[:-4] + ("AAAA" if not raw.endswith("AAAA") else "BBBB")
    assert admin_client.get("/api/v1/organization", HTTP_AUTHORIZATION=f"Bearer {wrong}").status_code == 401

    import inspect

    from oncore.api import OrganizationKey

    source = inspect.getsource(OrganizationKey.authenticate)
    assert "hashed_key=hash_key(token)" in source and "key.matches(token)" in source
    assert "hmac.compare_digest" in inspect.getsource(ApiKey.matches)
    assert "raw" not in {f.name for f in ApiKey._meta.get_fields()}


@pytest.mark.parametrize(
    ("env", "secure"),
    [
        ({"DEBUG": "0"}, True),
        ({}, True),
        ({"DEBUG": "1"}, False),
        ({"DEBUG": "0", "SECURE_COOKIES": "0"}, False),
    ],
    ids=["debug-off", "debug-unset", "debug-on", "debug-off-opted-out"],
)
def test_it_makes_session_and_csrf_cookies_secure_unless_debugging(monkeypatch, env, secure):
    for name in ("DEBUG", "SECURE_COOKIES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    loaded = runpy.run_path(str(SETTINGS_FILE))
    assert loaded["SESSION_COOKIE_SECURE"] is secure and loaded["CSRF_COOKIE_SECURE"] is secure
    assert loaded["SESSION_COOKIE_HTTPONLY"] is True


def test_it_sends_the_session_and_csrf_cookies_secure_and_http_only_after_logging_in(
    client, admin_user, settings
):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    admin_user.set_password("pw-for-tests-1")
    admin_user.save()
    login_page = client.get(reverse("login"))
    assert login_page.cookies["csrftoken"]["secure"] is True
    response = client.post(reverse("login"), {"username": admin_user.username, "password": "pw-for-tests-1"})
    assert response.status_code == 302
    session = response.cookies["sessionid"]
    assert session["secure"] is True and session["httponly"] is True
