"""Requests captured from the vendors' official Python SDKs (tests/transcribers/captured/, written by
scripts/capture_vendor_requests.py), replayed byte for byte against the fake vendors: the fakes accept whatever
the SDKs send. And the engines' default calls send what the SDKs' default calls send."""

import base64
import json
import re
from pathlib import Path

import httpx
import numpy as np
import pytest

from oncore.audio import encode_wav
from oncore.transcribers.engines import get_engine

from .vendor_servers import FakeAssemblyAI, FakeDeepgram, FakeElevenLabs, FakeOpenAI, catalogue_entry

CAPTURED = Path(__file__).parent / "captured"
FAKES = {
    "openai": FakeOpenAI,
    "deepgram": FakeDeepgram,
    "elevenlabs": FakeElevenLabs,
    "assemblyai": FakeAssemblyAI,
}


def captured(vendor: str) -> dict:
    return json.loads((CAPTURED / f"{vendor}.json").read_text())


def replay(fake, entry: dict, filled: dict) -> httpx.Response:
    """Send one captured request as it was sent, with the fake's own upload URL and transcript id filled in."""
    kwargs = {"params": entry["query"], "headers": entry["headers"]}
    if "json" in entry:
        kwargs["content"] = json.dumps(entry["json"]).replace("{upload_url}", filled.get("upload_url", ""))
    elif "body_base64" in entry:
        kwargs["content"] = base64.b64decode(entry["body_base64"])
    path = entry["path"].replace("{transcript_id}", filled.get("transcript_id", ""))
    return httpx.request(entry["method"], fake.base_url + path, timeout=10, **kwargs)


@pytest.mark.parametrize("vendor", sorted(FAKES))
def test_it_accepts_every_request_the_official_sdk_sends(vendor):
    fixture = captured(vendor)
    assert fixture["requests"] and fixture["sdk"].split()[0] in (
        "openai",
        "deepgram-sdk",
        "elevenlabs",
        "assemblyai",
    )
    with FAKES[vendor](processing_polls=0) if vendor == "assemblyai" else FAKES[vendor]() as fake:
        filled = {}
        for entry in fixture["requests"]:
            response = replay(fake, entry, filled)
            assert response.status_code == 200, (entry["name"], response.text)
            data = response.json()
            filled.update({k: data[k] for k in ("upload_url",) if k in data})
            if "status" in data:
                filled["transcript_id"] = data["id"]
    assert len(fake.requests) == len(fixture["requests"])


def _shape(request) -> tuple[dict, set]:
    """What must agree between the SDK's request and the engine's: where it goes, how the key and the body
    travel; and the fields the request sends (the SDK's JSON nulls in a form are not fields)."""
    content_type = request.headers.get("content-type", "").split(";")[0]
    auth = {k: v for k, v in request.headers.items() if k in ("authorization", "xi-api-key")}
    path = re.sub(r"/[0-9a-f-]{36}$", "/{id}", request.path)
    fields = {name for name, value in request.form.items() if value != "null"}
    fields |= {name for name, _ in request.query_pairs} | set(request.json or {})
    return {"method": request.method, "path": path, "content_type": content_type, "auth": auth}, fields


@pytest.mark.parametrize("vendor", sorted(FAKES))
def test_its_default_call_sends_what_the_official_sdk_sends(vendor, monkeypatch):
    wav = encode_wav(np.zeros(800), 8000)
    with FAKES[vendor]() as sdk_side:
        filled = {}
        for entry in captured(vendor)["requests"]:
            if not entry["name"].startswith("default call"):
                break
            data = replay(sdk_side, entry, filled).json()
            filled.update({k: data[k] for k in ("upload_url",) if k in data})
            filled["transcript_id"] = data.get("id", filled.get("transcript_id", ""))
    with FAKES[vendor]() as engine_side:
        monkeypatch.setenv(engine_side.key_env, engine_side.key)
        model = {"openai": "gpt-transcribe", "assemblyai": "universal-3-5-pro"}.get(vendor)
        entry = catalogue_entry(engine_side, model=model, poll_interval_s=0.01)
        get_engine(entry).transcribe(wav)
    for sdk_request, engine_request in zip(sdk_side.requests, engine_side.requests, strict=False):
        sdk_shape, sdk_fields = _shape(sdk_request)
        engine_shape, engine_fields = _shape(engine_request)
        if sdk_request.method == "POST" and sdk_request.path == "/v2/upload":
            sdk_shape["content_type"] = engine_shape[
                "content_type"
            ]  # the SDK sends none; octet-stream is the same
        assert engine_shape == sdk_shape
        assert sdk_fields <= engine_fields
    assert len(engine_side.requests) == len(sdk_side.requests)
