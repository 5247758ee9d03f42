"""A generic HTTP transcription endpoint, for in-house or lesser-known services.

Shape (configured in the catalogue entry's options):
    POST {url}[?{language_param}=...]
    auth: "bearer" (default) -> Authorization: Bearer KEY; any other value is a header name -> NAME: KEY;
          no api_key_env on the entry -> no key is sent
    body: raw audio with Content-Type audio/wav, or with "field": multipart/form-data, the WAV in that field
          (plus any extra text fields in "form": {...})
    200 -> JSON; the transcript is at "json_path" (dotted, list indexes allowed; default "text")
Options: url (required), auth, json_path, field, form, language_param, timeout_s, connect_timeout_s.
"""

from ..options import Option
from ..providers import BATCH, Mode, Provider, register
from .base import TranscriptionError, audio_seconds_of, read_key
from .vendor_http import VendorCall


class GenericEngine:
    def __init__(self, transcriber):
        self.transcriber = transcriber

    def transcribe(self, wav: bytes, language: str | None = None):
        options = self.transcriber.options or {}
        vendor = self.transcriber.display_name or "The transcription endpoint"
        url = str(options.get("url") or "").strip()
        if not url.startswith(("http://", "https://")):
            raise TranscriptionError(
                f"{vendor} has no endpoint: set options.url on the catalogue entry to the http(s) URL to POST to.",
                retryable=False,
            )
        seconds = audio_seconds_of(wav)
        key = read_key(self.transcriber, vendor) if (self.transcriber.api_key_env or "").strip() else None
        call = VendorCall(self.transcriber, vendor, url, key)

        headers = {}
        if key:
            auth = str(options.get("auth") or "bearer").strip()
            if auth.lower() == "bearer":
                headers["Authorization"] = f"Bearer {key}"
            else:
                headers[auth] = key
        params = {}
        if language and options.get("language_param"):
            params[str(options["language_param"])] = language
        request = {"headers": headers, "params": params}
        if options.get("field"):
            form = {str(k): str(v) for k, v in (options.get("form") or {}).items()}
            request.update(data=form, files={str(options["field"]): ("audio.wav", wav, "audio/wav")})
        else:
            headers["Content-Type"] = "audio/wav"
            request["content"] = wav
        data = call.request("POST", url, **request)
        return call.result(call.transcript(data, str(options.get("json_path") or "text")), seconds, data)


# The key is optional: sent only when the entry names api_key_env (no key_env here).
register(
    Provider(
        name="generic",
        label="Generic HTTP endpoint",
        modes={
            BATCH: Mode(
                f"{__name__}.GenericEngine",
                (
                    Option("url", "url", "the http(s) URL to POST each clip to", required=True),
                    Option(
                        "auth",
                        "string",
                        '"bearer" (default): Authorization: Bearer <key>; any other value is the header name that '
                        "carries the key; no key is sent when the entry names no api_key_env",
                    ),
                    Option(
                        "json_path",
                        "string",
                        'where the transcript is in the JSON answer, dotted (default "text"; e.g. '
                        '"results.0.transcript")',
                    ),
                    Option(
                        "field",
                        "string",
                        "send multipart/form-data with the WAV in this field (default: the raw WAV body)",
                    ),
                    Option(
                        "form", "object of strings", "extra text fields of the multipart form (with field)"
                    ),
                    Option(
                        "language_param",
                        "string",
                        "the query parameter that carries the language code, when one is given",
                    ),
                    Option("timeout_s", "number", "seconds for the whole request (default 120)"),
                    Option("connect_timeout_s", "number", "seconds to connect (default 10)"),
                ),
            )
        },
    )
)
