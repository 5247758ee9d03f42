"""Who typed what: every edit of a flag's expected text, tags or note, with who made it and when, old and new.
The numbers decide a vendor switch, so their history is kept; written by actions/flags.py do_edit_flag and nowhere else."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from .banks import Flag


def key_name(key) -> str:
    """An API key as the pages and the API name it: "API key ci (ok_3f…)"."""
    label = f"{key.name} ({key.prefix}…)" if key.name else f"{key.prefix}…"
    return f"API key {label}"


def name_of(user=None, key=None) -> str:
    """Who, as the pages and the API name them: a person's user name, an API key, or "" when neither is known."""
    if user is not None:
        return user.get_username()
    if key is not None:
        return key_name(key)
    return ""


class FlagEdit(models.Model):
    """One field of a flag changed by one edit. `by` is the person (dashboard), `by_key` the organization API
    key (API); both empty when neither is known (a user or key since deleted keeps its name in `by_name`)."""

    EXPECTED_TEXT = "expected_text"
    TAGS = "tags"
    NOTE = "note"
    FIELDS = [(EXPECTED_TEXT, "Expected text"), (TAGS, "Tags"), (NOTE, "Note")]

    flag = models.ForeignKey(Flag, on_delete=models.CASCADE, related_name="edits")
    at = models.DateTimeField(default=timezone.now)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    by_key = models.ForeignKey(
        "accounts.ApiKey", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    by_name = models.CharField(max_length=150, blank=True, help_text="Who, as named when the edit was made.")
    field = models.CharField(max_length=20, choices=FIELDS)
    old = models.TextField(blank=True)
    new = models.TextField(blank=True)

    class Meta:
        ordering = ["flag", "at", "id"]
        indexes = [models.Index(fields=["flag", "at"], name="flag_edit_by_flag")]

    def __str__(self):
        return (
            f"{self.field} of flag {self.flag_id} by {self.by_name or 'someone'} at {self.at:%Y-%m-%d %H:%M}"
        )
