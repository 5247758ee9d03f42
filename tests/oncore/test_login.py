import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from oncore.accounts import login
from oncore.accounts.models import LoginFailure, Organization

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
    assert refused["Retry-After"] == "900"  # the same wait, for programs
    assert LoginFailure.objects.count() == 5


def test_it_does_not_store_the_password_tried(client, admin_user):
    client.post(reverse("login"), {"username": "ada", "password": "s3cret-guess"})
    row = LoginFailure.objects.get()
    assert "s3cret" not in f"{row.username} {row.ip}"


# ---------------------------------------------------------------- the throttle cannot be walked around

RIGHT = "pw-for-tests-1"


def log_in(client, username, password, address="10.0.0.1", path="/login/", **headers):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address, **headers)


@pytest.fixture
def victim(django_user_model):
    return django_user_model.objects.create_user(username="victim2", password=RIGHT)


def test_it_throttles_the_admin_log_in_exactly_like_the_site_log_in(client, django_user_model):
    django_user_model.objects.create_user(username="root", password=RIGHT, is_staff=True, is_superuser=True)
    for _ in range(12):
        response = log_in(client, "root", "wrong", path="/admin/login/")
    assert response.status_code == 429 and b"Wait up to 15 minutes" in response.content
    refused = log_in(client, "root", RIGHT, path="/admin/login/")
    assert refused.status_code == 429
    assert client.get("/admin/").status_code == 302  # still not logged in
    assert LoginFailure.objects.filter(username="root").count() == 5


def test_it_counts_a_look_alike_username_against_the_real_user(client, victim):
    for _ in range(5):
        assert log_in(client, "victim2", "wrong").status_code == 200
    # Fullwidth "ｖ": Django's NFKC normalization reads it as "victim2" and would log the real user in.
    for spelling in ("ｖictim2", "VICTIM2", " victim2 "):
        assert log_in(client, spelling, RIGHT).status_code == 429, spelling
    assert "_auth_user_id" not in client.session


def test_it_lets_a_user_in_from_their_own_address_while_someone_guesses_elsewhere(client, victim):
    for _ in range(8):
        log_in(client, "victim2", "wrong", address="203.0.113.9")
    assert log_in(client, "victim2", RIGHT, address="203.0.113.9").status_code == 429
    assert log_in(client, "victim2", RIGHT, address="198.51.100.4").status_code == 302


def test_it_pauses_an_address_that_guesses_many_usernames(client, victim):
    for i in range(20):
        assert log_in(client, f"user{i}", "wrong", address="203.0.113.9").status_code == 200
    assert log_in(client, "victim2", RIGHT, address="203.0.113.9").status_code == 429
    assert log_in(client, "victim2", RIGHT, address="198.51.100.4").status_code == 302


def test_it_reads_the_client_address_from_the_proxy_header_only_when_one_is_configured(
    client, victim, settings
):
    for i in range(5):  # without a configured header, a client's own X-Forwarded-For changes nothing
        log_in(client, "victim2", "wrong", address="10.0.0.1", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
    assert log_in(client, "victim2", RIGHT, HTTP_X_FORWARDED_FOR="192.0.2.200").status_code == 429
    assert set(LoginFailure.objects.values_list("ip", flat=True)) == {"10.0.0.1"}

    # Behind the proxy, its last address is the client's.
    settings.ONCORE = {**settings.ONCORE, "TRUSTED_PROXY_HEADER": "X-Forwarded-For"}
    LoginFailure.objects.all().delete()
    for _ in range(5):
        log_in(client, "victim2", "wrong", HTTP_X_FORWARDED_FOR="192.0.2.1, 203.0.113.9")
    assert log_in(client, "victim2", RIGHT, HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 429
    assert log_in(client, "victim2", RIGHT, HTTP_X_FORWARDED_FOR="198.51.100.4").status_code == 302
    assert set(LoginFailure.objects.values_list("ip", flat=True)) == {"203.0.113.9"}


@pytest.mark.parametrize("counters", ["database", "cache"])
def test_it_forgets_the_users_own_typos_once_they_log_in_but_not_the_addresss_guesses_at_others(
    client, victim, settings, counters
):
    settings.ONCORE = {**settings.ONCORE, "LOGIN_COUNTERS": counters}
    for _ in range(3):
        log_in(client, "someone-else", "wrong")
    for _ in range(4):
        log_in(client, "victim2", "wrong")
    assert login.failures("victim2", "10.0.0.1") == (4, 7)
    assert log_in(client, "victim2", RIGHT).status_code == 302
    assert login.failures("victim2", "10.0.0.1") == (0, 3)  # alike on both backends


# ---------------------------------------------------------------- passwords


def test_it_applies_djangos_four_password_validators(settings):
    names = [v["NAME"].rsplit(".", 1)[-1] for v in settings.AUTH_PASSWORD_VALIDATORS]
    assert names == [
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    ]


@pytest.mark.parametrize("password", ["password123", "12345678901", "sh0rt", "beatrix-blue"])
def test_it_refuses_a_weak_admin_password_in_create_org_and_creates_nothing(monkeypatch, password):
    monkeypatch.setenv("ONCORE_ADMIN_PASSWORD", password)
    with pytest.raises(CommandError, match="ONCORE_ADMIN_PASSWORD is refused"):
        call_command("create_org", "Blue Cafe", "--admin", "beatrix-blue", "--email", "bea@example.com")
    assert not Organization.objects.exists()
    assert not get_user_model().objects.filter(username="beatrix-blue").exists()


def test_it_accepts_a_strong_admin_password_in_create_org(monkeypatch, client):
    monkeypatch.setenv("ONCORE_ADMIN_PASSWORD", "correct horse battery staple 7")
    call_command("create_org", "Blue Cafe", "--admin", "bea", stdout=io.StringIO())
    assert log_in(client, "bea", "correct horse battery staple 7").status_code == 302
