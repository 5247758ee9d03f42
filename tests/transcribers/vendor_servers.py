"""Fake transcription vendors: real HTTP servers on 127.0.0.1 that speak each vendor's documented shapes.

Each server checks a request the way the vendor does (auth header, method, path, content type, query
parameters, form fields) and answers in the vendor's response and error shapes. Anything it does not
expect is answered with the vendor's 400 error, so a wrong request fails a test loudly.

Use from any test:

    with FakeDeepgram(transcript="table for two") as server:
        monkeypatch.setenv(server.key_env, server.key)
        entry = catalogue_entry(server)          # duck-typed Transcriber pointed at the server
        # or a DB row: Transcriber(..., api_key_env=server.key_env, options={"base_url": server.base_url})
        server.scenario = "429"                  # see SCENARIOS
        server.requests                          # every request received, parsed (Recorded)

Scenarios (set `server.scenario`, applies to every request the server gets):
    ok, 400, 401, 403, 408, 409, 429 (Retry-After: server.retry_after, and retry-after-ms:
    server.retry_after_ms when set), 500, 503, slow (sleeps server.slow_s, then ok),
    malformed (200 with a body that is not JSON), no_transcript (200 JSON without the transcript field),
    echo_key (ok, but the response carries the key, as a careless vendor might).
ElevenLabs also has: 422 (a FastAPI-style validation error, its documented 422 shape).
AssemblyAI also has: job_error (the job ends with status "error"), never_done (the job stays "processing"),
null_text (the job completes with "text": null, as it does on audio without speech).
Every 401 message echoes the key it was given, so tests can check that engines never repeat it.

The fakes accept every request the official Python SDKs send (tests/transcribers/captured/ holds requests
captured from them by scripts/capture_vendor_requests.py, and test_captured_requests.py replays them), and
their success bodies validate against the SDKs' response types (checked by the same script).
"""

import hashlib
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from email import policy
from email.parser import BytesParser
from types import SimpleNamespace
from urllib.parse import parse_qs, parse_qsl, urlsplit

from tests.json_server import LocalHttpServer

TEST_KEY = "sk-test-9f8e7d6c5b4a-DO-NOT-LEAK"
SCENARIOS = (
    "ok",
    "400",
    "401",
    "403",
    "408",
    "409",
    "429",
    "500",
    "503",
    "slow",
    "malformed",
    "no_transcript",
    "echo_key",
    "422",
    "job_error",
    "never_done",
    "null_text",
)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict  # name -> first value
    query_pairs: list  # every (name, value) in order, repeated names included
    headers: dict  # lowercased name -> value
    body: bytes
    form: dict = field(default_factory=dict)  # multipart text fields
    files: dict = field(
        default_factory=dict
    )  # multipart file fields: name -> (filename, content_type, bytes)
    json: object = None


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict = field(default_factory=dict)


def json_reply(status: int, data, headers: dict | None = None) -> Reply:
    return Reply(status, json.dumps(data).encode(), headers=headers or {})


def _parse_multipart(content_type: str, body: bytes) -> tuple[dict, dict]:
    message = BytesParser(policy=policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body
    )
    form, files = {}, {}
    if not message.is_multipart():
        return form, files
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True) or b""
        if part.get_filename() is not None:
            files[name] = (part.get_filename(), part.get_content_type(), payload)
        else:
            form[name] = payload.decode()
    return form, files


