"""Small words a newcomer's walk found wrong (issue 34, 5.11 and 5.13), each as a person reads it."""

import pytest
from django.urls import reverse

from tests.transcriber_tests.runs.support import read

pytestmark = pytest.mark.django_db


def test_the_tenant_and_assistant_tables_say_they_count_flagged_and_control_lines(
    admin_client, flag, bank, tenant
):
    page = read(admin_client.get(reverse("tt:bank", args=[bank.pk])).content)
    assert "By tenant the bank's flagged and control lines, last 30 days" in page
    assert "By assistant the bank's flagged and control lines, last 30 days" in page
    assert "every call's lines" not in page
    filtered = read(admin_client.get(reverse("tt:bank", args=[bank.pk]) + f"?tenant={tenant.pk}").content)
    assert (
        "By tenant the bank's flagged and control lines, of every tenant (not only tenant Bistro), last 30"
        in (filtered)
    )
