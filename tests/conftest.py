"""Shared fixtures. Three users, as the house rules ask: an org admin, an org member, an admin of another org."""

import os

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def org(db):
    from oncore.accounts.models import Organization

    return Organization.objects.create(name="Acme Dining", slug="acme")


@pytest.fixture
def other_org(db):
    from oncore.accounts.models import Organization

    return Organization.objects.create(name="Other Co", slug="other")


@pytest.fixture
def tenant(org):
    return org.tenants.create(name="Bistro", slug="bistro")


@pytest.fixture
def other_tenant(other_org):
    return other_org.tenants.create(name="Elsewhere", slug="elsewhere")


def _user(django_user_model, username, organization, role):
    from oncore.accounts.models import Membership

    user = django_user_model.objects.create_user(username=username, password="pw-for-tests-1")
    Membership.objects.create(user=user, organization=organization, role=role)
    return user


@pytest.fixture
def admin_user(django_user_model, org):
    return _user(django_user_model, "ada", org, "admin")


@pytest.fixture
def member_user(django_user_model, org):
    return _user(django_user_model, "max", org, "member")


@pytest.fixture
def other_admin(django_user_model, other_org):
    return _user(django_user_model, "olga", other_org, "admin")


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def member_client(client, member_user):
    client.force_login(member_user)
    return client


@pytest.fixture
def other_client(client, other_admin):
    client.force_login(other_admin)
    return client


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty cache (the results page caches per bank)."""
    from django.core.cache import cache

    cache.clear()
