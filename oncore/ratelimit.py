"""Rate limits on the requests whose cost grows with the data: `@rate_limited("results")` on an API operation or a
dashboard view, under the route decorator (the API's) or the access check (the dashboard's).

Each API key, and each dashboard session, may send `ONCORE_RATE_LIMIT_PER_MINUTE` requests (60) a minute to each
group of GROUPS; past that, until the minute ends, the request is answered 429 with Retry-After (the seconds left
in the minute) without doing its work: in the API the error `rate_limited` (its `detail` says the group, the limit
and the wait), on the dashboard a page that says how long to wait (an htmx poll keeps its figures and polls on).
A request the API refuses as invalid (422) is refused before it is counted.

Counted as the log-in throttle counts in the cache (oncore.accounts.login: a counter per minute, added to
atomically): in Redis with REDIS_URL, so every web process of every host counts together; without it, in each
process's memory (exact with one web process, as `make run` has)."""

import time
from functools import wraps

from django.shortcuts import render

from oncore.accounts.login import count_once, minute_key
from oncore.api.errors import ApiError
from oncore.config import config

# Each group and what it covers, as its refusal names it.
GROUPS = {
    "results": "a bank's results (its cards, per tenant or assistant, trends, tags, languages)",
    "turns": "a bank's turn table",
    "trust": "how far to trust a bank's lead (the call-level bootstrap)",
    "confusions": "a bank's confusion pairs",
    "checks": "a bank's expected texts to check",
    "exports": "CSV exports",
}


def _who(request) -> str:
    key = getattr(request, "api_key", None)
    if key is not None:
        return f"key:{key.pk}"
    session = getattr(request, "session", None)
    if session is not None and session.session_key:
        return f"session:{session.session_key}"
    return f"user:{getattr(request.user, 'pk', None)}"


def wait_for(request, group: str) -> int:
    """Count this request in its group; the seconds to wait when it is one too many, else 0."""
    now = time.time()
    minute = int(now // 60)
    count = count_once(minute_key(f"rate:{group}", _who(request), minute=minute), timeout=120)
    if count <= config().rate_limit_per_minute:
        return 0
    return max(1, 60 - int(now % 60))


def refusal(request, group: str, wait: int):
    """Raise the API's `rate_limited` error, or answer the dashboard's 429 page."""
    limit = config().rate_limit_per_minute
    if getattr(request, "api_key", None) is not None:
        raise ApiError(
            "rate_limited",
            f"Too many requests for {GROUPS[group]}: a key may send {limit} a minute. Wait {wait} s (Retry-After), "
            "then send it again.",
            {"group": group, "limit": limit, "retry_after": wait},
            headers={"Retry-After": str(wait)},
        )
    context = {"what": GROUPS[group], "limit": limit, "wait": wait}
    response = render(request, "429.html", context, status=429)
    response["Retry-After"] = str(wait)
    return response


def rate_limited(group: str):
    """The view or operation, counted in `group` per key or session; refused past the limit (module docstring)."""
    if group not in GROUPS:
        raise ValueError(f"Unknown rate limit group {group!r}: one of {sorted(GROUPS)}.")

    def decorate(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            wait = wait_for(request, group)
            if wait:
                return refusal(request, group, wait)
            return view(request, *args, **kwargs)

        wrapper.rate_limit_group = group  # the API's schema declares `rate_limited` on such operations
        return wrapper

    return decorate
