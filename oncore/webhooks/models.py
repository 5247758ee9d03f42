import json
import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

from oncore.accounts.models import Organization

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


class WebhookEndpoint(models.Model):
    """Where an organization wants events sent. The secret signs every delivery: it is shown once, when the
    endpoint is created, and kept to sign (it is no server secret: a leak lets someone forge events to this
    one endpoint, nothing more; delete the endpoint and create another to change it)."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.URLField(max_length=500)
    events = models.JSONField(default=list, help_text="The event types sent to it.")
    description = models.CharField(max_length=200, blank=True)
    enabled = models.BooleanField(default=True)
    secret = models.CharField(max_length=100, default=new_secret, editable=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return self.url


class WebhookDelivery(models.Model):
    """One event sent to one endpoint: the body as sent, its attempts and the last answer (the delivery log)."""

    PENDING = "pending"
    SENDING = "sending"
    DELIVERED = "delivered"
    FAILED = "failed"
    STATUSES = [
        (PENDING, "Pending"),
        (SENDING, "Sending"),
        (DELIVERED, "Delivered"),
        (FAILED, "Failed"),
    ]

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event_id = models.CharField(max_length=100)
    event_type = models.CharField(max_length=50)
    body = models.TextField(help_text="The JSON body, exactly as signed and sent.")
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True, help_text="Why the last attempt failed.")
    next_attempt_at = models.DateTimeField(help_text="When it is due (pending).")
    retry_until = models.DateTimeField(help_text="Failed attempts are tried again until then.")
    claimed_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event_id"], name="one_delivery_per_event"),
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"], condition=Q(status="pending"), name="webhook_delivery_due"
            ),
        ]

    def __str__(self):
        return f"{self.event_type} {self.event_id} to {self.endpoint_id} ({self.status})"

    @property
    def event(self) -> dict:
        return json.loads(self.body)


class EventState(models.Model):
    """The last value seen of something an event announces when it changes (a bank's leader, say), so the
    event is sent on a change only (actions.record_change)."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    subject = models.CharField(max_length=100, help_text='What is watched, e.g. "bank:12:leader".')
    value = models.CharField(max_length=100, blank=True)
    checked_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "subject"], name="one_state_per_subject"),
        ]

    def __str__(self):
        return f"{self.subject} = {self.value!r}"
