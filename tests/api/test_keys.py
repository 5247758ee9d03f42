"""API keys: the dashboard page for admins, and the create_org / create_api_key commands."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from oncore.accounts.models import ApiKey, Membership, Organization, hash_key
from tests.fixtures import ApiClient, assert_error

pytestmark = pytest.mark.django_db


def test_it_lets_an_admin_create_a_key_shown_once(admin_client, org, client):
    response = admin_client.post("/settings/api-keys/", {"name": "Portal"})
    assert response.status_code == 200
    raw = response.context["new_key"]["raw"]
    assert raw.encode() in response.content and "no-store" in response["Cache-Control"]
    key = ApiKey.objects.get(organization=org)
    assert key.hashed_key == hash_key(raw) and key.name == "Portal" and key.tenant is None
    assert raw.encode() not in admin_client.get("/settings/api-keys/").content
    assert ApiClient(client, raw).get("/queue").status_code == 200


def test_it_creates_tenant_keys_that_the_api_refuses(admin_client, org, tenant, client):
    response = admin_client.post("/settings/api-keys/", {"name": "Bistro only", "tenant": tenant.pk})
    raw = response.context["new_key"]["raw"]
    assert b"tenant_key_not_allowed" in response.content
    assert_error(ApiClient(client, raw).get("/queue"), 403, "tenant_key_not_allowed")


def test_it_revokes_a_key(admin_client, org, client):
    key, raw = ApiKey.generate(org, name="Old")
    response = admin_client.post(f"/settings/api-keys/{key.pk}/revoke/")
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert_error(ApiClient(client, raw).get("/queue"), 401, "unauthorized")


def test_it_refuses_members_and_hides_other_organizations_keys(member_client, other_org, org):
    assert member_client.get("/settings/api-keys/").status_code == 403
    theirs = ApiKey.generate(other_org)[0]
    assert member_client.post(f"/settings/api-keys/{theirs.pk}/revoke/").status_code == 403


def test_it_hides_another_organizations_key_from_an_admin(admin_client, other_org):
    theirs = ApiKey.generate(other_org)[0]
    assert admin_client.post(f"/settings/api-keys/{theirs.pk}/revoke/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_it_creates_an_organization_with_its_first_admin(capsys, monkeypatch):
    monkeypatch.delenv("ONCORE_ADMIN_PASSWORD", raising=False)
    call_command("create_org", "Blue Cafe", "--admin", "bea", "--email", "bea@example.com")
    out = capsys.readouterr().out
    org = Organization.objects.get(slug="blue-cafe")
    user = get_user_model().objects.get(username="bea")
    assert Membership.objects.get(user=user, organization=org).role == "admin"
    password = out.split("): ")[1].split()[0]
    assert user.check_password(password)
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_org", "Blue Cafe", "--admin", "bea")


def test_it_takes_the_admin_password_from_the_environment(capsys, monkeypatch):
    monkeypatch.setenv("ONCORE_ADMIN_PASSWORD", "from-env-pass-1")
    call_command("create_org", "Green", "--slug", "green", "--admin", "gus")
    assert "from-env-pass-1" not in capsys.readouterr().out
    assert get_user_model().objects.get(username="gus").check_password("from-env-pass-1")


def test_it_creates_api_keys_from_the_command_line(capsys, org, tenant, client):
    call_command("create_api_key", "--org", "acme", "--name", "CI")
    captured = capsys.readouterr()
    raw = captured.out.strip()
    assert ApiKey.objects.get(hashed_key=hash_key(raw)).name == "CI"
    assert ApiClient(client, raw).get("/queue").status_code == 200
    call_command("create_api_key", "--org", "acme", "--tenant", "bistro")
    captured = capsys.readouterr()
    assert ApiKey.objects.get(hashed_key=hash_key(captured.out.strip())).tenant == tenant
    assert "organization key" in captured.err
    with pytest.raises(CommandError, match="No organization"):
        call_command("create_api_key", "--org", "nope")
    with pytest.raises(CommandError, match="No tenant"):
        call_command("create_api_key", "--org", "acme", "--tenant", "nope")