class FakeVendor(LocalHttpServer):
    """A vendor server. Subclasses set the class attributes and implement `authorized`, `check`, `ok_reply`
    and `error_reply` in the vendor's shapes."""

    poll_interval = 0.02

    vendor = "Vendor"
    provider = ""
    model = ""
    key_env = ""

    def __init__(self, key: str = TEST_KEY, transcript: str = "I'd like a table for two at seven, please."):
        self.key = key
        self.transcript = transcript
        self.scenario = "ok"
        self.retry_after = "7"
        self.retry_after_ms = None  # a retry-after-ms header on 429s, as OpenAI-style APIs send
        self.slow_s = 2.0
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()

    # -- the server ------------------------------------------------------------------------------------
    def answer(self, method, path, headers, body):
        split = urlsplit(path)
        recorded = Recorded(
            method=method,
            path=split.path,
            query={k: v[0] for k, v in parse_qs(split.query, keep_blank_values=True).items()},
            query_pairs=parse_qsl(split.query, keep_blank_values=True),
            headers=headers,
            body=body,
        )
        content_type = headers.get("content-type", "")
        if content_type.startswith("multipart/form-data"):
            recorded.form, recorded.files = _parse_multipart(content_type, body)
        elif content_type.startswith("application/json"):
            try:
                recorded.json = json.loads(body)
            except ValueError:
                recorded.json = None
        with self._lock:
            self.requests.append(recorded)
        reply = self.respond(recorded)
        return reply.status, reply.content_type, reply.body, reply.headers

    # -- behaviour -------------------------------------------------------------------------------------
    def respond(self, request: Recorded) -> Reply:
        if not self.authorized(request):
            return self.error_reply(401, f"Invalid API key: {self.presented_key(request)!r}")
        problem = self.check(request)
        if problem:
            return self.error_reply(400, problem)
        scenario = self.scenario
        if scenario == "401":
            return self.error_reply(401, f"Invalid API key: {self.presented_key(request)!r}")
        if scenario == "403":
            return self.error_reply(403, "This key is not allowed to use this model.")
        if scenario == "400":
            return self.error_reply(400, "Audio file is corrupt or in an unsupported format.")
        if scenario in ("408", "409"):
            return self.error_reply(int(scenario), "The request timed out or conflicted; try again.")
        if scenario == "429":
            reply = self.error_reply(429, "Too many requests: rate limit exceeded.")
            reply.headers["Retry-After"] = self.retry_after
            if self.retry_after_ms is not None:
                reply.headers["retry-after-ms"] = self.retry_after_ms
            return reply
        if scenario in ("500", "503"):
            return self.error_reply(int(scenario), "Internal server error, please try again.")
        if scenario == "malformed":
            return Reply(200, b'{"results": {"channels": [{"alternatives": [{"transcr', "application/json")
        if scenario == "slow":
            time.sleep(self.slow_s)
        return self.ok_reply(request)

    def presented_key(self, request: Recorded) -> str:
        return ""

    def authorized(self, request: Recorded) -> bool:
        return self.presented_key(request) == self.key

    def check(self, request: Recorded) -> str | None:
        return None

    def ok_reply(self, request: Recorded) -> Reply:
        raise NotImplementedError

    def error_reply(self, status: int, message: str) -> Reply:
        return json_reply(status, {"message": message})


def _require(request: Recorded, method: str, path: str) -> str | None:
    if request.method != method or request.path != path:
        return f"Unknown endpoint {request.method} {request.path}; expected {method} {path}."
    return None


