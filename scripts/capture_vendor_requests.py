"""Capture the HTTP requests the vendors' official Python SDKs send, as fixtures for the fake vendors' tests.

The SDKs are not dependencies of the project: run this in a throwaway virtualenv that has them, from the
repository root, e.g.

    python3.11 -m venv <venv> && <venv>/bin/pip install openai deepgram-sdk assemblyai elevenlabs
    <venv>/bin/python scripts/capture_vendor_requests.py

Each SDK is pointed at the matching fake vendor of tests/transcribers/vendor_servers.py (a real HTTP server on
127.0.0.1 that records every request) and makes its ordinary calls: the default call and one with the options a
catalogue entry may set. The script then

- writes tests/transcribers/captured/<vendor>.json: every request as the SDK sent it (method, path, query pairs,
  headers, body), with the SDK's name and version; test_captured_requests.py replays them against the fakes;
- checks that each SDK call succeeded, i.e. the fake accepted what the SDK sent and the SDK read its answer;
- validates every success body the fake sent against the SDK's own response type (pydantic validation, which
  some SDKs skip when they read an answer), and prints one line per vendor.

Headers the SDKs add for their own bookkeeping (user agent, retry count, platform, session ids) are left out of
the fixtures; bodies are kept byte for byte (base64), except JSON bodies, kept as JSON. The key is the fakes'
test key, never a real one. Exits non-zero when a call fails or a body does not validate.
"""

import base64
import io
import json
import sys
import wave
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.transcribers.vendor_servers import (  # noqa: E402
    TEST_KEY,
    FakeAssemblyAI,
    FakeDeepgram,
    FakeElevenLabs,
    FakeOpenAI,
)

OUT = ROOT / "tests" / "transcribers" / "captured"
KEPT_HEADERS = {"authorization", "xi-api-key", "content-type", "accept"}


def clip() -> bytes:
    """0.1 s of silence, 8 kHz mono 16-bit WAV: small enough for a fixture."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 800)
    return buffer.getvalue()


class Recording:
    """A fake vendor whose answers are kept beside the requests, to validate them afterwards."""

    def __init__(self, fake):
        self.fake = fake
        self.replies = []
        answer = fake.respond

        def respond(request):
            reply = answer(request)
            self.replies.append((request, reply))
            return reply

        fake.respond = respond

    def take(self, name: str) -> list[dict]:
        """The requests received since the last take, as fixture entries named `name`."""
        taken = [self.entry(name, request) for request, _ in self.replies[self.taken :]]
        self.taken = len(self.replies)
        return taken

    taken = 0

    def answers(self, response_type, path_prefix: str = "") -> list:
        """(the SDK's response type, each success body) of the requests whose path starts with path_prefix."""
        return [
            (response_type, json.loads(reply.body))
            for request, reply in self.replies
            if request.path.startswith(path_prefix)
        ]

    def entry(self, name: str, request) -> dict:
        headers = {k: v for k, v in sorted(request.headers.items()) if k in KEPT_HEADERS}
        item = {
            "name": name,
            "method": request.method,
            "path": request.path,
            "query": [list(pair) for pair in request.query_pairs],
            "headers": headers,
        }
        if request.json is not None:
            item["json"] = dict(request.json)
            if "audio_url" in item["json"]:  # the fake's upload: the replay uploads and fills in its own
                item["json"]["audio_url"] = "{upload_url}"
        elif request.body:
            item["body_base64"] = base64.b64encode(request.body).decode()
        return item


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"capture failed: {message}")


def capture_openai() -> tuple[str, list, list]:
    import openai
    from openai.types.audio import Transcription

    with FakeOpenAI() as fake:
        rec = Recording(fake)
        client = openai.OpenAI(api_key=TEST_KEY, base_url=f"{fake.base_url}/v1", max_retries=0)
        entries = []
        result = client.audio.transcriptions.create(
            file=("audio.wav", clip(), "audio/wav"), model="gpt-transcribe"
        )
        _check(bool(result.text), "openai: no text in the default call's answer")
        entries += rec.take("default call (gpt-transcribe)")
        client.audio.transcriptions.create(
            file=("audio.wav", clip(), "audio/wav"),
            model="whisper-1",
            language="en",
            prompt="Bistro Verde, table bookings",
            response_format="json",
        )
        entries += rec.take("whisper-1 with language, prompt and response_format=json")
    return f"openai {version('openai')}", entries, rec.answers(Transcription)


