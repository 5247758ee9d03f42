"""The catalogue as of November 2026: the models the vendors' current Python SDKs list, every price with its source
and date, and the vendors' announced shutdown dates. Retired models stay (past scores name them), disabled.

Read from the SDKs (openai 3.57, deepgram-sdk 7.17, assemblyai 1.8, elevenlabs 2.78) and the public pages named in
each price_source:
- OpenAI: gpt-transcribe is the current transcription model; whisper-1, gpt-4o-transcribe and
  gpt-4o-mini-transcribe are marked deprecated with an announced shutdown date of 2027-02-26. They keep working
  until then, so they stay enabled and show the date.
- ElevenLabs: the SDK names scribe_v2 (and newer) and never scribe_v1, which ElevenLabs deprecated in June 2026
  and removed on 2026-07-09: scribe_v1 is disabled, scribe_v2 added.
- AssemblyAI: Universal-3.5 Pro is the recommended pre-recorded model (the SDK names universal-3-5-pro);
  Universal-2 stays.
- Deepgram: nova-3 is current; nova-2 is still listed by the SDK.
An entry an admin has since edited keeps its price; only prices still at their seeded value get a source.
Admins change prices in the catalogue.
"""

import datetime
from decimal import Decimal

from django.db import migrations

RETIRED = {
    # slug: (shutdown date, still callable until then)
    "openai-whisper-1": (datetime.date(2027, 2, 26), True),
    "openai-gpt-4o-transcribe": (datetime.date(2027, 2, 26), True),
    "openai-gpt-4o-mini-transcribe": (datetime.date(2027, 2, 26), True),
    "elevenlabs-scribe-v1": (datetime.date(2026, 7, 9), False),
}

OPENAI_GUIDES = (
    "OpenAI pricing page, 'estimated cost' column, as quoted by guides dated April 2026",
    datetime.date(2026, 4, 1),
)
DEEPGRAM_PAGE = (
    "Deepgram pay-as-you-go pre-recorded rate (deepgram.com/pricing); resellers list Nova-3 at $0.0052 with "
    "their margin",
    datetime.date(2026, 11, 30),
)
ASSEMBLYAI_PAGE = "assemblyai.com/pricing as transcribed 2026-10-07"
LOCAL = ("Runs on this server: no charge", None)

# slug: (seeded price, source, date) for entries that already exist
SOURCES = {
    "whisper-tiny-en": ("0", *LOCAL),
    "whisper-base": ("0", *LOCAL),
    "pocketsphinx-en-us": ("0", *LOCAL),
    "deepgram-nova-3": ("0.0043", *DEEPGRAM_PAGE),
    "deepgram-nova-2": ("0.0043", *DEEPGRAM_PAGE),
    "openai-whisper-1": ("0.006", *OPENAI_GUIDES),
    "openai-gpt-4o-transcribe": ("0.006", *OPENAI_GUIDES),
    "openai-gpt-4o-mini-transcribe": ("0.003", *OPENAI_GUIDES),
    "elevenlabs-scribe-v1": (
        "0.00667",
        "elevenlabs.io/docs speech-to-text page: Starter tier $0.40 per hour",
        datetime.date(2025, 3, 1),
    ),
    "assemblyai-universal": (
        "0.0025",
        f"{ASSEMBLYAI_PAGE}: Universal-2 pre-recorded $0.15 per hour",
        datetime.date(2026, 10, 7),
    ),
}

NEW = [
    # slug, provider, model, display name, price per minute, key env var, source, date
    (
        "openai-gpt-transcribe",
        "openai",
        "gpt-transcribe",
        "OpenAI gpt-transcribe",
        "0.0045",
        "OPENAI_API_KEY",
        "developers.openai.com/api/docs/models/gpt-transcribe: $0.0045 per audio minute",
        datetime.date(2026, 11, 30),
    ),
    (
        "elevenlabs-scribe-v2",
        "elevenlabs",
        "scribe_v2",
        "ElevenLabs Scribe v2",
        "0.00367",
        "ELEVENLABS_API_KEY",
        "Scribe v2 model profile (opentranscription.io, 2026-07-03): $0.22 per hour batch",
        datetime.date(2026, 7, 3),
    ),
    (
        "assemblyai-universal-3-5-pro",
        "assemblyai",
        "universal-3-5-pro",
        "AssemblyAI Universal-3.5 Pro",
        "0.0035",
        "ASSEMBLYAI_API_KEY",
        f"{ASSEMBLYAI_PAGE}: Universal-3.5 Pro pre-recorded $0.21 per hour",
        datetime.date(2026, 10, 7),
    ),
]


def update(apps, schema_editor):
    Transcriber = apps.get_model("transcribers", "Transcriber")
    for slug, (price, source, date) in SOURCES.items():
        Transcriber.objects.filter(slug=slug, price_per_minute=Decimal(price), price_source="").update(
            price_source=source, price_date=date
        )
    for slug, (shutdown, callable_until_then) in RETIRED.items():
        Transcriber.objects.filter(slug=slug).update(deprecation_date=shutdown)
        if not callable_until_then:
            Transcriber.objects.filter(slug=slug).update(enabled=False)
    for slug, provider, model, display_name, price, key_env, source, date in NEW:
        Transcriber.objects.get_or_create(
            slug=slug,
            defaults={
                "provider": provider,
                "model": model,
                "display_name": display_name,
                "price_per_minute": Decimal(price),
                "price_source": source,
                "price_date": date,
                "api_key_env": key_env,
                "options": {},
                "enabled": True,
            },
        )


def revert(apps, schema_editor):
    Transcriber = apps.get_model("transcribers", "Transcriber")
    Transcriber.objects.filter(slug__in=[row[0] for row in NEW]).delete()
    Transcriber.objects.filter(slug__in=RETIRED).update(deprecation_date=None)
    Transcriber.objects.filter(slug="elevenlabs-scribe-v1").update(enabled=True)


class Migration(migrations.Migration):
    dependencies = [("transcribers", "0003_price_source_and_deprecation")]

    operations = [migrations.RunPython(update, revert)]
