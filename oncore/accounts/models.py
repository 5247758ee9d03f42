import hashlib
import hmac
import secrets
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import models
from django.db.models import Q


class Organization(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    # The days its figures are counted in ("last 30 days" is today and the 29 days before it there): an IANA name.
    # Change it with `manage.py set_timezone`, which recounts the per-day totals in the new days.
    timezone = models.CharField(max_length=64, default="UTC")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


class Tenant(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tenants")
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "slug"], name="tenant_slug_unique_in_org")
        ]

    def __str__(self):
        return self.name


class Membership(models.Model):
    ADMIN = "admin"
    MEMBER = "member"
    ROLES = [(ADMIN, "Admin"), (MEMBER, "Member")]

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=ROLES, default=MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "organization"], name="one_membership_per_org"),
            models.CheckConstraint(condition=Q(role__in=["admin", "member"]), name="membership_role_valid"),
        ]

    def __str__(self):
        return f"{self.user} in {self.organization} ({self.role})"

    @property
    def is_admin(self) -> bool:
        return self.role == self.ADMIN


KEY_PREFIX = "onc_"


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiKey(models.Model):
    """An API key. Only its SHA-256 hash is stored; the raw key is shown once, at creation.

    Scope: organization-wide when `tenant` is empty, else limited to that tenant."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    tenant = models.ForeignKey(
        Tenant, on_delete=models.CASCADE, null=True, blank=True, related_name="api_keys"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, help_text="The first characters of the key, for recognising it.")
    hashed_key = models.CharField(max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.prefix}… ({self.scope})"

    @property
    def scope(self) -> str:
        return "tenant" if self.tenant_id else "organization"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @classmethod
    def generate(cls, organization, tenant=None, name="", created_by=None):
        """Create a key; returns (api_key, raw_key). The raw key is never stored."""
        raw = KEY_PREFIX + secrets.token_urlsafe(32)
        key = cls.objects.create(
            organization=organization,
            tenant=tenant,
            name=name,
            prefix=raw[:12],
            hashed_key=hash_key(raw),
            created_by=created_by,
        )
        return key, raw

    def matches(self, raw: str) -> bool:
        return hmac.compare_digest(self.hashed_key, hash_key(raw))


class IdempotentRequest(models.Model):
    """An API POST sent with an Idempotency-Key, with the answer it got, kept 24 hours (oncore.idempotency): the
    same key and request replay the answer; the key with another request is refused. The row is inserted before
    the work, in the work's transaction, so a second request with the key waits for the first and replays it."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64, help_text="SHA-256 of the method, path and parameters.")
    status = models.PositiveSmallIntegerField(default=0)
    body = models.TextField(blank=True)
    location = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "key"], name="idempotency_key_unique_in_org")
        ]

    def __str__(self):
        return f"{self.key} ({self.status})"


class LoginFailure(models.Model):
    """A failed log-in, kept briefly to rate-limit guessing across every server process."""

    username = models.CharField(max_length=150, db_index=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self):
        return f"{self.username} at {self.at:%Y-%m-%d %H:%M}"
