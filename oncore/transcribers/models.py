from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.functional import classproperty

from . import providers


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
