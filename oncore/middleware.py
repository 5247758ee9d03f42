"""Site-wide HTTP guards: a request id on every request and response (written to the request's log line), a cap
on request bodies (refused with 413 before anything reads them), the Content-Security-Policy header on every
response, and the API's version on every API answer (with the deprecation headers when a request used a
deprecated word)."""

import logging
import re
import time
import uuid

from django.http import HttpResponse, JsonResponse

from oncore.api import version
from oncore.config import config
from oncore.errors import error_body, too_large_message

# No inline script or style anywhere (static/js/oncore.js holds the one listener; templates use classes), so
# everything comes from this site; nothing may frame it, and forms post only to it.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "media-src 'self'",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


def too_large(request, message: str):
    """413 in the API's error shape under /api/, plain text elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("request_too_large", message), status=413)
    return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")


def api_version(get_response):
    """Every answer under /api/v1/, errors included, names the API's version (OnCore-API-Version); one to a request
    that used a deprecated word also carries Deprecation and Sunset (oncore.api.version)."""

    def middleware(request):
        if not request.path.startswith("/api/v1/"):
            return get_response(request)
        token = version.begin()
        try:
            response = get_response(request)
        finally:
            deprecation = version.end(token)
        response[version.VERSION_HEADER] = version.API_VERSION
        for name, value in deprecation.items():
            response[name] = value
        return response

    return middleware


def request_size_limit(get_response):
    """Refuse a request whose Content-Length exceeds ONCORE["MAX_REQUEST_MB"], before its body is read. (A
    body without a Content-Length reads as empty under WSGI, so the header is all there is to check.)"""

    def middleware(request):
        limit = config().max_request_mb * 2**20
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            return too_large(request, too_large_message(length, limit))
        return get_response(request)

    return middleware


def content_security_policy(get_response):
    def middleware(request):
        response = get_response(request)
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response

    return middleware


REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
request_log = logging.getLogger("oncore.requests")


def request_id(get_response):
    """X-Request-Id: the client's own when it sent a usable one (1 to 128 of A-Z a-z 0-9 . _ : -), else a new
    one; set on request.request_id, answered on every response and written to the request's log line."""

    def middleware(request):
        sent = request.headers.get("X-Request-Id", "")
        request.request_id = sent if REQUEST_ID.fullmatch(sent) else uuid.uuid4().hex
        started = time.monotonic()
        response = get_response(request)
        response["X-Request-Id"] = request.request_id
        request_log.info(
            "%s %s %s %.0fms request_id=%s",
            request.method,
            request.path,
            response.status_code,
            (time.monotonic() - started) * 1000,
            request.request_id,
        )
        return response

    return middleware
