"""Fixtures for the pipeline: a recorded two-channel call, and transcribers that call a real HTTP server on
127.0.0.1 speaking the generic endpoint's shape ({"result": {"transcript": ...}} with a bearer key)."""

from datetime import UTC, datetime

import numpy as np
import pytest
from django.core.files import File

from oncore import audio
from oncore.calls.models import Assistant, Call, Line
from oncore.transcribers.models import Transcriber
from tests.json_server import JsonServer

KEY_ENV = "ONCORE_TEST_STT_KEY"


class SttServer(JsonServer):
    """Answers POST /stt/<name> with the text set for <name>, or with an error status."""

    def __init__(self):
        self.texts: dict[str, str] = {}
        self.statuses: dict[str, int] = {}
        self.requests: list[str] = []
        super().__init__()

    def respond(self, path, headers, body):
        name = path.rsplit("/", 1)[-1]
        self.requests.append(name)
        if headers.get("authorization") != "Bearer test-key":
            return 401, {"error": "bad key"}
        status = self.statuses.get(name, 200)
        if status != 200:
            return status, {"error": "failure"}
        return 200, {"result": {"transcript": self.texts.get(name, "")}}


@pytest.fixture
def stt_server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    server = SttServer()
    yield server
    server.close()


@pytest.fixture
def make_transcriber(db, stt_server):
    def make(name, text="", price="0.006"):
        stt_server.texts[name] = text
        return Transcriber.objects.create(
            slug=f"test-{name}", provider=Transcriber.GENERIC, model=name, display_name=f"Test {name}",
            price_per_minute=price, api_key_env=KEY_ENV,
            options={"url": f"{stt_server.url}/stt/{name}", "auth": "bearer", "json_path": "result.transcript"},
        )

    return make


@pytest.fixture(autouse=True)
def _media_and_fast_retries(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ONCORE = {**settings.ONCORE, "RETRY_BACKOFF_S": 0.0}


@pytest.fixture
def live_transcriber(make_transcriber):
    return make_transcriber("live", "")


def make_call(tenant, live, *, caller_texts, recorded=True, seconds_per_line=2.0, tmp_path=None):
    """A two-channel call: caller lines at 0,4,8... s each followed by an assistant line."""
    rate = 8000
    n_lines = len(caller_texts) * 2
    total = n_lines * seconds_per_line + 1.0
    t = np.arange(int(total * rate)) / rate
    samples = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), 0.3 * np.sin(2 * np.pi * 660 * t)], axis=1)
    assistant = Assistant.objects.create(tenant=tenant, name="Bookings", instructions="Take bookings.")
    call = Call.objects.create(
        tenant=tenant, assistant=assistant, started_at=datetime.now(UTC), recorded=recorded, live_transcriber=live,
    )
    if recorded:
        path = tmp_path / f"call-{call.pk}.flac"
        audio.write_recording(path, samples, rate)
        with path.open("rb") as fh:
            call.recording.save(path.name, File(fh), save=True)
    position = 0
    for i, text in enumerate(caller_texts):
        start = i * 2 * seconds_per_line + 0.2
        Line.objects.create(call=call, position=position, speaker="caller", text=text,
                            start_s=start, end_s=start + seconds_per_line - 0.4)
        Line.objects.create(call=call, position=position + 1, speaker="assistant", text="Sure.",
                            start_s=start + seconds_per_line, end_s=start + 2 * seconds_per_line - 0.4)
        position += 2
    return call


@pytest.fixture
def recorded_call(tenant, live_transcriber, tmp_path):
    return make_call(
        tenant, live_transcriber, tmp_path=tmp_path,
        caller_texts=["Shivon, table for for at 830", "yes that's right", "my number is 0 8 7", "thank you bye"],
    )
