"""Capture the WebSocket messages the vendors' official Python SDKs exchange in a streaming transcription, as
fixtures for the fake streaming vendors' tests (the streaming counterpart of capture_vendor_requests.py).

The SDKs are not dependencies of the project: run this in a throwaway virtualenv that has them and `websockets`,
from the repository root, e.g.

    python3.11 -m venv <venv> && <venv>/bin/pip install deepgram-sdk assemblyai 'openai[realtime]' elevenlabs websockets numpy
    <venv>/bin/python scripts/capture_vendor_streams.py

Each SDK's streaming client is pointed at the matching fake of tests/transcribers/stream_vendors.py (a real
WebSocket server on 127.0.0.1 that records every message) and streams 0.2 s of audio in 20 ms chunks (50 ms for
AssemblyAI, whose chunks must be 50 to 1000 ms), the way its documentation and examples stream a live call, then
ends the audio the SDK's way. The script then

- writes tests/transcribers/captured/streaming/<vendor>.json: the handshake (path, query pairs and the headers
  that carry meaning: the key, the API version), every message the SDK sent (JSON as JSON, audio in base64) and
  every message the fake answered, with the SDK's name and version; test_captured_streams.py replays the SDK's
  messages against the fakes and checks that the engines send the same shapes;
- checks that each SDK session succeeded: the fake accepted all it was sent, and the SDK read the final;
- validates every message the fake sent against the SDK's own message types (pydantic), and prints one line per
  vendor. Exits non-zero when a session fails or a message does not validate. The key is the fakes' test key.
"""

import asyncio
import base64
import json
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.transcribers.stream_servers import TEST_KEY  # noqa: E402
from tests.transcribers.stream_vendors import (  # noqa: E402
    FakeAssemblyAIStreaming,
    FakeDeepgramLive,
    FakeElevenLabsRealtime,
    FakeOpenAIRealtime,
)

OUT = ROOT / "tests" / "transcribers" / "captured" / "streaming"
# Headers a WebSocket handshake always has, or that the SDKs add for their own bookkeeping: left out.
LEFT_OUT = {"host", "upgrade", "connection", "user-agent", "sec-websocket-key", "sec-websocket-version"}
LEFT_OUT |= {"sec-websocket-extensions", "x-deepgram-session-id", "accept", "content-type"}


def chunks(rate: int, chunk_ms: int, seconds: float = 0.2) -> list[bytes]:
    """A 440 Hz tone as 16-bit PCM, cut into chunk_ms chunks."""
    t = np.arange(int(seconds * rate)) / rate
    pcm = (0.2 * np.sin(2 * np.pi * 440 * t) * 32767).astype("<i2").tobytes()
    size = 2 * rate * chunk_ms // 1000
    return [pcm[i : i + size] for i in range(0, len(pcm), size)]


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"capture failed: {message}")


def fixture_of(vendor: str, sdk: str, fake, validated: dict) -> dict:
    _check(len(fake.sessions) == 1, f"{vendor}: {len(fake.sessions)} sessions, not one")
    record = fake.sessions[0]
    _check(record.close in (None, (1000, "")), f"{vendor}: the fake closed the session with {record.close}")
    headers = {
        k: v
        for k, v in sorted(record.headers.items())
        if k not in LEFT_OUT and not k.startswith(("x-fern", "x-stainless"))
    }
    client = [
        {"binary_base64": base64.b64encode(m).decode()} if kind == "binary" else {"json": m}
        for kind, m in record.received
    ]
    return {
        "vendor": vendor,
        "sdk": sdk,
        "captured_by": "scripts/capture_vendor_streams.py",
        "handshake": {
            "path": record.path,
            "query": [list(p) for p in record.query_pairs],
            "headers": headers,
        },
        "client": client,
        "server": record.sent,
        "validated_as": validated,
    }


def validate(pairs) -> dict:
    """Validate each server message with the SDK type named for it; count them by type name."""
    counts: dict[str, int] = {}
    for model, data in pairs:
        (getattr(model, "model_validate", None) or model.parse_obj)(data)
        name = f"{model.__module__}.{model.__qualname__}"
        counts[name] = counts.get(name, 0) + 1
    return counts


def capture_deepgram() -> dict:
    from deepgram import DeepgramClient
    from deepgram.environment import DeepgramClientEnvironment
    from deepgram.listen.v1.types import ListenV1Metadata, ListenV1Results

    with FakeDeepgramLive() as fake:
        http = fake.base_url.replace("ws://", "http://")
        environment = DeepgramClientEnvironment(
            base=http, production=fake.base_url, agent=fake.base_url, agent_rest=http
        )
        client = DeepgramClient(api_key=TEST_KEY, environment=environment)
        received = []
        with client.listen.v1.connect(
            model="nova-3",
            encoding="linear16",
            sample_rate=8000,
            channels=1,
            interim_results="true",
            smart_format="true",
        ) as connection:
            for chunk in chunks(8000, 20):
                connection.send_media(chunk)
                time.sleep(0.02)
            connection.send_finalize()
            connection.send_close_stream()
            received = list(connection)
        finals = [m for m in received if isinstance(m, ListenV1Results) and m.is_final]
        _check(
            bool(finals) and finals[-1].channel.alternatives[0].transcript == fake.transcript,
            "deepgram: no final",
        )
        types = {"Results": ListenV1Results, "Metadata": ListenV1Metadata}
        validated = validate((types[m["type"]], m) for m in fake.sessions[0].sent)
        return fixture_of("deepgram", f"deepgram-sdk {version('deepgram-sdk')}", fake, validated)


