"""The shared fixtures, one pytest plugin registered by tests/conftest.py (`pytest_plugins`): any test asks for
them by name, nothing is re-exported by hand.

- People: an organization with a tenant, an org admin, an org member and an admin of another organization
  (the three users the house rules ask for), each with a logged-in client.
- The pipeline: a generic STT server on 127.0.0.1 (started once per session, reset for each test),
  transcribers that call it, and recorded two-channel calls (their FLAC files generated once per session).
- The API: an organization key, a client that sends it, `assert_error` for the one error shape, a bank with
  two candidates and a scored flag.
- The judge: a fake Anthropic Messages API (`llm_server`), and `no_judge` for runs without one.
- Full-call runs: `line_stt` (a server that answers per line), `world` (calls scripted line by line) and
  `run_setup` (a bank and two calls that cover every kind of run line); see tests/transcriber_tests/runs/support.py.
- Object storage: `s3_server` (an S3-compatible server on 127.0.0.1, moto in server mode) and `s3_storage`
  (recordings in a fresh bucket on it, as STORAGE_BUCKET configures them).

Every test gets its own MEDIA_ROOT, no backoff between retries, an empty cache and fast password hashing."""

import io
import os
from datetime import UTC, datetime
from functools import cache

import numpy as np
import pytest
from django.core.files.base import ContentFile

from oncore import audio
from tests.api_schema import check_declared
from tests.json_server import JsonServer
from tests.llm_server import FakeAnthropic

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

STT_KEY_ENV = "ONCORE_TEST_STT_KEY"
BASE = "/api/v1"


# ---------------------------------------------------------------------------------------- every test


@pytest.fixture(autouse=True)
def _isolated_settings(settings, tmp_path):
    """Recordings go to the test's own folder, retries do not wait, passwords hash in microseconds (PBKDF2
    takes a good part of a second per user)."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ONCORE = {**settings.ONCORE, "RETRY_BACKOFF_S": 0.0}
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty cache (the results page caches per bank)."""
    from django.core.cache import cache as django_cache

    django_cache.clear()


# ---------------------------------------------------------------------------------------- people


@pytest.fixture
def org(db):
    from oncore.accounts.models import Organization

    return Organization.objects.create(name="Acme Dining", slug="acme")


@pytest.fixture
def other_org(db):
    from oncore.accounts.models import Organization

    return Organization.objects.create(name="Other Co", slug="other")


@pytest.fixture
def tenant(org):
    return org.tenants.create(name="Bistro", slug="bistro")


@pytest.fixture
def other_tenant(other_org):
    return other_org.tenants.create(name="Elsewhere", slug="elsewhere")


def _user(django_user_model, username, organization, role):
    from oncore.accounts.models import Membership

    user = django_user_model.objects.create_user(username=username, password="pw-for-tests-1")
    Membership.objects.create(user=user, organization=organization, role=role)
    return user


@pytest.fixture
def admin_user(django_user_model, org):
    return _user(django_user_model, "ada", org, "admin")


@pytest.fixture
def member_user(django_user_model, org):
    return _user(django_user_model, "max", org, "member")


@pytest.fixture
def other_admin(django_user_model, other_org):
    return _user(django_user_model, "olga", other_org, "admin")


@pytest.fixture
def staff_client(db, django_user_model):
    """The operator: a staff user in no organization (benchmark runs and datasets are theirs), with a client of
    its own, so a test can hold it beside admin_client."""
    from django.test import Client

    operator = Client()
    operator.force_login(
        django_user_model.objects.create_user(username="root", password="pw-for-tests-1", is_staff=True)
    )
    return operator


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def member_client(client, member_user):
    client.force_login(member_user)
    return client


@pytest.fixture
def other_client(client, other_admin):
    client.force_login(other_admin)
    return client


# ---------------------------------------------------------------------------------------- the pipeline


class SttServer(JsonServer):
    """Answers POST /stt/<name> in the generic endpoint's shape ({"result": {"transcript": ...}} with a bearer
    key) with the text set for <name>, or with the error status set for it."""

    def __init__(self):
        self.reset()
        super().__init__()

    def reset(self):
        self.texts: dict[str, str] = {}
        self.statuses: dict[str, int] = {}
        self.requests: list[str] = []

    def respond(self, path, headers, body):
        name = path.rsplit("/", 1)[-1]
        self.requests.append(name)
        if headers.get("authorization") != "Bearer test-key":
            return 401, {"error": "bad key"}
        status = self.statuses.get(name, 200)
        if status != 200:
            return status, {"error": "failure"}
        return 200, {"result": {"transcript": self.texts.get(name, "")}}


