"""The API's version and what it still reads but has deprecated (docs/api.md, Versions: the policy).

API_VERSION is semantic: the major part moves with a change that can break a client (docs/api.md says which),
the minor part with an addition, the patch part with a fix. It is the schema's `info.version`, the name of the
released schema committed beside the docs (docs/api/openapi-<version>.json, which the breaking-change test
compares the served schema with), and every API answer's OnCore-API-Version header.

A request that uses a deprecated word (`used(...)`, called where the word is read) is answered with `Deprecation`
(RFC 9745: when it was deprecated) and `Sunset` (RFC 8594: the earliest day it may stop being read) headers,
whatever the answer (oncore.middleware.api_version writes them)."""

from contextvars import ContextVar
from datetime import UTC, date, datetime

API_VERSION = "2.1.0"
VERSION_HEADER = "OnCore-API-Version"

# What a request may still send although the API deprecated it: (deprecated on, read at least until: six months at
# least). Removed no earlier than its sunset, the removal listed under Deprecated in docs/api.md.
DEPRECATED = {
    # A run line's label `live_right` (the lines filter `label`, a review's `label`): say `production_right`.
    "live_right": (date(2026, 12, 1), date(2027, 6, 1)),
}

_used: ContextVar[tuple] = ContextVar("deprecated_words_used", default=())


def used(word: str) -> None:
    """This request used the deprecated `word` (a key of DEPRECATED): its answer will say so."""
    if word not in _used.get():
        _used.set((*_used.get(), word))


def begin() -> object:
    """A request starts using nothing deprecated; the token ends it (`end`)."""
    return _used.set(())


def end(token) -> dict[str, str]:
    """The deprecation headers for what the request used (none when it used nothing deprecated)."""
    words = _used.get()
    _used.reset(token)
    if not words:
        return {}
    since = min(DEPRECATED[w][0] for w in words)
    sunset = min(DEPRECATED[w][1] for w in words)
    return {
        "Deprecation": f"@{int(datetime.combine(since, datetime.min.time(), UTC).timestamp())}",
        "Sunset": datetime.combine(sunset, datetime.min.time(), UTC).strftime("%a, %d %b %Y %H:%M:%S GMT"),
    }