class FakeDeepgram(FakeVendor):
    """POST /v1/listen?model=..&smart_format=true, Authorization: Token KEY, the audio as the body (the SDK sends
    it as application/octet-stream; an audio/* type is accepted too). Booleans in the query are `true`/`false`
    and lists are repeated keys, as the SDK encodes them; a Python repr (`True`, `['a', 'b']`) is refused."""

    vendor = "Deepgram"
    provider = "deepgram"
    model = "nova-3"
    key_env = "DEEPGRAM_API_KEY"
    # The model ids deepgram-sdk lists (MediaTranscribeRequestModel).
    models = {
        "nova-3",
        "nova-3-general",
        "nova-3-medical",
        "nova-2",
        "nova-2-general",
        "nova-2-meeting",
        "nova-2-finance",
        "nova-2-conversationalai",
        "nova-2-voicemail",
        "nova-2-video",
        "nova-2-medical",
        "nova-2-drivethru",
        "nova-2-automotive",
        "nova",
        "nova-general",
        "nova-phonecall",
        "nova-medical",
        "enhanced",
        "enhanced-general",
        "enhanced-meeting",
        "enhanced-phonecall",
        "enhanced-finance",
        "base",
        "meeting",
        "phonecall",
        "finance",
        "conversationalai",
        "voicemail",
        "video",
    }
    booleans = {"smart_format", "punctuate", "numerals", "diarize", "filler_words", "profanity_filter"}

    def presented_key(self, request):
        auth = request.headers.get("authorization", "")
        return auth[len("Token ") :] if auth.startswith("Token ") else ""

    def check(self, request):
        wrong = _require(request, "POST", "/v1/listen")
        if wrong:
            return wrong
        content_type = request.headers.get("content-type", "")
        if content_type != "application/octet-stream" and not content_type.startswith("audio/"):
            return f"Content-Type {content_type!r} does not match the audio sent."
        if request.query.get("model") not in self.models:
            return f"No such model: {request.query.get('model')!r}."
        for name, value in request.query_pairs:
            if name in self.booleans and value not in ("true", "false"):
                return f"Invalid value for {name}: {value!r} (expected true or false)."
            if value.startswith("[") and value.endswith("]"):
                return f"Invalid value for {name}: {value!r} (send one {name} per value)."
        if not request.body.startswith(b"RIFF"):
            return "Bad Request: failed to process audio: corrupt or unsupported data."
        return None

    def ok_reply(self, request):
        alternative = {"transcript": self.transcript, "confidence": 0.98, "words": []}
        if self.scenario == "no_transcript":
            alternative = {"confidence": 0.0, "words": []}
        model_uuid = str(uuid.uuid4())
        metadata = {
            "transaction_key": "deprecated",
            "request_id": str(uuid.uuid4()),
            "sha256": hashlib.sha256(request.body).hexdigest(),
            "created": "2026-11-30T12:00:00.000Z",
            "duration": 1.5,
            "channels": 1,
            "models": [model_uuid],
            "model_info": {
                model_uuid: {"name": request.query.get("model"), "version": "2026-01-01", "arch": "nova"}
            },
        }
        if self.scenario == "echo_key":
            metadata["authorization"] = f"Token {self.key}"
        return json_reply(
            200, {"metadata": metadata, "results": {"channels": [{"alternatives": [alternative]}]}}
        )

    def error_reply(self, status, message):
        codes = {
            400: "Bad Request",
            401: "INVALID_AUTH",
            403: "INSUFFICIENT_PERMISSIONS",
            429: "TOO_MANY_REQUESTS",
        }
        return json_reply(
            status,
            {
                "err_code": codes.get(status, "INTERNAL_SERVER_ERROR"),
                "err_msg": message,
                "request_id": str(uuid.uuid4()),
            },
        )


class FakeOpenAI(FakeVendor):
    """POST /v1/audio/transcriptions multipart (file, model, response_format, language), Bearer KEY."""

    vendor = "OpenAI"
    provider = "openai"
    model = "gpt-transcribe"
    key_env = "OPENAI_API_KEY"
    # The model ids the openai SDK lists (AudioModel).
    models = {
        "gpt-transcribe",
        "whisper-1",
        "gpt-4o-transcribe",
        "gpt-4o-mini-transcribe",
        "gpt-4o-mini-transcribe-2025-12-15",
        "gpt-4o-transcribe-diarize",
    }

    def presented_key(self, request):
        auth = request.headers.get("authorization", "")
        return auth[len("Bearer ") :] if auth.startswith("Bearer ") else ""

    def check(self, request):
        wrong = _require(request, "POST", "/v1/audio/transcriptions")
        if wrong:
            return wrong
        if not request.headers.get("content-type", "").startswith("multipart/form-data"):
            return "Invalid Content-Type header; expected multipart/form-data."
        if request.form.get("model") not in self.models:
            return f"Invalid model {request.form.get('model')!r}."
        if "file" not in request.files or not request.files["file"][2].startswith(b"RIFF"):
            return (
                "Invalid file format. Supported formats: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm"
            )
        if request.form.get("response_format", "json") != "json":
            return "This fake answers response_format=json only."
        language = request.form.get("language")
        if language is not None and (len(language) != 2 or not language.islower()):
            return f"Invalid language {language!r}: use ISO-639-1 (e.g. en)."
        return None

    def ok_reply(self, request):
        data = {"text": self.transcript}
        if self.scenario == "no_transcript":
            data = {"usage": {"type": "duration", "seconds": 2}}
        if self.scenario == "echo_key":
            data["debug"] = {"api_key": self.key}
        return json_reply(200, data)

    def error_reply(self, status, message):
        kinds = {401: "invalid_request_error", 429: "rate_limit_error", 500: "server_error"}
        return json_reply(
            status,
            {
                "error": {
                    "message": message,
                    "type": kinds.get(status, "invalid_request_error"),
                    "param": None,
                    "code": None,
                }
            },
        )


