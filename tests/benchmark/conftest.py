"""Fixtures for the entity benchmark: the committed fixture parquet imported into a fresh MEDIA_ROOT, the
local Whisper tiny.en catalogue entry, and generic-endpoint transcribers against a real HTTP server on
127.0.0.1."""

from pathlib import Path

import pytest

from tests.json_server import JsonServer

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "entity_benchmark"
KEY_ENV = "ONCORE_TEST_BENCH_KEY"


@pytest.fixture(autouse=True)
def _media_and_fast_retries(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ONCORE = {**settings.ONCORE, "RETRY_BACKOFF_S": 0.0, "MAX_TRANSCRIPTION_ATTEMPTS": 3}


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
        self.status: dict[str, int] = {}
        self.text: dict[str, str] = {}
        self.requests: list[str] = []
        super().__init__()

    def respond(self, path, headers, body):
        name = path.strip("/")
        self.requests.append(name)
        status = self.status.get(name, 200)
        return status, ({"text": self.text.get(name, "")} if status == 200 else {"error": "server on fire"})


@pytest.fixture
def endpoint():
    server = EndpointServer()
    yield server
    server.close()


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
