from decimal import Decimal

from django.db import models
from django.db.models import Q


class Transcriber(models.Model):
    """A catalogue entry: a speech-to-text system a bank can compare or a call can run on.

    Keys never live here: `api_key_env` names the environment variable that holds the key."""

    FASTER_WHISPER = "faster_whisper"
    POCKETSPHINX = "pocketsphinx"
    DEEPGRAM = "deepgram"
    OPENAI = "openai"
    ELEVENLABS = "elevenlabs"
    ASSEMBLYAI = "assemblyai"
    GENERIC = "generic"
    BATCH = "batch"
    STREAMING = "streaming"
    MODES = [
        (BATCH, "Batch: the whole clip in one request"),
        (STREAMING, "Streaming: the clip as a live call"),
    ]
    # Providers with a streaming engine (engines/streaming/): a streaming entry of another provider is refused.
    STREAMING_PROVIDERS = {FASTER_WHISPER, DEEPGRAM, OPENAI, ELEVENLABS, ASSEMBLYAI}
    PROVIDERS = [
        (FASTER_WHISPER, "faster-whisper (local)"),
        (POCKETSPHINX, "PocketSphinx (local)"),
        (DEEPGRAM, "Deepgram"),
        (OPENAI, "OpenAI"),
        (ELEVENLABS, "ElevenLabs"),
        (ASSEMBLYAI, "AssemblyAI"),
        (GENERIC, "Generic HTTP endpoint"),
    ]

    slug = models.SlugField(max_length=100, unique=True)
    provider = models.CharField(max_length=32, choices=PROVIDERS)
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

    @property
    def is_streaming(self) -> bool:
        return self.mode == self.STREAMING
