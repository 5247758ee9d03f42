"""Catalogue entries are batch or streaming: the vendors' streaming models and the local streaming engine are
seeded as streaming, every older entry stays batch, and each streaming entry gets its provider's streaming
engine."""

import pytest
from django.db import IntegrityError, transaction

from oncore.transcribers.engines import get_engine
from oncore.transcribers.models import Transcriber

pytestmark = pytest.mark.django_db

STREAMING = {
    "whisper-tiny-en-streaming": ("faster_whisper", "tiny.en", "WhisperStreamingEngine"),
    "deepgram-nova-3-streaming": ("deepgram", "nova-3", "DeepgramLiveEngine"),
    "assemblyai-u3-rt-pro": ("assemblyai", "u3-rt-pro", "AssemblyAIStreamingEngine"),
    "openai-gpt-live-transcribe": ("openai", "gpt-live-transcribe", "OpenAIRealtimeEngine"),
    "elevenlabs-scribe-v2-realtime": ("elevenlabs", "scribe_v2_realtime", "ElevenLabsRealtimeEngine"),
}


def test_it_seeds_a_streaming_entry_for_every_provider_with_a_streaming_engine():
    for slug, (provider, model, engine) in STREAMING.items():
        t = Transcriber.objects.get(slug=slug)
        assert (t.provider, t.model, t.mode, t.is_streaming) == (provider, model, "streaming", True)
        assert type(get_engine(t)).__name__ == engine
        assert getattr(get_engine(t), "streaming", False)
        assert t.price_source and (t.price_date is None) == (t.price_per_minute == 0)


def test_every_other_entry_is_batch_and_keeps_its_batch_engine():
    batch = Transcriber.objects.exclude(slug__in=STREAMING)
    assert batch.exists() and set(batch.values_list("mode", flat=True)) == {"batch"}
    assert not any(getattr(get_engine(t), "streaming", False) for t in batch.filter(enabled=True))


def test_the_database_holds_a_mode_to_batch_or_streaming():
    with pytest.raises(IntegrityError), transaction.atomic():
        Transcriber.objects.create(
            slug="x", provider="deepgram", model="nova-3", display_name="X", mode="live"
        )
