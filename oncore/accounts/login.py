"""Log-in with a rate limit, shared by the site's log-in and the admin's (`throttled` wraps either view).

Failures are counted over LOGIN_WINDOW_MINUTES, in the database so every server process sees them:
- per (username, client address): after LOGIN_MAX_FAILURES that username is paused from that address only, so
  someone guessing at a user elsewhere cannot lock the real user out;
- per client address: after LOGIN_MAX_FAILURES_PER_ADDRESS, whatever the usernames, so one address cannot guess
  its way through many users.
Usernames are counted as Django's log-in reads them (Unicode NFKC), case-folded, so a look-alike spelling
("ｖictim" for "victim") counts against the same user. The client address is the connection's, or the one the
trusted proxy header names when TRUSTED_PROXY_HEADER is set (only then: clients could send it themselves)."""

import ipaddress
import unicodedata
from datetime import timedelta
from functools import wraps

from django.conf import settings
from django.shortcuts import render
from django.utils import timezone

from .models import LoginFailure


def normalized_username(raw) -> str:
    """The username as the log-in form reads it (NFKC), case-folded: the key the throttle counts under (without
    NUL characters, which no username holds and PostgreSQL cannot store)."""
    return unicodedata.normalize("NFKC", str(raw or "")).replace("\x00", "").strip().casefold()[:150]


def client_address(request) -> str | None:
    """The client's address: from TRUSTED_PROXY_HEADER when one is configured and holds an address (for
    X-Forwarded-For, its last entry, the one the proxy added), else the connection's."""
    header = settings.TRUSTED_PROXY_HEADER
    if header:
        candidate = request.headers.get(header, "").split(",")[-1].strip()
        try:
            return str(ipaddress.ip_address(candidate))
        except ValueError:
            pass
    return request.META.get("REMOTE_ADDR") or None


def _window() -> timedelta:
    return timedelta(minutes=settings.LOGIN_WINDOW_MINUTES)


def is_paused(username: str, address: str | None) -> bool:
    recent = LoginFailure.objects.filter(at__gte=timezone.now() - _window())
    if address and recent.filter(ip=address).count() >= settings.LOGIN_MAX_FAILURES_PER_ADDRESS:
        return True
    return recent.filter(username=username, ip=address).count() >= settings.LOGIN_MAX_FAILURES


def throttled(login_view):
    """A log-in view (GET shows the form, POST answers 302 when the log-in succeeds and shows the form again,
    200, when it fails) with the throttle in front: a paused POST answers 429 without trying the password."""

    @wraps(login_view)
    def view(request, *args, **kwargs):
        if request.method != "POST":
            return login_view(request, *args, **kwargs)
        username, address = normalized_username(request.POST.get("username")), client_address(request)
        if is_paused(username, address):
            minutes = settings.LOGIN_WINDOW_MINUTES
            return render(request, "registration/login_limited.html", {"minutes": minutes}, status=429)
        response = login_view(request, *args, **kwargs)
        if response.status_code == 200:  # the form again: wrong username or password
            LoginFailure.objects.create(username=username, ip=address)
            LoginFailure.objects.filter(at__lt=timezone.now() - _window()).delete()
        elif response.status_code == 302:  # logged in: earlier typos from here no longer count
            LoginFailure.objects.filter(username=username, ip=address).delete()
        return response

    return view