class FakeElevenLabs(FakeVendor):
    """POST /v1/speech-to-text multipart (file, model_id, language_code), xi-api-key: KEY. The SDK also sends
    "null" for its unset JSON fields (webhook_metadata, entity_detection, entity_redaction); they are accepted.
    scribe_v1 was removed (July 2026) and is refused like any unknown model."""

    vendor = "ElevenLabs"
    provider = "elevenlabs"
    model = "scribe_v2"
    key_env = "ELEVENLABS_API_KEY"
    models = {"scribe_v2", "scribe_v2_medical", "scribe_v3"}

    def presented_key(self, request):
        return request.headers.get("xi-api-key", "")

    def check(self, request):
        wrong = _require(request, "POST", "/v1/speech-to-text")
        if wrong:
            return wrong
        if "model_id" not in request.form or "file" not in request.files:
            missing = [
                name
                for name in ("model_id", "file")
                if name not in request.form and name not in request.files
            ]
            return f"field required: {', '.join(missing)}"
        if request.form["model_id"] not in self.models:
            return f"Invalid model_id {request.form['model_id']!r}."
        return None

    def respond(self, request):
        if (
            self.authorized(request)
            and request.path == "/v1/speech-to-text"
            and (self.scenario == "422" or not request.files)
        ):
            # FastAPI-style validation error, the shape ElevenLabs answers 422 with
            return json_reply(
                422, {"detail": [{"loc": ["body", "file"], "msg": "Field required", "type": "missing"}]}
            )
        return super().respond(request)

    def ok_reply(self, request):
        words = [
            {
                "text": w,
                "start": round(0.1 * i, 2),
                "end": round(0.1 * i + 0.08, 2),
                "type": "word",
                "speaker_id": "speaker_0",
                "logprob": -0.05,
            }
            for i, w in enumerate(self.transcript.split())
        ]
        data = {
            "language_code": request.form.get("language_code", "en"),
            "language_probability": 0.99,
            "text": self.transcript,
            "words": words,
        }
        if self.scenario == "no_transcript":
            del data["text"]
        if self.scenario == "echo_key":
            data["request"] = {"xi-api-key": self.key}
        return json_reply(200, data)

    def error_reply(self, status, message):
        statuses = {401: "invalid_api_key", 429: "too_many_concurrent_requests", 403: "missing_permissions"}
        return json_reply(status, {"detail": {"status": statuses.get(status, "error"), "message": message}})


