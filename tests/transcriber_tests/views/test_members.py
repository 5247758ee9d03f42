"""Members see nothing of transcriber testing: no navigation entry or link to it; their home page says what they
can do and who to ask; admin-only pages still answer 403 with the explanation."""

import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

PRODUCT_PATHS = ("/calls", "/flags", "/banks", "/runs", "/benchmark", "/settings/api-keys", "/lines")


def links(html: str) -> list[str]:
    return re.findall(r'href="([^"#]+)', html)


def test_a_member_sees_what_they_can_do_and_who_to_ask_and_no_link_to_transcriber_testing(
    member_client, admin_user, org
):
    admin_user.email = "ada@acme.example"
    admin_user.save()
    response = member_client.get(reverse("tt:home"))
    assert response.status_code == 200
    page = response.content.decode()
    assert "What you can do" in page and "Who to ask" in page
    assert "ada" in page and "mailto:ada@acme.example" in page
    assert not [href for href in links(page) if href.startswith(PRODUCT_PATHS)]
    assert "transcriber testing" not in page.lower()

    refused = member_client.get(reverse("tt:calls"))
    assert refused.status_code == 403
    page = refused.content.decode()
    assert "Transcriber testing is for organization admins" in page
    assert not [href for href in links(page) if href.startswith(PRODUCT_PATHS)]


def test_an_admin_still_goes_to_the_calls_page_with_the_navigation(admin_client):
    response = admin_client.get(reverse("tt:home"))
    assert response.status_code == 302 and response["Location"] == reverse("tt:calls")
    page = admin_client.get(reverse("tt:calls")).content.decode()
    assert {reverse("tt:calls"), reverse("tt:banks"), reverse("bench:runs")} <= set(links(page))