@pytest.fixture(scope="session")
def _stt_server_for_session():
    server = SttServer()
    yield server
    server.close()


@pytest.fixture
def stt_server(_stt_server_for_session, monkeypatch):
    monkeypatch.setenv(STT_KEY_ENV, "test-key")
    _stt_server_for_session.reset()
    return _stt_server_for_session


@pytest.fixture
def make_transcriber(db, stt_server):
    from oncore.transcribers.models import Transcriber

    def make(name, text="", price="0.006"):
        stt_server.texts[name] = text
        return Transcriber.objects.create(
            slug=f"test-{name}",
            provider=Transcriber.GENERIC,
            model=name,
            display_name=f"Test {name}",
            price_per_minute=price,
            api_key_env=STT_KEY_ENV,
            options={
                "url": f"{stt_server.url}/stt/{name}",
                "auth": "bearer",
                "json_path": "result.transcript",
            },
        )

    return make


@pytest.fixture
def live_transcriber(make_transcriber):
    return make_transcriber("live", "")


@cache
def tone_recording(seconds: float, channels: int = 2, rate: int = 8000) -> bytes:
    """A FLAC of sine tones (440 Hz caller, 660 Hz assistant), made once per length in a test session."""
    t = np.arange(int(seconds * rate)) / rate
    tones = [0.3 * np.sin(2 * np.pi * f * t) for f in (440, 660)][:channels]
    buffer = io.BytesIO()
    audio.write_recording(buffer, np.stack(tones, axis=1), rate)
    return buffer.getvalue()


def save_recording(call, seconds: float, channels: int = 2) -> None:
    call.recording.save(
        f"call-{call.pk}.flac", ContentFile(tone_recording(round(seconds, 3), channels)), save=True
    )


def make_call(tenant, live, *, caller_texts, recorded=True, seconds_per_line=2.0):
    """A two-channel call: caller lines at 0, 4, 8... s, each followed by an assistant line."""
    from oncore.calls.models import Assistant, Call, Line

    assistant = Assistant.objects.create(tenant=tenant, name="Bookings", instructions="Take bookings.")
    call = Call.objects.create(
        tenant=tenant,
        assistant=assistant,
        started_at=datetime.now(UTC),
        recorded=recorded,
        live_transcriber=live,
    )
    if recorded:
        save_recording(call, len(caller_texts) * 2 * seconds_per_line + 1.0)
    position = 0
    for i, text in enumerate(caller_texts):
        start = i * 2 * seconds_per_line + 0.2
        Line.objects.create(
            call=call,
            position=position,
            speaker="caller",
            text=text,
            start_s=start,
            end_s=start + seconds_per_line - 0.4,
        )
        Line.objects.create(
            call=call,
            position=position + 1,
            speaker="assistant",
            text="Sure.",
            start_s=start + seconds_per_line,
            end_s=start + 2 * seconds_per_line - 0.4,
        )
        position += 2
    call.n_lines = position  # the counter the import keeps
    call.save(update_fields=["n_lines"])
    return call


@pytest.fixture
def recorded_call(tenant, live_transcriber):
    return make_call(
        tenant,
        live_transcriber,
        caller_texts=[
            "Shivon, table for for at 830",
            "yes that's right",
            "my number is 0 8 7",
            "thank you bye",
        ],
    )


# ---------------------------------------------------------------------------------------- the API


class ApiClient:
    """The Django test client with an Authorization header, JSON bodies and paths relative to /api/v1."""

    def __init__(self, client, raw_key):
        self.client = client
        self.headers = {"Authorization": f"Bearer {raw_key}"} if raw_key else {}

    def get(self, path, params=None, **headers):
        return self.client.get(BASE + path, params or {}, headers={**self.headers, **headers})

    def post(self, path, body=None, **headers):
        return self.client.post(
            BASE + path, body or {}, content_type="application/json", headers={**self.headers, **headers}
        )

    def patch(self, path, body=None):
        return self.client.patch(
            BASE + path, body or {}, content_type="application/json", headers=self.headers
        )

    def put(self, path, body=None):
        return self.client.put(BASE + path, body or {}, content_type="application/json", headers=self.headers)

    def delete(self, path):
        return self.client.delete(BASE + path, headers=self.headers)

    def upload(self, path, data):
        return self.client.post(BASE + path, data, headers=self.headers)