def capture_assemblyai() -> dict:
    from assemblyai.streaming.v3 import (
        BeginEvent,
        RealTimeEvents,
        StreamingClient,
        StreamingClientOptions,
        StreamingParameters,
        TerminationEvent,
        TurnEvent,
    )

    with FakeAssemblyAIStreaming() as fake:
        client = StreamingClient(StreamingClientOptions(api_key=TEST_KEY, api_host=fake.base_url))
        turns, errors = [], []
        client.on(RealTimeEvents.Turn, lambda _, event: turns.append(event))
        client.on(RealTimeEvents.Error, lambda _, error: errors.append(error))
        client.connect(StreamingParameters(sample_rate=8000, encoding="pcm_s16le", speech_model="u3-rt-pro"))
        for chunk in chunks(8000, 50):
            client.stream(chunk)
            time.sleep(0.05)
        client.disconnect(terminate=True)
        _check(not errors, f"assemblyai: {errors}")
        _check(
            bool(turns) and turns[-1].end_of_turn and turns[-1].transcript == fake.transcript,
            "assemblyai: no turn",
        )
        types = {"Begin": BeginEvent, "Turn": TurnEvent, "Termination": TerminationEvent}
        validated = validate((types[m["type"]], m) for m in fake.sessions[0].sent)
        return fixture_of("assemblyai", f"assemblyai {version('assemblyai')}", fake, validated)


def capture_openai() -> dict:
    import openai
    from openai.types.realtime import (
        ConversationItemInputAudioTranscriptionCompletedEvent,
        ConversationItemInputAudioTranscriptionDeltaEvent,
        InputAudioBufferCommittedEvent,
        SessionCreatedEvent,
        SessionUpdatedEvent,
    )

    with FakeOpenAIRealtime() as fake:
        http = fake.base_url.replace("ws://", "http://")
        client = openai.OpenAI(
            api_key=TEST_KEY, base_url=f"{http}/v1", websocket_base_url=f"{fake.base_url}/v1"
        )
        completed = None
        with client.realtime.connect(extra_query={"intent": "transcription"}) as connection:
            _check(connection.recv().type == "session.created", "openai: no session.created")
            connection.session.update(
                session={
                    "type": "transcription",
                    "audio": {
                        "input": {
                            "format": {"type": "audio/pcm", "rate": 24000},
                            "transcription": {"model": "gpt-live-transcribe", "language": "en"},
                            "turn_detection": None,
                        }
                    },
                }
            )
            for chunk in chunks(24000, 20):
                connection.input_audio_buffer.append(audio=base64.b64encode(chunk).decode())
                time.sleep(0.02)
            connection.input_audio_buffer.commit()
            for event in connection:
                if event.type == "conversation.item.input_audio_transcription.completed":
                    completed = event
                    break
        _check(
            completed is not None and completed.transcript == fake.transcript, "openai: no completed event"
        )
        types = {
            "session.created": SessionCreatedEvent,
            "session.updated": SessionUpdatedEvent,
            "input_audio_buffer.committed": InputAudioBufferCommittedEvent,
            "conversation.item.input_audio_transcription.delta": ConversationItemInputAudioTranscriptionDeltaEvent,
            "conversation.item.input_audio_transcription.completed": ConversationItemInputAudioTranscriptionCompletedEvent,
        }
        validated = validate((types[m["type"]], m) for m in fake.sessions[0].sent)
        return fixture_of("openai", f"openai {version('openai')}", fake, validated)


def capture_elevenlabs() -> dict:
    from elevenlabs import AsyncElevenLabs
    from elevenlabs.realtime.scribe import AudioFormat, CommitStrategy
    from elevenlabs.types import CommittedTranscriptPayload, PartialTranscriptPayload, SessionStartedPayload

    async def stream(fake):
        client = AsyncElevenLabs(api_key=TEST_KEY, base_url=fake.base_url.replace("ws://", "http://"))
        committed = asyncio.Event()
        connection = await client.speech_to_text.realtime.connect(
            {
                "model_id": "scribe_v2_realtime",
                "audio_format": AudioFormat.PCM_8000,
                "sample_rate": 8000,
                "commit_strategy": CommitStrategy.MANUAL,
            }
        )
        connection.on("committed_transcript", lambda data: committed.set())
        for chunk in chunks(8000, 20):
            await connection.send({"audio_base_64": base64.b64encode(chunk).decode()})
            await asyncio.sleep(0.02)
        await connection.commit()
        await asyncio.wait_for(committed.wait(), 5)
        await connection.close()

    with FakeElevenLabsRealtime() as fake:
        asyncio.run(stream(fake))
        types = {
            "session_started": SessionStartedPayload,
            "partial_transcript": PartialTranscriptPayload,
            "committed_transcript": CommittedTranscriptPayload,
        }
        validated = validate((types[m["message_type"]], m) for m in fake.sessions[0].sent)
        return fixture_of("elevenlabs", f"elevenlabs {version('elevenlabs')}", fake, validated)


CAPTURES = {
    "deepgram": capture_deepgram,
    "assemblyai": capture_assemblyai,
    "openai": capture_openai,
    "elevenlabs": capture_elevenlabs,
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for vendor, capture in CAPTURES.items():
        fixture = capture()
        path = OUT / f"{vendor}.json"
        path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
        sent = sum(fixture["validated_as"].values())
        print(
            f"{vendor:<11} {fixture['sdk']:<20} {len(fixture['client'])} client messages captured; {sent} server "
            f"messages validate as {', '.join(sorted(n.rsplit('.', 1)[1] for n in fixture['validated_as']))} "
            f"-> {path.relative_to(ROOT)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
