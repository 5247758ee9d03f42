"""A catalogue entry is batch or streaming (Transcriber.mode), and the catalogue gains the vendors' streaming
models and a local streaming engine (December 2026).

A streaming replay sends a line's clip as a live call would (16-bit PCM frames paced in real time over the
vendor's live WebSocket API) and measures the time from the end of the caller's speech to the final text; see
docs/streaming.md. Every entry that exists is batch, as every replay so far was.

Streaming models, read from the vendors' current SDKs (deepgram-sdk 7.17, assemblyai 1.8, openai 3.57,
elevenlabs 2.78) and the public pages named in each price_source:
- Deepgram: Nova-3 over the live API (/v1/listen as a WebSocket); streaming is priced above pre-recorded.
- AssemblyAI: Universal-3 Pro Streaming (speech_model u3-rt-pro), the SDK's and the docs' recommended realtime
  model. AssemblyAI bills a streaming session by how long it stays open, not by the audio sent.
- OpenAI: gpt-live-transcribe in a realtime transcription session (the realtime guide's recommended model).
- ElevenLabs: Scribe v2 Realtime (scribe_v2_realtime), the SDK's realtime model.
- Local: Whisper tiny.en over a growing buffer with the local-agreement policy (whisper_streaming's), free.
Admins change prices in the catalogue; this migration only creates missing entries.
"""

import datetime
from decimal import Decimal

from django.db import migrations, models
from django.db.models import Q

TODAY = datetime.date(2026, 12, 1)
STREAMING = [
    # slug, provider, model, display name, price per minute, key env var, source, date
    (
        "whisper-tiny-en-streaming",
        "faster_whisper",
        "tiny.en",
        "Whisper tiny.en streaming (local)",
        "0",
        "",
        "Runs on this server: no charge",
        None,
    ),
    (
        "deepgram-nova-3-streaming",
        "deepgram",
        "nova-3",
        "Deepgram Nova-3 (streaming)",
        "0.0048",
        "DEEPGRAM_API_KEY",
        "Deepgram pay-as-you-go streaming rate for Nova-3 (monolingual), deepgram.com/pricing as recorded in "
        "hail-hq/hail costs/stt.json, verified 2026-05-05",
        datetime.date(2026, 5, 5),
    ),
    (
        "assemblyai-u3-rt-pro",
        "assemblyai",
        "u3-rt-pro",
        "AssemblyAI Universal-3 Pro Streaming",
        "0.0075",
        "ASSEMBLYAI_API_KEY",
        "assemblyai.com/pricing as transcribed 2026-10-07: Universal-3 Pro realtime $0.45 per hour of open "
        "session",
        datetime.date(2026, 10, 7),
    ),
    (
        "openai-gpt-live-transcribe",
        "openai",
        "gpt-live-transcribe",
        "OpenAI gpt-live-transcribe (realtime)",
        "0.017",
        "OPENAI_API_KEY",
        "developers.openai.com/api/docs/models/gpt-live-transcribe: realtime audio duration $0.017 per minute",
        TODAY,
    ),
    (
        "elevenlabs-scribe-v2-realtime",
        "elevenlabs",
        "scribe_v2_realtime",
        "ElevenLabs Scribe v2 Realtime",
        "0.006",
        "ELEVENLABS_API_KEY",
        "getmaxim.ai Bifrost model library, scribe_v2_realtime: $0.0001 per second of audio (a gateway's list, "
        "undated: check elevenlabs.io/pricing)",
        TODAY,
    ),
]


def seed(apps, schema_editor):
    Transcriber = apps.get_model("transcribers", "Transcriber")
    for slug, provider, model, display_name, price, key_env, source, date in STREAMING:
        Transcriber.objects.get_or_create(
            slug=slug,
            defaults={
                "provider": provider,
                "model": model,
                "mode": "streaming",
                "display_name": display_name,
                "price_per_minute": Decimal(price),
                "price_source": source,
                "price_date": date,
                "api_key_env": key_env,
                "options": {},
                "enabled": True,
            },
        )


def unseed(apps, schema_editor):
    Transcriber = apps.get_model("transcribers", "Transcriber")
    Transcriber.objects.filter(slug__in=[row[0] for row in STREAMING]).delete()


class Migration(migrations.Migration):
    dependencies = [("transcribers", "0004_catalogue_2026_11")]

    operations = [
        migrations.AddField(
            model_name="transcriber",
            name="mode",
            field=models.CharField(
                choices=[
                    ("batch", "Batch: the whole clip in one request"),
                    ("streaming", "Streaming: the clip as a live call"),
                ],
                default="batch",
                help_text="How a replay sends a line: batch (the clip in one request) or streaming (20 ms frames "
                "paced in real time over the vendor's live API, measuring the time to final text after the caller "
                "stops).",
                max_length=10,
            ),
        ),
        migrations.AddConstraint(
            model_name="transcriber",
            constraint=models.CheckConstraint(
                condition=Q(mode__in=["batch", "streaming"]), name="transcriber_mode_valid"
            ),
        ),
        migrations.RunPython(seed, unseed),
    ]
