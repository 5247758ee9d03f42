"""Seed the transcriber catalogue: the offline engines and the main vendors, with list prices.

Prices are USD per audio minute, pay-as-you-go list prices for pre-recorded (batch) audio. Looked up in
November 2026 through stored copies of public pages (no live vendor price page could be opened), so check
the vendors' pricing pages before quoting them:
- Deepgram: Nova-3 and Nova-2 pre-recorded $0.0043/min (Deepgram's published pay-as-you-go rate; resellers
  list Nova-3 at $0.0052 with their margin).
- OpenAI: whisper-1 $0.006/min, gpt-4o-transcribe $0.006/min, gpt-4o-mini-transcribe $0.003/min (the
  "estimated cost" column of OpenAI's pricing page, as quoted by guides dated April 2026).
- ElevenLabs: Scribe v1 $0.40 per hour on the Starter tier, less on larger plans (elevenlabs.io/docs,
  speech-to-text capability page) -> $0.00667/min.
- AssemblyAI: Universal-2 $0.15 per hour -> $0.0025/min. AssemblyAI now takes the model in a
  `speech_models` list; "universal-2" is the model id it documents.
Prices change: admins edit them in the catalogue; this migration only creates missing entries.
Keys are never stored: api_key_env names the environment variable that holds each vendor's key.
"""

from decimal import Decimal

from django.db import migrations

CATALOGUE = [
    # slug, provider, model, display name, price per minute, key env var
    ("whisper-tiny-en", "faster_whisper", "tiny.en", "Whisper tiny.en (local)", "0", ""),
    ("whisper-base", "faster_whisper", "base", "Whisper base (local)", "0", ""),
    ("pocketsphinx-en-us", "pocketsphinx", "en-us", "PocketSphinx en-us (local)", "0", ""),
    ("deepgram-nova-3", "deepgram", "nova-3", "Deepgram Nova-3", "0.0043", "DEEPGRAM_API_KEY"),
    ("deepgram-nova-2", "deepgram", "nova-2", "Deepgram Nova-2", "0.0043", "DEEPGRAM_API_KEY"),
    ("openai-whisper-1", "openai", "whisper-1", "OpenAI whisper-1", "0.006", "OPENAI_API_KEY"),
    (
        "openai-gpt-4o-transcribe",
        "openai",
        "gpt-4o-transcribe",
        "OpenAI gpt-4o-transcribe",
        "0.006",
        "OPENAI_API_KEY",
    ),
    (
        "openai-gpt-4o-mini-transcribe",
        "openai",
        "gpt-4o-mini-transcribe",
        "OpenAI gpt-4o-mini-transcribe",
        "0.003",
        "OPENAI_API_KEY",
    ),
    (
        "elevenlabs-scribe-v1",
        "elevenlabs",
        "scribe_v1",
        "ElevenLabs Scribe v1",
        "0.00667",
        "ELEVENLABS_API_KEY",
    ),
    (
        "assemblyai-universal",
        "assemblyai",
        "universal-2",
        "AssemblyAI Universal-2",
        "0.0025",
        "ASSEMBLYAI_API_KEY",
    ),
]


def seed(apps, schema_editor):
    Transcriber = apps.get_model("transcribers", "Transcriber")
    for slug, provider, model, display_name, price, key_env in CATALOGUE:
        Transcriber.objects.get_or_create(
            slug=slug,
            defaults={
                "provider": provider,
                "model": model,
                "display_name": display_name,
                "price_per_minute": Decimal(price),
                "api_key_env": key_env,
                "options": {},
                "enabled": True,
            },
        )


def unseed(apps, schema_editor):
    Transcriber = apps.get_model("transcribers", "Transcriber")
    Transcriber.objects.filter(slug__in=[row[0] for row in CATALOGUE]).delete()


class Migration(migrations.Migration):
    dependencies = [("transcribers", "0001_initial")]

    operations = [migrations.RunPython(seed, unseed)]
