"""Fixtures for the benchmarks: the committed entity fixture parquet imported into the test's MEDIA_ROOT, the
local Whisper tiny.en catalogue entry, and generic-endpoint transcribers against a real HTTP server on
127.0.0.1 (one per session, reset per test)."""

from pathlib import Path

import pytest

from tests.json_server import JsonServer

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "entity_benchmark"
KEY_ENV = "ONCORE_TEST_BENCH_KEY"


@pytest.fixture(autouse=True)
def _three_attempts(settings):
    settings.ONCORE = {**settings.ONCORE, "MAX_TRANSCRIPTION_ATTEMPTS": 3}


@pytest.fixture
def dataset(db):
    from benchmark.entity.importer import import_dataset

    return import_dataset(FIXTURE).dataset


@pytest.fixture
def whisper_tiny(db):
    from oncore.transcribers.models import Transcriber

    entry, _ = Transcriber.objects.get_or_create(
        slug="whisper-tiny-en",
        defaults={
            "provider": "faster_whisper",
            "model": "tiny.en",
            "display_name": "Whisper tiny.en (local)",
        },
    )
    return entry


class EndpointServer(JsonServer):
    """Answers POST /<name> in the generic endpoint's shape ({"text": ...}), or with the status set for it."""

    def __init__(self):
        self.reset()
        super().__init__()

    def reset(self):
        self.status: dict[str, int] = {}
        self.text: dict[str, str] = {}
        self.requests: list[str] = []

    def respond(self, path, headers, body):
        name = path.strip("/")
        self.requests.append(name)
        status = self.status.get(name, 200)
        return status, ({"text": self.text.get(name, "")} if status == 200 else {"error": "server on fire"})


@pytest.fixture(scope="session")
def _endpoint_for_session():
    server = EndpointServer()
    yield server
    server.close()


@pytest.fixture
def endpoint(_endpoint_for_session):
    _endpoint_for_session.reset()
    return _endpoint_for_session


@pytest.fixture
def endpoint_transcriber(db, endpoint):
    from oncore.transcribers.models import Transcriber

    def make(name, *, status=200, text=""):
        endpoint.status[name] = status
        endpoint.text[name] = text
        return Transcriber.objects.create(
            slug=f"endpoint-{name}",
            provider=Transcriber.GENERIC,
            model=f"{name}-v1",
            display_name=f"Endpoint {name}",
            price_per_minute="0.006",
            options={"url": f"{endpoint.url}/{name}"},
        )

    return make
