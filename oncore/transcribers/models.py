from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.functional import classproperty

from . import providers
from . import vocabulary as vocabulary_rules


class Transcriber(models.Model):
    """A catalogue entry: a speech-to-text system a bank can compare or a call can run on.

    Keys never live here: `api_key_env` names the environment variable that holds the key."""

    # Provider names other code spells out. Every provider, these and any other, is registered by its engine
    # module (providers.py): a new provider needs nothing here.
    FASTER_WHISPER = "faster_whisper"
    POCKETSPHINX = "pocketsphinx"
    GENERIC = "generic"
    BATCH = providers.BATCH
    STREAMING = providers.STREAMING
    MODES = [
        (BATCH, "Batch: the whole clip in one request"),
        (STREAMING, "Streaming: the clip as a live call"),
    ]

    slug = models.SlugField(max_length=100, unique=True)
    provider = models.CharField(
        max_length=32,
        help_text="A registered provider (oncore/transcribers/providers.py), e.g. deepgram or faster_whisper.",
    )
    model = models.CharField(max_length=200, help_text="The provider's model string, e.g. nova-3 or tiny.en.")
    mode = models.CharField(
        max_length=10,
        choices=MODES,
        default=BATCH,
        help_text="How a replay sends a line: batch (the clip in one request) or streaming (20 ms frames paced in "
        "real time over the vendor's live API, measuring the time to final text after the caller stops).",
    )
    display_name = models.CharField(max_length=200)
    price_per_minute = models.DecimalField(
        max_digits=10, decimal_places=5, default=Decimal("0"), help_text="List price per audio minute, USD."
    )
    price_source = models.CharField(
        max_length=300,
        blank=True,
        help_text="Where the price comes from: the vendor page or quote it was read from.",
    )
    price_date = models.DateField(
        null=True, blank=True, help_text="When the price was read at its source, so its age shows."
    )
    deprecation_date = models.DateField(
        null=True,
        blank=True,
        help_text="The vendor's announced shutdown date for this model; shown wherever the transcriber is offered.",
    )
    api_key_env = models.CharField(
        max_length=100, blank=True, help_text="Name of the environment variable that holds the key."
    )
    options = models.JSONField(default=dict, blank=True, help_text="Provider options, e.g. endpoint URL.")
    enabled = models.BooleanField(default=True)
    # A vocabulary candidate: a catalogue entry (base) plus an organization's vocabulary, sent in the provider's own
    # option (vocabulary.py). Its own row, so its transcriptions and scores are its own beside the plain entry's;
    # `keyterms` is the list it sends, kept in step with the vocabulary (a change replays its lines). Catalogue
    # entries have no base and no keyterms.
    base = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="with_vocabularies"
    )
    vocabulary = models.ForeignKey(
        "Vocabulary", on_delete=models.SET_NULL, null=True, blank=True, related_name="transcribers"
    )
    keyterms = models.JSONField(default=list, blank=True, help_text="The vocabulary terms it sends.")

    class Meta:
        ordering = ["display_name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(mode__in=["batch", "streaming"]), name="transcriber_mode_valid"
            )
        ]

    def __str__(self):
        return self.display_name

    @classproperty
    def PROVIDERS(cls) -> list[tuple[str, str]]:  # noqa: N802 (read as the constant it replaced)
        """(name, label) of every registered provider, by name: the API's provider enum and the admin's choices."""
        return providers.choices()

    @classproperty
    def STREAMING_PROVIDERS(cls) -> set[str]:  # noqa: N802
        """The providers with a streaming engine: a streaming entry of another provider is refused."""
        return set(providers.names(providers.STREAMING))

    def clean(self):
        """A provider that is registered, in a mode it has an engine for."""
        provider = providers.get(self.provider)
        if provider is None:
            raise ValidationError(
                {"provider": f"No provider {self.provider!r}: choose one of {', '.join(providers.names())}."}
            )
        if self.mode in providers.MODES and self.mode not in provider.modes:
            raise ValidationError(
                {
                    "mode": f"{self.provider} has no {self.mode} engine: choose "
                    f"{' or '.join(provider.modes)}, or one of {', '.join(providers.names(self.mode))}."
                }
            )

    def get_provider_display(self) -> str:
        """The provider's label, e.g. Deepgram (its name when no provider has it)."""
        return providers.label(self.provider)

    @property
    def is_streaming(self) -> bool:
        return self.mode == self.STREAMING

    @property
    def vocabulary_label(self) -> str:
        """A vocabulary candidate's vocabulary as the pages name it ("" for a catalogue entry)."""
        if self.base_id is None:
            return ""
        return self.vocabulary.name if self.vocabulary_id else "a deleted vocabulary"

    @property
    def vocabulary_option(self) -> str:
        """The vendor's own option the terms travel in, e.g. "hotwords" or "keyterm prompting (keyterm)"."""
        limits = vocabulary_rules.limits_of(self.provider, self.mode)
        return limits.option if limits else ""

    @property
    def vocabulary_surcharge(self) -> Decimal:
        """What the vocabulary adds to the catalogue entry's price per audio minute (0 for a catalogue entry)."""
        if self.base_id is None:
            return Decimal(0)
        return max(Decimal(0), Decimal(self.price_per_minute) - Decimal(self.base.price_per_minute))

    @classmethod
    def catalogue(cls):
        """The catalogue: the entries an admin adds, not the vocabulary candidates derived from them."""
        return cls.objects.filter(base__isnull=True)


class Vocabulary(models.Model):
    """An organization's list of words its callers say (names, menu items, street names, product codes), for one
    assistant or for all of them. A bank compares a transcriber with it (a vocabulary candidate) and without."""

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="vocabularies"
    )
    assistant = models.ForeignKey(
        "calls.Assistant", on_delete=models.SET_NULL, null=True, blank=True, related_name="vocabularies"
    )
    name = models.CharField(max_length=60)
    terms = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_by_key = models.ForeignKey(
        "accounts.ApiKey", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "name"], name="vocabulary_name_unique_in_org")
        ]

    def __str__(self):
        return self.name


class VocabularyEdit(models.Model):
    """One change of a vocabulary: made, renamed, its terms or assistant changed, or deleted; who made it (a
    person in the dashboard, an organization key in the API, `by_name` as named then) and the terms added and
    removed. Written by the vocabulary actions and nowhere else."""

    CREATED, CHANGED, DELETED = "created", "changed", "deleted"
    KINDS = [(CREATED, "Created"), (CHANGED, "Changed"), (DELETED, "Deleted")]

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    vocabulary = models.ForeignKey(
        Vocabulary, on_delete=models.SET_NULL, null=True, blank=True, related_name="edits"
    )
    vocabulary_name = models.CharField(max_length=60)
    kind = models.CharField(max_length=10, choices=KINDS)
    at = models.DateTimeField(auto_now_add=True)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    by_key = models.ForeignKey(
        "accounts.ApiKey", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    by_name = models.CharField(max_length=150, blank=True)
    added = models.JSONField(default=list, blank=True)
    removed = models.JSONField(default=list, blank=True)
    note = models.CharField(
        max_length=300, blank=True, help_text="Other changes, e.g. a new name or assistant."
    )

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["organization", "-at"], name="vocabulary_edit_newest")]

    def __str__(self):
        return f"{self.kind} {self.vocabulary_name} by {self.by_name or 'someone'}"
