"""A provider in one place (docs/transcribers.md, "Adding a provider"): the docs' example module, written as the one
file they say to write, registers its provider, and that alone takes it through the catalogue, the option check,
the key handling and get_engine to a transcript from a fake of its vendor. The registry refuses a provider
defined wrong, and the catalogue one nobody registered."""

import importlib
import json
import re
import sys
import textwrap
from decimal import Decimal
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError

from oncore.audio import encode_wav
from oncore.transcribers import providers
from oncore.transcribers.engines import TranscriptionError, get_engine
from oncore.transcribers.engines.base import cost_for, key_problem
from oncore.transcribers.management.commands.add_transcriber import Command
from oncore.transcribers.models import Transcriber

from .vendor_servers import FakeVendor, Recorded, Reply, json_reply

DOCS = Path(__file__).resolve().parents[2] / "docs" / "transcribers.md"
KEY = "acme-test-key-5d4c3b2a"


class FakeAcme(FakeVendor):
    """The example vendor: POST /v1/transcribe, Authorization: Bearer KEY, the WAV as multipart `audio`."""

    vendor = "Acme"
    provider = "acme"
    model = "acme-1"
    key_env = "ACME_API_KEY"

    def presented_key(self, request: Recorded) -> str:
        return request.headers.get("authorization", "").removeprefix("Bearer ")

    def check(self, request: Recorded) -> str | None:
        if (request.method, request.path) != ("POST", "/v1/transcribe"):
            return f"Unknown endpoint {request.method} {request.path}."
        if "audio" not in request.files or not request.form.get("model"):
            return "Send the WAV in `audio` and the model in `model`."
        return None

    def ok_reply(self, request: Recorded) -> Reply:
        return json_reply(200, {"text": self.transcript})


