"""Organization-key authentication: `Authorization: Bearer <organization key>`; a tenant key is refused."""

from datetime import timedelta

from django.db.models import Q
from django.utils import timezone
from ninja.security import HttpBearer

from oncore.accounts.models import ApiKey, hash_key

from .errors import ApiError

TOUCH_EVERY = timedelta(minutes=1)


class OrganizationKey(HttpBearer):
    """`Authorization: Bearer <organization key>`. Sets request.org; a tenant key is refused with 403."""

    def __call__(self, request):
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if not header:
            raise ApiError(
                "unauthorized", "No API key: send your organization key as 'Authorization: Bearer <key>'."
            )
        if scheme.lower() != "bearer" or not token:
            raise ApiError("unauthorized", "The Authorization header must be 'Bearer <key>'.")
        return self.authenticate(request, token)

    def authenticate(self, request, token):
        key = ApiKey.objects.select_related("organization").filter(hashed_key=hash_key(token)).first()
        if key is None or not key.matches(token):
            raise ApiError(
                "unauthorized", "This API key is not known. Check it was copied whole, or create a new one."
            )
        if key.revoked_at is not None:
            raise ApiError("unauthorized", f"This API key ({key.prefix}…) was revoked; create a new one.")
        if key.tenant_id is not None:
            raise ApiError(
                "tenant_key_not_allowed",
                f"This is a tenant key ({key.prefix}…). Transcriber testing spans every tenant of the "
                "organization, so the API needs an organization key: create one without a tenant.",
            )
        now = timezone.now()
        if key.last_used_at is None or now - key.last_used_at >= TOUCH_EVERY:
            # One conditional UPDATE at most once a minute per key, however many requests arrive.
            ApiKey.objects.filter(pk=key.pk).filter(
                Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - TOUCH_EVERY)
            ).update(last_used_at=now)
        request.org = key.organization
        request.api_key = key
        return key