def capture_deepgram() -> tuple[str, list, list]:
    from deepgram import DeepgramClient
    from deepgram.environment import DeepgramClientEnvironment
    from deepgram.types.listen_v1response import ListenV1Response

    with FakeDeepgram() as fake:
        rec = Recording(fake)
        base = fake.base_url
        environment = DeepgramClientEnvironment(base=base, production=base, agent=base, agent_rest=base)
        client = DeepgramClient(api_key=TEST_KEY, environment=environment, max_retries=0)
        entries = []
        client.listen.v1.media.transcribe_file(request=clip(), model="nova-3", smart_format=True)
        entries += rec.take("default call (nova-3, smart_format)")
        client.listen.v1.media.transcribe_file(
            request=clip(),
            model="nova-3",
            smart_format=True,
            language="en-US",
            punctuate=True,
            numerals=False,
            keyterm=["Siobhan", "O'Brien"],
        )
        entries += rec.take("language, booleans and a keyterm list")
    return f"deepgram-sdk {version('deepgram-sdk')}", entries, rec.answers(ListenV1Response)


def capture_elevenlabs() -> tuple[str, list, list]:
    from elevenlabs import ElevenLabs
    from elevenlabs.types import SpeechToTextChunkResponseModel

    with FakeElevenLabs() as fake:
        rec = Recording(fake)
        client = ElevenLabs(api_key=TEST_KEY, base_url=fake.base_url)
        entries = []
        client.speech_to_text.convert(file=("audio.wav", clip(), "audio/wav"), model_id="scribe_v2")
        entries += rec.take("default call (scribe_v2)")
        client.speech_to_text.convert(
            file=("audio.wav", clip(), "audio/wav"),
            model_id="scribe_v2",
            language_code="en",
            tag_audio_events=False,
        )
        entries += rec.take("language_code and tag_audio_events=false")
    return f"elevenlabs {version('elevenlabs')}", entries, rec.answers(SpeechToTextChunkResponseModel)


def capture_assemblyai() -> tuple[str, list, list]:
    import assemblyai as aai
    from assemblyai.types import TranscriptResponse

    with FakeAssemblyAI() as fake:
        rec = Recording(fake)
        aai.settings.api_key = TEST_KEY
        aai.settings.base_url = fake.base_url
        aai.settings.polling_interval = 0.05
        entries = []
        config = aai.TranscriptionConfig(speech_models=["universal-3-5-pro"])
        transcript = aai.Transcriber(config=config).transcribe(clip())
        _check(
            transcript.status == "completed", f"assemblyai: status {transcript.status}, {transcript.error}"
        )
        entries += rec.take("default call (universal-3-5-pro): upload, submit, poll")
        config = aai.TranscriptionConfig(speech_models=["universal-2"], language_code="en_uk")
        aai.Transcriber(config=config).transcribe(clip())
        entries += rec.take("universal-2 with language_code en_uk")
    for entry in entries:  # the ids are the fake's: the replay fills in its own
        if entry["method"] == "GET":
            entry["path"] = "/v2/transcript/{transcript_id}"
    return f"assemblyai {version('assemblyai')}", entries, rec.answers(TranscriptResponse, "/v2/transcript")


CAPTURES = {
    "openai": capture_openai,
    "deepgram": capture_deepgram,
    "elevenlabs": capture_elevenlabs,
    "assemblyai": capture_assemblyai,
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for vendor, capture in CAPTURES.items():
        sdk, entries, answers = capture()
        for response_type, body in answers:
            # raises on a body the SDK's type does not accept (pydantic 2, or 1 for assemblyai)
            (getattr(response_type, "model_validate", None) or response_type.parse_obj)(body)
        fixture = {
            "vendor": vendor,
            "sdk": sdk,
            "captured_by": "scripts/capture_vendor_requests.py",
            "response_type": answers[0][0].__module__ + "." + answers[0][0].__qualname__,
            "requests": entries,
        }
        path = OUT / f"{vendor}.json"
        path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
        print(
            f"{vendor:<11} {sdk:<20} {len(entries)} requests captured; {len(answers)} success bodies validate "
            f"as {fixture['response_type']} -> {path.relative_to(ROOT)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
