"""GET /healthz: what a load balancer asks before sending a host traffic."""

from datetime import timedelta

import pytest
from django.utils import timezone

from transcriber_tests.models import Transcription

pytestmark = pytest.mark.django_db


def test_it_answers_ok_without_a_login_and_says_how_long_the_oldest_transcription_waits(
    client, flag, make_transcriber
):
    body = client.get("/healthz").json()
    assert body == {
        "status": "ok",
        "checks": {"database": "ok", "cache": "ok", "broker": "ok", "storage": "ok"},
        "oldest_waiting_transcription_s": None,
    }
    waiting = Transcription.objects.create(
        organization=flag.organization, line=flag.line, transcriber=make_transcriber("slow", "x")
    )
    Transcription.objects.filter(pk=waiting.pk).update(created_at=timezone.now() - timedelta(seconds=90))
    assert 90 <= client.get("/healthz").json()["oldest_waiting_transcription_s"] < 100


def test_it_answers_503_naming_the_failed_check_and_nothing_secret(client, settings, caplog):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens on the discard port
        }
    }
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "failing" and body["checks"]["cache"] == "failed"
    assert body["checks"]["database"] == "ok"
    assert b"127.0.0.1" not in response.content and b"redis" not in response.content.lower()
    assert "cache check failed" in caplog.text
