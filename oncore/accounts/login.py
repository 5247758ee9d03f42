"""Log-in with a rate limit, shared by the site's log-in and the admin's (`throttled` wraps either view).

Failures are counted over LOGIN_WINDOW_MINUTES where every server process sees them: in the shared cache (Redis)
when REDIS_URL is set (config().login_counters == "cache": one counter per minute, summed over the window), else
in the database (LoginFailure rows). The settings are read through oncore.config:
- per (username, client address): after LOGIN_MAX_FAILURES that username is paused from that address only, so
  someone guessing at a user elsewhere cannot lock the real user out;
- per client address: after LOGIN_MAX_FAILURES_PER_ADDRESS, whatever the usernames, so one address cannot guess
  its way through many users.
Usernames are counted as Django's log-in reads them (Unicode NFKC), case-folded, so a look-alike spelling
("ｖictim" for "victim") counts against the same user. The client address is the connection's, or the one the
trusted proxy header names when TRUSTED_PROXY_HEADER is set (only then: clients could send it themselves).

A wrong current password on the password change page (`throttled_password_change`) counts as a failed log-in of
that user from that address, on the same counters: a stolen session cannot guess the owner's password there either.
A paused answer is 429 with Retry-After (the window, in seconds)."""

import hashlib
import ipaddress
import time
import unicodedata
from datetime import timedelta
from functools import wraps

from django.core.cache import cache
from django.shortcuts import render
from django.utils import timezone

from oncore.config import config

from .models import LoginFailure


def normalized_username(raw) -> str:
    """The username as the log-in form reads it (NFKC), case-folded: the key the throttle counts under (without
    NUL characters, which no username holds and PostgreSQL cannot store)."""
    return unicodedata.normalize("NFKC", str(raw or "")).replace("\x00", "").strip().casefold()[:150]


def client_address(request) -> str | None:
    """The client's address: from TRUSTED_PROXY_HEADER when one is configured and holds an address (for
    X-Forwarded-For, its last entry, the one the proxy added), else the connection's."""
    header = config().trusted_proxy_header
    if header:
        candidate = request.headers.get(header, "").split(",")[-1].strip()
        try:
            return str(ipaddress.ip_address(candidate))
        except ValueError:
            pass
    return request.META.get("REMOTE_ADDR") or None


def _window() -> timedelta:
    return timedelta(minutes=config().login_window_minutes)


def _in_cache() -> bool:
    return config().login_counters == "cache"


def _minute() -> int:
    return int(time.time() // 60)


def minute_key(kind: str, *parts, minute: int) -> str:
    """The cache key of one minute's counter of `parts` (hashed: usernames may hold anything)."""
    digest = hashlib.sha256("\x00".join(str(p) for p in parts).encode()).hexdigest()[:32]
    return f"{kind}:{digest}:{minute}"


def count_once(key: str, timeout: int) -> int:
    """Add one to the counter under `key` (made at 0 if missing, kept `timeout` seconds); the count after it."""
    cache.add(key, 0, timeout)
    return cache.incr(key)  # atomic on Redis: two processes counting at once both count


def _cache_keys(kind: str, *parts) -> list[str]:
    """The per-minute counter keys of the window, newest first."""
    minute = _minute()
    window = range(config().login_window_minutes)
    return [minute_key(f"login-failures:{kind}", *parts, minute=minute - i) for i in window]


def _cache_count(keys) -> int:
    return sum(cache.get_many(keys).values())


def failures(username: str, address: str | None) -> tuple[int, int]:
    """(failures of this username from this address, failures from this address) within the window."""
    if _in_cache():
        per_address = _cache_count(_cache_keys("address", address)) if address else 0
        return _cache_count(_cache_keys("user", username, address)), per_address
    recent = LoginFailure.objects.filter(at__gte=timezone.now() - _window())
    per_address = recent.filter(ip=address).count() if address else 0
    return recent.filter(username=username, ip=address).count(), per_address


def _record_failure(username: str, address: str | None) -> None:
    if _in_cache():
        timeout = (config().login_window_minutes + 1) * 60
        for key in (_cache_keys("user", username, address)[0], _cache_keys("address", address)[0]):
            count_once(key, timeout)
        return
    LoginFailure.objects.create(username=username, ip=address)
    LoginFailure.objects.filter(at__lt=timezone.now() - _window()).delete()


def _forget(username: str, address: str | None) -> None:
    """The user's failures from this address no longer count against the user or the address."""
    if _in_cache():
        user_keys = _cache_keys("user", username, address)
        counted = cache.get_many(user_keys)
        for user_key, address_key in zip(user_keys, _cache_keys("address", address), strict=True):
            if counted.get(user_key):
                try:
                    cache.decr(address_key, counted[user_key])
                except ValueError:  # the address's counter of that minute expired first
                    pass
        cache.delete_many(user_keys)
    else:
        LoginFailure.objects.filter(username=username, ip=address).delete()


def is_paused(username: str, address: str | None) -> bool:
    per_user, per_address = failures(username, address)
    return per_address >= config().login_max_failures_per_address or per_user >= config().login_max_failures


def _paused(request, template: str):
    """429: the page that says how long to wait, and the same wait in Retry-After."""
    minutes = config().login_window_minutes
    response = render(request, template, {"minutes": minutes}, status=429)
    response["Retry-After"] = str(minutes * 60)
    return response


def throttled(login_view):
    """A log-in view (GET shows the form, POST answers 302 when the log-in succeeds and shows the form again,
    200, when it fails) with the throttle in front: a paused POST answers 429 without trying the password."""

    @wraps(login_view)
    def view(request, *args, **kwargs):
        if request.method != "POST":
            return login_view(request, *args, **kwargs)
        username, address = normalized_username(request.POST.get("username")), client_address(request)
        if is_paused(username, address):
            return _paused(request, "registration/login_limited.html")
        response = login_view(request, *args, **kwargs)
        if response.status_code == 200:  # the form again: wrong username or password
            _record_failure(username, address)
        elif response.status_code == 302:  # logged in: earlier typos from here no longer count
            _forget(username, address)
        return response

    return view


def throttled_password_change(change_view):
    """Django's password change view (PasswordChangeView) with the log-in's throttle in front: a POST while the
    user is paused from this address answers 429 without checking the password; a wrong current password counts
    as a failed log-in (a refused new password does not: the current one was right); a change forgets the user's
    own failures from this address, as a log-in does."""

    @wraps(change_view)
    def view(request, *args, **kwargs):
        if request.method != "POST" or not request.user.is_authenticated:
            return change_view(request, *args, **kwargs)
        username, address = normalized_username(request.user.get_username()), client_address(request)
        if is_paused(username, address):
            return _paused(request, "registration/password_change_limited.html")
        response = change_view(request, *args, **kwargs)
        form = (getattr(response, "context_data", None) or {}).get("form")
        if response.status_code == 200 and form is not None and "old_password" in form.errors:
            _record_failure(username, address)
        elif response.status_code == 302:
            _forget(username, address)
        return response

    return view
