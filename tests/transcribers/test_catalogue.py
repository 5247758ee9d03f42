"""The seeded transcriber catalogue: the offline engines and the main vendors, priced with a source and a date,
keys named not stored, the models the vendors' current SDKs list, retired ones kept but disabled."""

import datetime
from decimal import Decimal

import pytest
from django.urls import reverse

from oncore.transcribers import providers
from oncore.transcribers.models import Transcriber
from transcriber_tests import actions

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
        ("openai-gpt-transcribe", "openai", "gpt-transcribe", "0.0045", "OPENAI_API_KEY"),
        ("elevenlabs-scribe-v2", "elevenlabs", "scribe_v2", "0.00367", "ELEVENLABS_API_KEY"),
        ("assemblyai-universal-3-5-pro", "assemblyai", "universal-3-5-pro", "0.0035", "ASSEMBLYAI_API_KEY"),
    ],
)
def test_it_seeds_the_vendors_with_list_prices_and_key_variables(slug, provider, model, price, key_env):
    t = Transcriber.objects.get(slug=slug)
    assert (t.provider, t.model, t.api_key_env) == (provider, model, key_env)
    assert t.price_per_minute == Decimal(price)
    assert t.options == {}  # no keys, no endpoints stored: the engine's public URL is used


def test_it_has_an_engine_for_every_seeded_provider():
    assert set(Transcriber.objects.values_list("provider", flat=True)) <= set(providers.names())


def test_it_offers_the_current_model_of_each_vendor_sdk():
    current = Transcriber.objects.filter(
        model__in=["gpt-transcribe", "scribe_v2", "universal-3-5-pro", "nova-3"], enabled=True, mode="batch"
    )
    assert sorted(current.values_list("provider", flat=True)) == [
        "assemblyai",
        "deepgram",
        "elevenlabs",
        "openai",
    ]
    assert not current.exclude(deprecation_date=None).exists()


def test_it_shows_the_announced_shutdown_of_deprecated_openai_models_and_keeps_them_usable():
    deprecated = Transcriber.objects.filter(
        model__in=["whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe"]
    )
    assert deprecated.count() == 3
    assert {(t.deprecation_date, t.enabled) for t in deprecated} == {(datetime.date(2027, 2, 26), True)}


def test_it_keeps_a_retired_model_disabled_rather_than_deleted():
    scribe_v1 = Transcriber.objects.get(slug="elevenlabs-scribe-v1")
    assert scribe_v1.enabled is False and scribe_v1.deprecation_date == datetime.date(2026, 7, 9)


def test_it_records_where_and_when_every_price_was_read():
    for t in Transcriber.objects.all():
        assert t.price_source, t.slug
        assert (t.price_date is None) == (t.price_per_minute == 0), t.slug


def test_it_shows_the_shutdown_date_on_candidate_cards(admin_client, bank):
    whisper = Transcriber.objects.get(slug="openai-whisper-1")
    actions.do_add_candidate(bank, whisper, confirmed=True)
    page = admin_client.get(reverse("tt:bank_candidates", args=[bank.pk])).content.decode()
    assert page.count("Deprecated: shuts down 2027-02-26") == 1
    results = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    assert "Deprecated: shuts down 2027-02-26" in results