def assert_error(response, status, code):
    """The response is the one error shape with this status and code; returns its `error` object."""
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "detail"}, body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["detail"], dict) and body["error"]["message"]
    check_declared(response)  # the body is exactly what the operation's schema declares for this status
    return body["error"]


@pytest.fixture
def org_key(org):
    from oncore.accounts.models import ApiKey

    return ApiKey.generate(org, name="tests")[1]


@pytest.fixture
def api(client, org_key):
    return ApiClient(client, org_key)


@pytest.fixture
def other_api(client, other_org):
    from oncore.accounts.models import ApiKey

    return ApiClient(client, ApiKey.generate(other_org, name="other")[1])


@pytest.fixture
def bank(org, make_transcriber):
    """A bank with a candidate that writes the line right and one that writes it as the live transcript."""
    from transcriber_tests import actions

    bank = actions.do_create_bank(org, name="English", language_label="English")
    actions.do_add_candidate(
        bank, make_transcriber("good", "Siobhan, table for four at eight thirty"), confirmed=True
    )
    actions.do_add_candidate(bank, make_transcriber("bad", "Shivon table for four at 830"), confirmed=True)
    return bank


@pytest.fixture
def flag(bank, recorded_call):
    """The first caller line flagged into `bank`, every candidate scored."""
    from transcriber_tests import actions
    from transcriber_tests.work import tasks

    line = recorded_call.lines.get(position=0)
    flag = actions.do_flag_line(line, "Siobhan, table for four at eight thirty", bank=bank, tags=["name"])
    tasks.drain()
    return flag


def make_webhook(organization):
    """A webhook endpoint of the organization (made directly: its URL is not checked) with one delivered
    run.finished event."""
    from django.utils import timezone

    from oncore.webhooks.models import WebhookDelivery, WebhookEndpoint

    webhook = WebhookEndpoint.objects.create(
        organization=organization, url="https://hooks.acme.example/oncore", events=["run.finished"]
    )
    now = timezone.now()
    delivery = WebhookDelivery.objects.create(
        endpoint=webhook,
        event_id="evt_made",
        event_type="run.finished",
        body='{"id": "evt_made", "type": "run.finished", "created_at": "2026-01-01T00:00:00Z", "data": {}}',
        status=WebhookDelivery.DELIVERED,
        attempts=1,
        next_attempt_at=now,
        retry_until=now,
    )
    return webhook, delivery


@pytest.fixture
def owned(org, tenant, recorded_call, make_transcriber, admin_user):
    """One of each object of the organization, for the tests that walk every URL (the isolation matrix, the
    hostile-input walk): a bank with a candidate, a flag, a run, a free caller line, API keys and a webhook
    endpoint with a delivered event, a vocabulary."""
    from oncore.accounts.models import ApiKey
    from transcriber_tests import actions
    from transcriber_tests.actions import runs as run_actions
    from transcriber_tests.actions import vocabularies

    bank = actions.do_create_bank(org, name="Secret bank")
    candidate = make_transcriber("secret", "Siobhan")
    actions.do_add_candidate(bank, candidate, confirmed=True)
    lines = list(recorded_call.lines.filter(speaker="caller").order_by("position"))
    flag = actions.do_flag_line(lines[0], "Siobhan, table for four", bank=bank)
    run = run_actions.do_start_run(bank, [recorded_call.pk], candidate=candidate, confirmed=True)
    key, raw = ApiKey.generate(org, name="owner")
    tenant_key = ApiKey.generate(org, tenant=tenant, name="tenant")[1]
    webhook, delivery = make_webhook(org)
    vocabulary = vocabularies.do_create_vocabulary(org, name="Secret menu", terms=["Siobhan"])
    return {
        "bank": bank,
        "candidate": candidate,
        "call": recorded_call,
        "line": lines[0],
        "free_line": lines[2],
        "flag": flag,
        "run": run,
        "run_line": run.lines.first(),
        "key": key,
        "raw_key": raw,
        "tenant_key": tenant_key,
        "webhook": webhook,
        "delivery": delivery,
        "vocabulary": vocabulary,
    }


# ---------------------------------------------------------------------------------------- the judge


