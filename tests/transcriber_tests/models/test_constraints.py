"""Rules the database itself enforces (run on SQLite locally and PostgreSQL in CI), and the admin pages."""

import pytest
from django.db import DataError, IntegrityError, transaction
from django.urls import reverse

from oncore.transcribers.models import Transcriber
from transcriber_tests.models import Bank, Candidate, Flag

pytestmark = pytest.mark.django_db


def transcriber(i):
    return Transcriber.objects.create(slug=f"t{i}", provider="generic", model=f"m{i}", display_name=f"T{i}")


def test_it_allows_one_flag_per_line(org, recorded_call):
    line = recorded_call.lines.get(position=0)
    Flag.objects.create(organization=org, line=line, expected_text="Siobhan")
    with pytest.raises(IntegrityError), transaction.atomic():
        Flag.objects.create(organization=org, line=line, expected_text="Siobhan again")


def test_it_holds_at_most_eight_candidates_per_bank(org):
    bank = Bank.objects.create(organization=org, name="B")
    for i in range(8):
        Candidate.objects.create(bank=bank, transcriber=transcriber(i), position=i)
    ninth = transcriber(8)
    with pytest.raises(IntegrityError), transaction.atomic():
        Candidate.objects.create(bank=bank, transcriber=ninth, position=8)
    with pytest.raises(IntegrityError), transaction.atomic():
        Candidate.objects.create(bank=bank, transcriber=ninth, position=3)
    assert bank.candidates.count() == 8


def test_it_lists_a_transcriber_once_per_bank(org):
    bank = Bank.objects.create(organization=org, name="B")
    t = transcriber(0)
    Candidate.objects.create(bank=bank, transcriber=t, position=0)
    with pytest.raises(IntegrityError), transaction.atomic():
        Candidate.objects.create(bank=bank, transcriber=t, position=1)


def test_it_keeps_bank_settings_in_range(org):
    with pytest.raises(IntegrityError), transaction.atomic():
        Bank.objects.create(organization=org, name="Too many controls", controls_per_flag=3)
    # The exact threshold column (4 decimals) cannot even hold 60 on PostgreSQL; SQLite has the check refuse it.
    with pytest.raises((IntegrityError, DataError)), transaction.atomic():
        Bank.objects.create(organization=org, name="Percent not fraction", threshold=60)
    with pytest.raises(IntegrityError), transaction.atomic():
        Bank.objects.create(organization=org, name="Above one", threshold="1.0001")


def test_it_loads_every_admin_page(client, django_user_model, org, recorded_call):
    from django.contrib import admin

    staff = django_user_model.objects.create_superuser("root", password="pw-for-tests-1")
    client.force_login(staff)
    Flag.objects.create(organization=org, line=recorded_call.lines.get(position=0), expected_text="Siobhan")
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        changelist = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
        assert client.get(changelist).status_code == 200, changelist
        if model_admin.has_add_permission(type("R", (), {"user": staff})()):
            add = reverse(f"admin:{meta.app_label}_{meta.model_name}_add")
            assert client.get(add).status_code == 200, add
        first = model.objects.first()
        if first is not None:
            change = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[first.pk])
            assert client.get(change).status_code == 200, change
