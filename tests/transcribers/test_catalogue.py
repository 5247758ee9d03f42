"""The seeded transcriber catalogue: the offline engines and the main vendors, priced, keys named not stored."""

from decimal import Decimal

import pytest

from oncore.transcribers.engines import ENGINES
from oncore.transcribers.models import Transcriber

pytestmark = pytest.mark.django_db


def test_it_seeds_the_offline_engines_free_and_keyless():
    local = {t.slug: t for t in Transcriber.objects.filter(provider__in=["faster_whisper", "pocketsphinx"])}
    assert {"whisper-tiny-en", "whisper-base", "pocketsphinx-en-us"} <= set(local)
    assert (local["whisper-tiny-en"].model, local["whisper-base"].model) == ("tiny.en", "base")
    assert all(t.price_per_minute == 0 and t.api_key_env == "" and t.enabled for t in local.values())


@pytest.mark.parametrize(
    "slug, provider, model, price, key_env",
    [
        ("deepgram-nova-3", "deepgram", "nova-3", "0.0043", "DEEPGRAM_API_KEY"),
        ("deepgram-nova-2", "deepgram", "nova-2", "0.0043", "DEEPGRAM_API_KEY"),
        ("openai-whisper-1", "openai", "whisper-1", "0.006", "OPENAI_API_KEY"),
        ("openai-gpt-4o-transcribe", "openai", "gpt-4o-transcribe", "0.006", "OPENAI_API_KEY"),
        ("openai-gpt-4o-mini-transcribe", "openai", "gpt-4o-mini-transcribe", "0.003", "OPENAI_API_KEY"),
        ("elevenlabs-scribe-v1", "elevenlabs", "scribe_v1", "0.00667", "ELEVENLABS_API_KEY"),
        ("assemblyai-universal", "assemblyai", "universal-2", "0.0025", "ASSEMBLYAI_API_KEY"),
    ],
)
def test_it_seeds_the_vendors_with_list_prices_and_key_variables(slug, provider, model, price, key_env):
    t = Transcriber.objects.get(slug=slug)
    assert (t.provider, t.model, t.api_key_env) == (provider, model, key_env)
    assert t.price_per_minute == Decimal(price)
    assert t.options == {}  # no keys, no endpoints stored: the engine's public URL is used


def test_it_has_an_engine_for_every_seeded_provider():
    assert set(Transcriber.objects.values_list("provider", flat=True)) <= set(ENGINES)