@pytest.fixture(scope="session")
def _llm_server_for_session():
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def llm_server(_llm_server_for_session, monkeypatch):
    """A running fake Messages API, with ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL pointing at it."""
    server = _llm_server_for_session
    server.reset()
    monkeypatch.setenv("ANTHROPIC_API_KEY", server.key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    return server


@pytest.fixture
def no_judge(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


# ---------------------------------------------------------------------------------------- full-call runs


@pytest.fixture(scope="session")
def _line_stt_for_session():
    from tests.transcriber_tests.support import LineStt

    server = LineStt()
    yield server
    server.close()


@pytest.fixture
def line_stt(_line_stt_for_session, monkeypatch):
    from tests.transcriber_tests.support import KEY_ENV

    monkeypatch.setenv(KEY_ENV, "run-test-key")
    _line_stt_for_session.reset()
    return _line_stt_for_session


@pytest.fixture
def world(tenant, line_stt):
    from tests.transcriber_tests.support import RunWorld

    return RunWorld(tenant, line_stt)


@pytest.fixture
def run_setup(org, world):
    """A bank whose only candidate leads on one flag, and two calls that cover every kind of line."""
    from tests.transcriber_tests.support import build_run_setup

    return build_run_setup(org, world)


@pytest.fixture
def done_run(run_setup, llm_server):
    """A finished run over both calls of run_setup, labelled by the scripted judge."""
    from tests.transcriber_tests.support import scripted_judge
    from transcriber_tests.actions import runs as run_actions
    from transcriber_tests.models import Run
    from transcriber_tests.work import tasks as run_tasks

    bank, cand, call_a, call_b = run_setup
    llm_server.responder = scripted_judge
    run = run_actions.do_start_run(bank, [call_a.pk, call_b.pk], confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    return run


# ---------------------------------------------------------------------------------------- object storage

S3_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture(scope="session")
def s3_server():
    """An S3-compatible server on 127.0.0.1 (moto in server mode), for the whole session: its endpoint URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def make_bucket(endpoint_url: str) -> str:
    """A new, empty bucket on the server: its name."""
    import uuid

    import boto3

    bucket = f"oncore-test-{uuid.uuid4().hex[:16]}"
    boto3.client("s3", endpoint_url=endpoint_url, region_name="us-east-1", **_s3_keys()).create_bucket(
        Bucket=bucket
    )
    return bucket


def _s3_keys() -> dict:
    return {
        "aws_access_key_id": S3_ENV["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": S3_ENV["AWS_SECRET_ACCESS_KEY"],
    }


@pytest.fixture
def s3_storage(s3_server, settings, monkeypatch):
    """Recordings go to a fresh bucket on the local S3 server, as STORAGE_BUCKET does in production: the bucket's
    name, its endpoint and a boto3 client to look inside it."""
    from types import SimpleNamespace

    import boto3

    from oncore.settings import object_storage

    for name, value in S3_ENV.items():
        monkeypatch.setenv(name, value)
    bucket = make_bucket(s3_server)
    settings.STORAGES = object_storage(
        bucket, endpoint_url=s3_server, region="us-east-1", addressing_style="path"
    )
    client = boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1", **_s3_keys())
    return SimpleNamespace(bucket=bucket, endpoint_url=s3_server, client=client)


# ---------------------------------------------------------------------------------------- services of several hosts

REDIS_TEST_DB = 11  # the Redis database number these tests use (CI's Redis is shared with other runs)


def missing_service(message: str):
    """Skip a test whose service is missing, except in CI (CI=true), where it fails: CI must run it."""
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def redis_url():
    """redis://127.0.0.1:6379/11, emptied before and after the test."""
    import redis

    url = f"redis://127.0.0.1:6379/{REDIS_TEST_DB}"
    client = redis.Redis.from_url(url, socket_connect_timeout=2)
    try:
        client.flushdb()
    except redis.RedisError as exc:
        missing_service(f"needs Redis on 127.0.0.1:6379 (CI has one): {exc}")
    yield url
    client.flushdb()
    client.close()


@pytest.fixture
def postgresql(transactional_db):
    """The test database, committed as the test goes (other processes read it), when it is PostgreSQL: its URL."""
    from django.db import connection

    if connection.vendor != "postgresql":
        missing_service(
            "needs PostgreSQL (CI runs it): other processes must share the test database; run with "
            "DATABASE_URL=postgres://..."
        )
    from urllib.parse import quote

    s = connection.settings_dict
    user = quote(s["USER"] or "") + (f":{quote(s['PASSWORD'])}" if s.get("PASSWORD") else "")
    return f"postgres://{user}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
