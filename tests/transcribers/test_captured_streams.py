"""The fake streaming vendors accept what the official SDKs send, and the engines send what the SDKs send.

tests/transcribers/captured/streaming/<vendor>.json holds one streaming session of each vendor's SDK against
its fake, recorded by scripts/capture_vendor_streams.py (the SDKs in a throwaway virtualenv; every message the
fake sent was validated against the SDK's own types there). Here the SDK's messages are sent again, byte for
byte, to a fresh fake, which must take them and answer with a final; and each engine's session is compared with
the SDK's: the same path, key header, query parameters and JSON message shapes."""

import asyncio
import base64
import json
from pathlib import Path

import numpy as np
import pytest
from websockets.asyncio.client import connect

from oncore.audio import encode_wav
from oncore.transcribers.engines import get_engine
from oncore.transcribers.engines.streaming import session

from .stream_servers import TEST_KEY, stream_entry
from .stream_vendors import (
    FakeAssemblyAIStreaming,
    FakeDeepgramLive,
    FakeElevenLabsRealtime,
    FakeOpenAIRealtime,
)

CAPTURED = Path(__file__).parent / "captured" / "streaming"
FAKES = {
    "deepgram": FakeDeepgramLive,
    "assemblyai": FakeAssemblyAIStreaming,
    "openai": FakeOpenAIRealtime,
    "elevenlabs": FakeElevenLabsRealtime,
}
FINALS = {
    "deepgram": "Metadata",
    "assemblyai": "Termination",
    "openai": "conversation.item.input_audio_transcription.completed",
    "elevenlabs": "committed_transcript",
}


def fixture(vendor: str) -> dict:
    return json.loads((CAPTURED / f"{vendor}.json").read_text())


def kind_of(message: dict) -> str:
    return message.get("type") or message.get("message_type")


def shape(value):
    """A JSON value's shape: its keys, recursively, and the type of each leaf."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items() if k not in ("audio", "audio_base_64")}
    return type(value).__name__


async def replay(fake, captured) -> list[dict]:
    handshake = captured["handshake"]
    query = "&".join(f"{k}={v}" for k, v in handshake["query"])
    url = f"{fake.base_url}{handshake['path']}" + (f"?{query}" if query else "")
    answers = []
    async with connect(url, additional_headers=handshake["headers"]) as ws:

        async def read():
            async for message in ws:
                answers.append(json.loads(message))
                if kind_of(answers[-1]) == FINALS[captured["vendor"]]:
                    return

        reader = asyncio.create_task(read())
        for message in captured["client"]:
            if "binary_base64" in message:
                await ws.send(base64.b64decode(message["binary_base64"]))
            else:
                await ws.send(json.dumps(message["json"]))
            await asyncio.sleep(0.005)
        await asyncio.wait_for(reader, 5)
    return answers


@pytest.mark.parametrize("vendor", sorted(FAKES))
def test_the_fake_takes_every_message_the_sdk_sent_and_answers_as_it_did(vendor):
    captured = fixture(vendor)
    assert captured["sdk"].split()[0] in ("deepgram-sdk", "assemblyai", "openai", "elevenlabs")
    assert captured["handshake"]["headers"], "the key travels in a header"
    assert TEST_KEY in json.dumps(captured["handshake"]["headers"])
    with FAKES[vendor]() as fake:
        answers = session.run_session(replay(fake, captured))  # a thread of its own after the browser walk
    (record,) = fake.sessions
    assert record.close in (None, (1000, "")), record.close
    assert [kind_of(m) for m in answers] == [kind_of(m) for m in captured["server"]][: len(answers)]
    assert kind_of(answers[-1]) == FINALS[vendor]


def one_engine_session(vendor, monkeypatch):
    monkeypatch.setattr(session, "SPEED", 20.0)
    rate = 24000 if vendor == "openai" else 8000
    t = np.arange(int(0.2 * rate)) / rate
    with FAKES[vendor]() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        # the capture's OpenAI session names the language, as a replay of an English bank does
        language = "en" if vendor == "openai" else None
        get_engine(stream_entry(fake)).transcribe(
            encode_wav(0.2 * np.sin(2 * np.pi * 440 * t), rate), language
        )
    return fake.sessions[0]


@pytest.mark.parametrize("vendor", sorted(FAKES))
def test_the_engine_opens_the_stream_as_the_sdk_does(vendor, monkeypatch):
    captured = fixture(vendor)["handshake"]
    ours = one_engine_session(vendor, monkeypatch)
    assert ours.path == captured["path"]
    assert sorted(ours.query_pairs) == sorted(tuple(p) for p in captured["query"])
    for name, value in captured["headers"].items():
        assert ours.headers[name] == value


@pytest.mark.parametrize("vendor", sorted(FAKES))
def test_the_engine_sends_messages_of_the_shapes_the_sdk_sends(vendor, monkeypatch):
    sdk = fixture(vendor)["client"]
    ours = one_engine_session(vendor, monkeypatch).received
    sdk_kinds = ["binary" if "binary_base64" in m else kind_of(m["json"]) for m in sdk]
    our_kinds = ["binary" if kind == "binary" else kind_of(m) for kind, m in ours]
    assert [k for i, k in enumerate(our_kinds) if i == 0 or k != our_kinds[i - 1]] == [
        k for i, k in enumerate(sdk_kinds) if i == 0 or k != sdk_kinds[i - 1]
    ]
    sdk_shapes = {
        (kind_of(m["json"]), json.dumps(shape(m["json"]), sort_keys=True)) for m in sdk if "json" in m
    }
    our_shapes = {(kind_of(m), json.dumps(shape(m), sort_keys=True)) for kind, m in ours if kind == "text"}
    assert our_shapes == sdk_shapes
