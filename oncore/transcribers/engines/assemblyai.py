"""AssemblyAI pre-recorded transcription: upload, submit, poll.

Documented shape implemented (assemblyai.com/docs API reference and openapi spec, v2):
    POST {base}/v2/upload            authorization: KEY, Content-Type: application/octet-stream, body = audio
        -> {"upload_url": "https://cdn.assemblyai.com/upload/..."}
    POST {base}/v2/transcript        authorization: KEY, JSON {"audio_url": ..., "speech_models": [model],
                                     "language_code": "en_us" (optional)}
        -> {"id": "...", "status": "queued", ...}
    GET  {base}/v2/transcript/{id}   authorization: KEY
        -> {"id", "status": "queued" | "processing" | "completed" | "error", "text", "error", ...}
    errors -> {"error": "..."}
A completed job whose text is null (audio without speech) is "no text": an empty transcript, which scoring counts
as a failure for the line, not a vendor error. Language codes follow the SDK's list: regional codes it names
(en_us, en_uk, en_au, de_ch) are sent as such, so en-GB is en_uk; other regions are sent as their language.
Polling follows the SDK: every 3 s (poll_interval_s), here growing by half each poll up to poll_max_interval_s,
until poll_timeout_s.
The model goes in the plural `speech_models` list: AssemblyAI's docs mark the singular `speech_model`
deprecated and newer accounts have no default model, so a request without the list is refused.
A vocabulary candidate's terms (vocabulary.py) go in `keyterms_prompt`, a JSON list, as the SDK sends them.
Options: base_url, timeout_s (each HTTP request), connect_timeout_s, poll_interval_s (default 3, the SDK's),
poll_max_interval_s (default 15), poll_timeout_s (whole job, default 300).
"""

import time

from ..options import HTTP_OPTIONS, STREAM_OPTIONS, Option
from ..providers import BATCH, STREAMING, Mode, Provider, register
from .base import TranscriptionError, audio_seconds_of, option_float, read_key, vocabulary_terms
from .vendor_http import VendorCall, scrub

VENDOR = "AssemblyAI"
BASE_URL = "https://api.assemblyai.com"


POLL_BACKOFF = 1.5
# Regional codes the SDK's LanguageCode lists; AssemblyAI names the UK "uk", not "gb".
REGIONAL_CODES = {"en_us", "en_uk", "en_au", "de_ch"}
REGION_ALIASES = {"en_gb": "en_uk"}


def assemblyai_language(language: str | None) -> str | None:
    """AssemblyAI codes are lowercase with an underscore, from the SDK's list: 'en-US' -> 'en_us',
    'en-GB' -> 'en_uk', 'fr-CA' -> 'fr' (no regional code), 'es' -> 'es'."""
    if not language:
        return None
    code = language.strip().replace("-", "_").lower()
    code = REGION_ALIASES.get(code, code)
    if "_" in code and code not in REGIONAL_CODES:
        code = code.split("_")[0]
    return code or None


class AssemblyAIEngine:
    def __init__(self, transcriber):
        self.transcriber = transcriber

    def transcribe(self, wav: bytes, language: str | None = None):
        seconds = audio_seconds_of(wav)
        key = read_key(self.transcriber, VENDOR)
        terms = vocabulary_terms(
            self.transcriber, BATCH
        )  # checked before the upload: a list refused sends nothing
        options = self.transcriber.options or {}
        poll_interval = option_float(options, "poll_interval_s", 3.0)
        poll_max_interval = option_float(options, "poll_max_interval_s", 15.0)
        poll_timeout = option_float(options, "poll_timeout_s", 300.0)
        call = VendorCall(self.transcriber, VENDOR, BASE_URL, key)
        auth = {"authorization": key}

        uploaded = call.request(
            "POST",
            call.url("/v2/upload"),
            step="upload",
            content=wav,
            headers={**auth, "Content-Type": "application/octet-stream"},
        )
        upload_url = uploaded.get("upload_url")
        if not isinstance(upload_url, str) or not upload_url:
            raise TranscriptionError(
                f"{VENDOR} returned an upload response without an upload_url: check the base_url option.",
                retryable=False,
            )

        body = {"audio_url": upload_url}
        if self.transcriber.model:
            body["speech_models"] = [self.transcriber.model]
        if assemblyai_language(language):
            body["language_code"] = assemblyai_language(language)
        if terms:  # the SDK's TranscriptionConfig(keyterms_prompt=[...]): a JSON list in the request body
            body["keyterms_prompt"] = terms
        job = call.request("POST", call.url("/v2/transcript"), step="submit", json=body, headers=auth)
        job_id = job.get("id")
        if not isinstance(job_id, str) or not job_id:
            raise TranscriptionError(
                f"{VENDOR} accepted the transcript request but returned no id: it will be tried again.",
                retryable=True,
            )

        deadline = time.monotonic() + poll_timeout
        while True:
            status = job.get("status")
            if status == "completed":
                text = "" if job.get("text", "") is None else call.transcript(job, "text")
                return call.result(text, seconds, job)
            if status == "error":
                reason = str(job.get("error") or "no reason given")
                raise TranscriptionError(
                    f"{VENDOR} could not transcribe the clip (transcript {job_id}): {scrub(reason, key)}",
                    retryable=False,
                )
            if time.monotonic() + poll_interval > deadline:
                raise TranscriptionError(
                    f"{VENDOR} did not finish transcript {job_id} within {poll_timeout:g} s "
                    f"(last status {status!r}): it will be tried again; raise poll_timeout_s if this repeats.",
                    retryable=True,
                )
            time.sleep(poll_interval)
            poll_interval = min(poll_interval * POLL_BACKOFF, max(poll_max_interval, poll_interval))
            job = call.request("GET", call.url(f"/v2/transcript/{job_id}"), step="poll", headers=auth)


register(
    Provider(
        name="assemblyai",
        label=VENDOR,
        key_env="ASSEMBLYAI_API_KEY",
        modes={
            BATCH: Mode(
                f"{__name__}.AssemblyAIEngine",
                (
                    *HTTP_OPTIONS,
                    Option("poll_interval_s", "number", "first wait between polls of the job (default 3)"),
                    Option("poll_max_interval_s", "number", "longest wait between polls (default 15)"),
                    Option("poll_timeout_s", "number", "seconds for the whole job (default 300)"),
                ),
            ),
            STREAMING: Mode(
                "oncore.transcribers.engines.streaming.assemblyai.AssemblyAIStreamingEngine",
                (
                    *STREAM_OPTIONS,
                    Option(
                        "params", "object", 'extra query parameters, e.g. {"keyterms_prompt": ["Siobhan"]}'
                    ),
                ),
            ),
        },
    )
)