@pytest.fixture
def acme(tmp_path, monkeypatch):
    """The docs' example, written out as its own module and imported, as the app imports every module of engines/
    when it starts."""
    section = DOCS.read_text().split("## Adding a provider", 1)[1]
    code = textwrap.dedent(re.search(r"```python\n(.*?)```", section, re.S).group(1))
    (tmp_path / "acme.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("acme")
    yield module
    providers.unregister("acme")
    sys.modules.pop("acme", None)


def add(*args) -> str:
    out = StringIO()
    call_command("add_transcriber", *args, stdout=out)
    return out.getvalue()


def clip(seconds=1.5, rate=8000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return encode_wav(0.2 * np.sin(2 * np.pi * 440 * t), rate)


@pytest.mark.django_db
def test_it_takes_a_provider_from_its_one_module_to_a_transcript(acme, monkeypatch):
    assert ("acme", "Acme") in Transcriber.PROVIDERS  # the API's provider enum and the admin's choices
    help_text = Command().create_parser("manage.py", "add_transcriber").format_help()
    assert "acme: Acme, batch" in help_text and "  vocabulary (list of strings)" in help_text

    with pytest.raises(CommandError) as refused:
        add("acme", "acme-1", "--mode", "streaming", "--options", '{"vocabulary": "Siobhan", "speed": 2}')
    for says in (
        "acme has no streaming engine: use --mode batch",
        "acme needs a key: name its environment variable with --api-key-env (usually ACME_API_KEY)",
    ):
        assert says in str(refused.value)
    with pytest.raises(CommandError) as refused:
        add(
            "acme",
            "acme-1",
            "--api-key-env",
            "ACME_API_KEY",
            "--options",
            '{"vocabulary": "Siobhan", "speed": 2}',
        )
    assert "option 'vocabulary' must be a JSON list of strings" in str(refused.value)
    assert "acme (batch) has no option 'speed'" in str(refused.value)
    assert not Transcriber.objects.filter(provider="acme").exists()

    with FakeAcme(key=KEY, transcript="could I book Sunday lunch for six") as server:
        add(
            "acme",
            "acme-1",
            "--api-key-env",
            "ACME_API_KEY",
            "--price-per-minute",
            "0.004",
            "--price-source",
            "https://acme.example/pricing",
            "--price-date",
            "2026-11-20",
            "--options",
            json.dumps({"base_url": server.base_url, "vocabulary": ["Siobhan"]}),
        )
        entry = Transcriber.objects.get(provider="acme")
        entry.full_clean()
        assert (entry.display_name, entry.get_provider_display()) == ("Acme acme-1", "Acme")

        monkeypatch.delenv("ACME_API_KEY", raising=False)
        assert key_problem(entry) == (
            "ACME_API_KEY is not set on this server: set it to your Acme API key (needed by Acme acme-1)."
        )
        with pytest.raises(TranscriptionError, match="ACME_API_KEY is not set"):
            get_engine(entry).transcribe(clip())
        assert server.requests == []

        monkeypatch.setenv("ACME_API_KEY", KEY)
        result = get_engine(entry).transcribe(clip(), language="en-GB")

    assert result.text == "could I book Sunday lunch for six"
    assert result.cost == cost_for(1.5, Decimal("0.004"))
    (sent,) = server.requests
    assert sent.form == {"model": "acme-1", "language": "en", "vocabulary": "Siobhan"}
    assert sent.files["audio"][0] == "audio.wav"


@pytest.mark.django_db
def test_it_offers_the_registered_providers_in_the_admin(acme, client):
    client.force_login(
        get_user_model().objects.create_superuser("root", "root@example.com", "a-long-pass-phrase")
    )
    page = client.get("/admin/transcribers/transcriber/add/").content.decode()
    assert (
        '<option value="acme">Acme</option>' in page and '<option value="deepgram">Deepgram</option>' in page
    )


@pytest.mark.django_db
def test_it_refuses_a_catalogue_entry_of_a_provider_nobody_registered_or_in_a_mode_it_lacks():
    entry = Transcriber(slug="gone", provider="acme", model="acme-1", display_name="Acme acme-1")
    with pytest.raises(ValidationError) as refused:
        entry.full_clean()
    assert "No provider 'acme': choose one of assemblyai, deepgram" in str(refused.value)
    with pytest.raises(TranscriptionError, match="uses provider 'acme', which has no engine"):
        get_engine(entry)

    sphinx = Transcriber(
        slug="s", provider="pocketsphinx", model="en-us", mode="streaming", display_name="Sphinx live"
    )
    with pytest.raises(ValidationError, match="pocketsphinx has no streaming engine"):
        sphinx.full_clean()
    with pytest.raises(
        TranscriptionError, match="pocketsphinx' has no streaming engine.*make the entry batch"
    ):
        get_engine(sphinx)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"name": "Acme-Cloud"}, "its name must be lowercase letters, digits and _"),
        (
            {"modes": {"live": providers.Mode("acme.AcmeEngine")}},
            "its modes must be one or both of batch, streaming",
        ),
        ({"key_env": "acme key"}, "key_env must name an environment variable"),
        ({"local": True}, "a local provider sends no key"),
        ({"name": "deepgram"}, "'deepgram' is registered twice with different definitions"),
    ],
)
def test_it_refuses_a_provider_defined_wrong_when_it_registers(change, says):
    fields = dict(
        name="acme",
        label="Acme",
        key_env="ACME_API_KEY",
        modes={providers.BATCH: providers.Mode("acme.AcmeEngine")},
    )
    with pytest.raises(ImproperlyConfigured, match=re.escape(says)):
        providers.register(providers.Provider(**{**fields, **change}))
    assert providers.get("acme") is None


def test_it_registers_every_engine_module_it_ships():
    assert providers.names() == [
        "assemblyai",
        "deepgram",
        "elevenlabs",
        "faster_whisper",
        "generic",
        "openai",
        "pocketsphinx",
    ]
    assert providers.names(providers.STREAMING) == [
        "assemblyai",
        "deepgram",
        "elevenlabs",
        "faster_whisper",
        "openai",
    ]
    assert [p.name for p in providers.all_providers() if p.keyed] == [
        "assemblyai",
        "deepgram",
        "elevenlabs",
        "openai",
    ]
    for provider in providers.all_providers():
        for mode in provider.modes:
            assert callable(getattr(provider.engine(mode), "transcribe", None)), (provider.name, mode)
