"""What a catalogue entry's `options` may hold: each provider's engine module lists the options its engine reads
(`Option`s in its providers.Mode, most built from the shared lists here), and this module checks an entry's
options against that list (`manage.py add_transcriber`) and prints it (its --help). `GENERIC_PROTOCOL` is what the
generic HTTP provider sends and expects back (engines/generic.py), in words, for the API's description and the
command's help.

    check_options(provider, mode, options) -> list of problems (empty: fine)"""

from dataclasses import dataclass
from urllib.parse import urlsplit

from . import providers


@dataclass(frozen=True)
class Option:
    name: str
    kind: str  # "string", "url", "number", "integer", "boolean", "object", "object of strings", "list of strings"
    text: str
    required: bool = False


# What every HTTP vendor engine reads (engines/vendor_http.py), every WebSocket one (engines/streaming/ws.py), and
# the vendors' extra query parameters (engines.base.option_params).
HTTP_OPTIONS = (
    Option(
        "base_url",
        "url",
        "the vendor's API base URL (default: the vendor's own), e.g. a regional endpoint or a proxy",
    ),
    Option("timeout_s", "number", "seconds for the whole request (default 120)"),
    Option("connect_timeout_s", "number", "seconds to connect (default 10)"),
)
STREAM_OPTIONS = (
    Option("base_url", "url", "the vendor's WebSocket base URL (default: the vendor's own)"),
    Option("connect_timeout_s", "number", "seconds to open the session (default 10)"),
    Option(
        "final_timeout_s",
        "number",
        "seconds to wait for the final text after the end of the audio (default 10)",
    ),
)
PARAMS_OPTION = Option(
    "params",
    "object",
    'extra query parameters, e.g. {"keyterm": ["Siobhan"], "numerals": false} (a list repeats the key; null '
    "leaves a parameter out)",
)

GENERIC_PROTOCOL = (
    "The generic HTTP provider POSTs each clip to `options.url`: the body is the clip as a 16-bit PCM mono WAV "
    "(the caller's channel, with a 0.3 s margin, at the recording's sample rate) sent raw with `Content-Type: "
    "audio/wav`, or, when `options.field` is set, as multipart/form-data with the WAV in that field (file name "
    "audio.wav) beside the text fields of `options.form`. With an `api_key_env` on the entry the key goes in "
    "`Authorization: Bearer <key>`, or in the header `options.auth` names; without one no key is sent. It expects "
    "`200` with a JSON object holding the transcript as a string at `options.json_path` (default `text`: "
    '`{"text": "..."}`). 401 and 403 fail the line (check the key); 408, 409, 429 (with Retry-After) and 5xx, '
    "timeouts and connection errors are tried again; other 4xx, a body that is not a JSON object or one without "
    "the transcript fail the line, with the server's message. Point `url` at an in-house model server that "
    'answers that way (e.g. `http://asr.internal:9000/transcribe`, returning `{"text": ...}`).'
)


def options_of(provider: str, mode: str) -> tuple | None:
    """The options a provider's engine reads in a mode (None: no such provider or mode)."""
    found = providers.get(provider)
    return found.modes[mode].options if found and mode in found.modes else None


def describe(provider: str, mode: str) -> str:
    """One provider's options in a mode, as lines of text."""
    options = options_of(provider, mode)
    if options is None:
        return "  (no such mode for this provider)"
    if not options:
        return "  (no options)"
    return "\n".join(f"  {o.name} ({o.kind}{', required' if o.required else ''}): {o.text}" for o in options)


def _fits(kind: str, value) -> bool:
    if kind in ("string", "url"):
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "object of strings":
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if kind == "list of strings":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return False


def _kind_words(kind: str) -> str:
    return {
        "number": "a number above 0",
        "integer": "a whole number, 0 or more",
        "url": "an http(s) URL",
    }.get(kind, f"a JSON {kind}" if kind != "boolean" else "true or false")


def check_options(provider: str, mode: str, options: dict) -> list[str]:
    """What is wrong with `options` for this provider and mode: unknown names, values of the wrong kind, a
    required option missing, a URL that is not http(s) (ws(s) for a streaming base_url)."""
    known = {o.name: o for o in options_of(provider, mode) or ()}
    problems = []
    for name, value in options.items():
        option = known.get(name)
        if option is None:
            names = ", ".join(known) or "none"
            problems.append(f"{provider} ({mode}) has no option {name!r}; its options: {names}.")
            continue
        if not _fits(option.kind, value):
            problems.append(f"option {name!r} must be {_kind_words(option.kind)}, not {value!r}.")
            continue
        if option.kind == "url":
            schemes = ("ws", "wss") if mode == "streaming" else ("http", "https")
            parts = urlsplit(value)
            if parts.scheme not in schemes or not parts.netloc:
                problems.append(
                    f"option {name!r} must be a {' or '.join(schemes)} URL with a host, not {value!r}."
                )
    for option in known.values():
        if option.required and option.name not in options:
            problems.append(f"{provider} needs the option {option.name!r}: {option.text}.")
    return problems