class FakeAssemblyAI(FakeVendor):
    """POST /v2/upload (raw bytes) -> upload_url; POST /v2/transcript (JSON) -> id; GET /v2/transcript/{id}.
    Header `authorization: KEY` (no scheme)."""

    vendor = "AssemblyAI"
    provider = "assemblyai"
    model = "universal-2"
    key_env = "ASSEMBLYAI_API_KEY"
    # Async models: the SDK's SpeechModel values and the current ids its docs name (speech_models is a list).
    models = {"universal-3-5-pro", "universal-3-pro", "universal-2", "universal", "best", "slam-1"}

    def __init__(self, *args, processing_polls: int = 1, **kwargs):
        super().__init__(*args, **kwargs)
        self.processing_polls = processing_polls
        self.uploads: dict[str, bytes] = {}
        self.jobs: dict[str, dict] = {}

    def presented_key(self, request):
        return request.headers.get("authorization", "")

    def check(self, request):
        if request.method == "POST" and request.path == "/v2/upload":
            if not request.body:
                return "Upload body is empty."
            return None
        if request.method == "POST" and request.path == "/v2/transcript":
            body = request.json if isinstance(request.json, dict) else None
            if body is None:
                return "Request body must be JSON."
            if body.get("audio_url") not in self.uploads:
                return f"Invalid audio_url {body.get('audio_url')!r}: upload the file first."
            if "speech_model" in body:
                return "speech_model is deprecated; use speech_models."
            speech_models = body.get("speech_models")
            if not isinstance(speech_models, list) or not speech_models:
                return "speech_models is required: a non-empty list of model names."
            unknown = [m for m in speech_models if m not in self.models]
            if unknown:
                return f"Invalid speech_models {unknown}; accepted: {sorted(self.models)}."
            return None
        if request.method == "GET" and request.path.startswith("/v2/transcript/"):
            if request.path.rsplit("/", 1)[1] not in self.jobs:
                return "Transcript not found."
            return None
        return f"Unknown endpoint {request.method} {request.path}."

    def ok_reply(self, request):
        if request.path == "/v2/upload":
            upload_id = str(uuid.uuid4())
            url = f"{self.base_url}/cdn/upload/{upload_id}"
            self.uploads[url] = request.body
            return json_reply(200, {"upload_url": url})
        if request.path == "/v2/transcript":
            job_id = str(uuid.uuid4())
            job = {
                "id": job_id,
                "status": "queued",
                "audio_url": request.json["audio_url"],
                "text": None,
                "speech_models": request.json["speech_models"],
                "language_code": request.json.get("language_code", "en_us"),
                "polls": 0,
                "error": None,
            }
            self.jobs[job_id] = job
            return json_reply(200, self._public(job))
        job = self.jobs[request.path.rsplit("/", 1)[1]]
        job["polls"] += 1
        if self.scenario == "never_done" or job["polls"] <= self.processing_polls:
            job["status"] = "processing"
        elif self.scenario == "job_error":
            job["status"], job["error"] = (
                "error",
                "Transcoding failed. File does not appear to contain audio.",
            )
        else:
            job["status"], job["text"] = (
                "completed",
                None if self.scenario == "null_text" else self.transcript,
            )
        data = self._public(job)
        if job["status"] == "completed" and self.scenario == "no_transcript":
            del data["text"]
        if self.scenario == "echo_key":
            data["webhook_auth_header_value"] = self.key
        return json_reply(200, data)

    @staticmethod
    def _public(job):
        data = {k: v for k, v in job.items() if k != "polls"}
        data["speech_model_used"] = job["speech_models"][0]
        data["audio_duration"] = 2
        data["language_model"] = "assemblyai_default"
        data["acoustic_model"] = "assemblyai_default"
        return data

    def error_reply(self, status, message):
        return json_reply(status, {"error": message})


class FakeGeneric(FakeVendor):
    """An in-house endpoint: POST /transcribe with a configurable auth header, raw audio/wav or multipart,
    answering {"result": {"transcript": ...}}."""

    vendor = "Generic"
    provider = "generic"
    model = ""
    key_env = "GENERIC_STT_KEY"

    def __init__(
        self,
        *args,
        auth_header: str = "Authorization",
        auth_prefix: str = "Bearer ",
        field_name: str | None = None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.auth_header = auth_header.lower()
        self.auth_prefix = auth_prefix
        self.field_name = field_name

    def presented_key(self, request):
        value = request.headers.get(self.auth_header, "")
        return value[len(self.auth_prefix) :] if value.startswith(self.auth_prefix) else ""

    def check(self, request):
        wrong = _require(request, "POST", "/transcribe")
        if wrong:
            return wrong
        if self.field_name:
            if self.field_name not in request.files:
                return f"Expected the audio in multipart field {self.field_name!r}."
        elif request.headers.get("content-type") != "audio/wav" or not request.body.startswith(b"RIFF"):
            return "Expected a raw audio/wav body."
        return None

    def ok_reply(self, request):
        data = {"result": {"transcript": self.transcript, "confidence": 0.9}}
        if self.scenario == "no_transcript":
            data = {"result": {"confidence": 0.0}}
        if self.scenario == "echo_key":
            data["auth"] = self.key
        return json_reply(200, data)

    def error_reply(self, status, message):
        return json_reply(status, {"message": message})


def catalogue_entry(server: FakeVendor, *, model: str | None = None, price: str = "0.006", **options):
    """A duck-typed catalogue Transcriber pointed at a fake server (no database row)."""
    options = {"base_url": server.base_url, **options}
    if server.provider == "generic":
        options.setdefault("url", f"{server.base_url}/transcribe")
        options.pop("base_url")
    return SimpleNamespace(
        provider=server.provider,
        model=server.model if model is None else model,
        options=options,
        api_key_env=server.key_env,
        price_per_minute=Decimal(price),
        display_name=f"{server.vendor} test",
    )
