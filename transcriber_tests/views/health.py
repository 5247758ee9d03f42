"""GET /healthz for load balancers and monitoring: is every shared service reachable from this host, and how long
has the oldest line transcription been waiting. JSON, no login, nothing secret (no addresses, no versions, no
error texts: a failing check says only that it failed; the detail goes to the log)."""

import logging
import time

from django.core.cache import cache
from django.core.files.storage import default_storage
from django.db import connection
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ..queries import jobs

log = logging.getLogger(__name__)


def _database():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _cache():
    key = f"healthz:{time.monotonic_ns()}"
    cache.set(key, "ok", 10)
    if cache.get(key) != "ok":
        raise RuntimeError("the cache did not give back what was just written")
    cache.delete(key)


def _broker():
    from django_q.brokers import get_broker

    if not get_broker().ping():
        raise RuntimeError("the broker did not answer")


def _storage():
    default_storage.exists("healthz-probe")


CHECKS = {"database": _database, "cache": _cache, "broker": _broker, "storage": _storage}


@never_cache
@require_GET
def healthz(request):
    """200 with every check "ok", or 503 naming the checks that failed."""
    results = {}
    for name, check in CHECKS.items():
        try:
            check()
            results[name] = "ok"
        except Exception:
            log.exception("healthz: the %s check failed", name)
            results[name] = "failed"
    oldest = None
    if results["database"] == "ok":
        since = jobs.oldest_waiting()
        if since is not None:
            oldest = round((timezone.now() - since).total_seconds(), 1)
    healthy = all(v == "ok" for v in results.values())
    body = {
        "status": "ok" if healthy else "failing",
        "checks": results,
        "oldest_waiting_transcription_s": oldest,
    }
    return JsonResponse(body, status=200 if healthy else 503)
