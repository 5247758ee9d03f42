"""Log-in with a rate limit: after too many failures for one username or from one address within the window,
further attempts are refused for a while with a page that says how long to wait."""

from datetime import timedelta

from django.contrib.auth import views as auth_views
from django.db.models import Q
from django.shortcuts import render
from django.utils import timezone

from oncore.env import env_int

from .models import LoginFailure

MAX_FAILURES = env_int("LOGIN_MAX_FAILURES", 5, minimum=1)
WINDOW = timedelta(minutes=env_int("LOGIN_WINDOW_MINUTES", 15, minimum=1))


def _client_ip(request):
    return request.META.get("REMOTE_ADDR") or None


def _recent_failures(username, ip):
    since = timezone.now() - WINDOW
    who = Q(username=username.lower()) if username else Q(pk__in=[])
    if ip:
        who |= Q(ip=ip)
    return LoginFailure.objects.filter(who, at__gte=since)


class RateLimitedLoginView(auth_views.LoginView):
    def post(self, request, *args, **kwargs):
        username = (request.POST.get("username") or "").strip()
        if _recent_failures(username, _client_ip(request)).count() >= MAX_FAILURES:
            minutes = int(WINDOW.total_seconds() // 60)
            return render(request, "registration/login_limited.html", {"minutes": minutes}, status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        username = (self.request.POST.get("username") or "").strip().lower()[:150]
        LoginFailure.objects.create(username=username, ip=_client_ip(self.request))
        LoginFailure.objects.filter(at__lt=timezone.now() - WINDOW).delete()
        return super().form_invalid(form)
