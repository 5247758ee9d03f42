"""Fixtures for the entity benchmark: the committed fixture parquet imported into a fresh MEDIA_ROOT, the
local Whisper tiny.en catalogue entry, and generic-endpoint transcribers against a real HTTP server on
127.0.0.1."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "entity_benchmark"
KEY_ENV = "ONCORE_TEST_BENCH_KEY"


@pytest.fixture(autouse=True)
def _media_and_fast_retries(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ONCORE = {**settings.ONCORE, "RETRY_BACKOFF_S": 0.0, "MAX_TRANSCRIPTION_ATTEMPTS": 3}


@pytest.fixture
def dataset(db):
    from benchmark.importer import import_dataset

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


class EndpointServer:
    """Answers POST /<name> in the generic endpoint's shape ({"text": ...}), or with the status set for it."""

    def __init__(self):
        self.status: dict[str, int] = {}
        self.text: dict[str, str] = {}
        self.requests: list[str] = []
        state = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                name = self.path.strip("/")
                state.requests.append(name)
                status = state.status.get(name, 200)
                body = {"text": state.text.get(name, "")} if status == 200 else {"error": "server on fire"}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


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
