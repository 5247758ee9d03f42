import pytest
from django.urls import reverse

from oncore.accounts.models import LoginFailure

pytestmark = pytest.mark.django_db


def test_it_logs_in_and_out(client, admin_user):
    response = client.post(reverse("login"), {"username": "ada", "password": "pw-for-tests-1"})
    assert response.status_code == 302
    assert client.get(reverse("tt:calls")).status_code == 200
    client.post(reverse("logout"))
    assert client.get(reverse("tt:calls")).status_code == 302


def test_it_pauses_log_in_after_repeated_failures(client, admin_user):
    for _ in range(5):
        response = client.post(reverse("login"), {"username": "ada", "password": "wrong"})
        assert response.status_code == 200 and b"didn't match" in response.content
    refused = client.post(reverse("login"), {"username": "ada", "password": "pw-for-tests-1"})
    assert refused.status_code == 429
    assert b"Wait up to 15 minutes" in refused.content
    assert LoginFailure.objects.count() == 5


def test_it_does_not_store_the_password_tried(client, admin_user):
    client.post(reverse("login"), {"username": "ada", "password": "s3cret-guess"})
    row = LoginFailure.objects.get()
    assert "s3cret" not in f"{row.username} {row.ip}"
