"""Every user changes their own password (not only staff through the admin), with the site's validators; the
user's other sessions end; the header links to it."""

import pytest
from django.test import Client
from django.urls import reverse

from oncore.config import config

pytestmark = pytest.mark.django_db


def test_a_member_changes_their_password_and_their_other_sessions_end(member_user):
    here, elsewhere = Client(), Client()
    member_user.set_password("old-password-for-tests")
    member_user.save()
    for client in (here, elsewhere):
        assert client.login(username=member_user.username, password="old-password-for-tests")
    page = here.get(reverse("tt:home")).content.decode()
    assert f'href="{reverse("password_change")}"' in page  # linked from the header

    weak = here.post(
        reverse("password_change"),
        {"old_password": "old-password-for-tests", "new_password1": "123", "new_password2": "123"},
    )
    assert weak.status_code == 200 and "This password is too short" in weak.content.decode()
    done = here.post(
        reverse("password_change"),
        {
            "old_password": "old-password-for-tests",
            "new_password1": "a-much-longer-passphrase-2026",
            "new_password2": "a-much-longer-passphrase-2026",
        },
        follow=True,
    )
    assert "Your password is changed" in done.content.decode()
    assert here.get(reverse("tt:home")).status_code == 200  # this session stays
    assert elsewhere.get(reverse("tt:home")).url.startswith(reverse("login"))  # the other one ended
    assert not Client().login(username=member_user.username, password="old-password-for-tests")


def test_the_password_page_asks_for_a_log_in_first(client):
    assert client.get(reverse("password_change")).url.startswith(reverse("login"))


# ---------------------------------------------------------------- wrong current passwords are throttled

OLD, NEW = "old-password-for-tests", "a-much-longer-passphrase-2026"


def change(client, old_password, address="10.0.0.1"):
    return client.post(
        reverse("password_change"),
        {"old_password": old_password, "new_password1": NEW, "new_password2": NEW},
        REMOTE_ADDR=address,
    )


@pytest.fixture
def logged_in(client, member_user):
    member_user.set_password(OLD)
    member_user.save()
    client.force_login(member_user)
    return client


@pytest.mark.parametrize("counters", ["database", "cache"])
def test_it_pauses_password_changes_after_repeated_wrong_current_passwords(
    logged_in, member_user, settings, counters
):
    settings.ONCORE = {**settings.ONCORE, "LOGIN_COUNTERS": counters}
    for _ in range(config().login_max_failures):
        wrong = change(logged_in, "not-my-password")
        assert (
            wrong.status_code == 200 and "Your old password was entered incorrectly" in wrong.content.decode()
        )
    refused = change(logged_in, OLD)  # the right one, too late: not even tried
    assert refused.status_code == 429
    assert "Wait up to 15 minutes" in refused.content.decode()
    assert refused["Retry-After"] == str(config().login_window_minutes * 60)
    member_user.refresh_from_db()
    assert member_user.check_password(OLD)  # unchanged
    # The same counters as the log-in's: a stolen session's guesses pause the owner's log-in from that address.
    assert (
        Client()
        .post(reverse("login"), {"username": member_user.username, "password": OLD}, REMOTE_ADDR="10.0.0.1")
        .status_code
        == 429
    )
    # From another address the owner can still log in and change the password.
    assert change(logged_in, OLD, address="198.51.100.4").status_code == 302


def test_a_weak_new_password_is_not_a_wrong_guess(logged_in, member_user, settings):
    for _ in range(config().login_max_failures + 2):
        weak = logged_in.post(
            reverse("password_change"), {"old_password": OLD, "new_password1": "123", "new_password2": "123"}
        )
        assert weak.status_code == 200 and "This password is too short" in weak.content.decode()
    assert change(logged_in, OLD).status_code == 302


def test_the_right_password_forgets_the_users_own_typos(logged_in, member_user, settings):
    for _ in range(config().login_max_failures - 1):
        change(logged_in, "typo")
    assert change(logged_in, OLD).status_code == 302
    member_user.set_password(OLD)
    member_user.save()
    logged_in.force_login(member_user)
    for _ in range(config().login_max_failures - 1):
        assert change(logged_in, "typo").status_code == 200  # counted from zero again
    assert change(logged_in, OLD).status_code == 302
