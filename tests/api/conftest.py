"""API fixtures: an organization key, a client that sends it, and the pipeline fixtures of transcriber_tests
(a generic STT server on 127.0.0.1, transcribers that call it, a recorded call)."""

import pytest

from oncore.accounts.models import ApiKey
from tests.transcriber_tests import conftest as pipeline
from transcriber_tests import actions, tasks

# The pipeline's fixtures, shared by name.
stt_server = pipeline.stt_server
make_transcriber = pipeline.make_transcriber
live_transcriber = pipeline.live_transcriber
recorded_call = pipeline.recorded_call
_media_and_fast_retries = pipeline._media_and_fast_retries

BASE = "/api/v1"


class ApiClient:
    """The Django test client with an Authorization header, JSON bodies and paths relative to /api/v1."""

    def __init__(self, client, raw_key):
        self.client = client
        self.headers = {"Authorization": f"Bearer {raw_key}"} if raw_key else {}

    def get(self, path, params=None, **headers):
        return self.client.get(BASE + path, params or {}, headers={**self.headers, **headers})

    def post(self, path, body=None, **headers):
        return self.client.post(BASE + path, body or {}, content_type="application/json",
                                headers={**self.headers, **headers})

    def patch(self, path, body=None):
        return self.client.patch(BASE + path, body or {}, content_type="application/json", headers=self.headers)

    def put(self, path, body=None):
        return self.client.put(BASE + path, body or {}, content_type="application/json", headers=self.headers)

    def delete(self, path):
        return self.client.delete(BASE + path, headers=self.headers)

    def upload(self, path, data):
        return self.client.post(BASE + path, data, headers=self.headers)


@pytest.fixture
def org_key(org):
    return ApiKey.generate(org, name="tests")[1]


@pytest.fixture
def api(client, org_key):
    return ApiClient(client, org_key)


@pytest.fixture
def other_api(client, other_org):
    return ApiClient(client, ApiKey.generate(other_org, name="other")[1])


def assert_error(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "detail"}, body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["detail"], dict) and body["error"]["message"]
    return body["error"]


@pytest.fixture
def bank(org, make_transcriber):
    bank = actions.do_create_bank(org, name="English", language_label="English")
    actions.do_add_candidate(bank, make_transcriber("good", "Siobhan, table for four at eight thirty"), confirmed=True)
    actions.do_add_candidate(bank, make_transcriber("bad", "Shivon table for four at 830"), confirmed=True)
    return bank


@pytest.fixture
def flag(bank, recorded_call):
    line = recorded_call.lines.get(position=0)
    flag = actions.do_flag_line(line, "Siobhan, table for four at eight thirty", bank=bank, tags=["name"])
    tasks.drain()
    return flag
