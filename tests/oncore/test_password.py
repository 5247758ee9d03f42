"""Every user changes their own password (not only staff through the admin), with the site's validators; the
user's other sessions end; the header links to it."""

import pytest
from django.test import Client
from django.urls import reverse

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
