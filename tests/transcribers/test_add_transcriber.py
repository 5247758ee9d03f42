"""manage.py add_transcriber: a catalogue entry from the command line, its options checked against what the
provider's engine reads, and bad input refused with a message that says what to give instead."""

import json
from datetime import date, timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from oncore.transcribers import providers
from oncore.transcribers.management.commands.add_transcriber import Command
from oncore.transcribers.models import Transcriber

pytestmark = pytest.mark.django_db


def add(*args, **kwargs) -> str:
    out = StringIO()
    call_command("add_transcriber", *args, stdout=out, **kwargs)
    return out.getvalue()


def test_it_lists_every_providers_options_and_the_generic_protocol_in_its_help():
    text = Command().create_parser("manage.py", "add_transcriber").format_help()
    for provider in providers.all_providers():
        for mode, engine in provider.modes.items():
            assert f"{provider.name}: " in text and f", {mode}\n" in text
            for option in engine.options:
                assert f"  {option.name} (" in text, (provider.name, mode, option.name)
    assert "options.url" in text and '{"text": "..."}' in text and "Content-Type: audio/wav" in text
    assert "--price-source" in text and "--no-enabled" in text


def test_it_adds_a_priced_vendor_entry_with_its_source_date_and_key_variable():
    out = add(
        "deepgram",
        "nova-3",
        "--slug",
        "t-nova",
        "--price-per-minute",
        "0.0043",
        "--price-source",
        "https://deepgram.com/pricing",
        "--price-date",
        "2026-11-20",
        "--api-key-env",
        "DEEPGRAM_API_KEY",
        "--options",
        '{"params": {"numerals": false}, "timeout_s": 60}',
    )
    t = Transcriber.objects.get(slug="t-nova")
    assert (t.provider, t.model, t.mode, t.enabled) == ("deepgram", "nova-3", "batch", True)
    assert t.price_per_minute == Decimal("0.0043") and t.price_date == date(2026, 11, 20)
    assert t.price_source == "https://deepgram.com/pricing" and t.api_key_env == "DEEPGRAM_API_KEY"
    assert t.options == {"params": {"numerals": False}, "timeout_s": 60}
    assert "Added 'Deepgram nova-3' (t-nova" in out and "DEEPGRAM_API_KEY" in out


def test_it_adds_a_generic_endpoint_switched_off_and_a_local_streaming_one():
    add(
        "generic",
        "in-house-v2",
        "--slug",
        "t-gen",
        "--options",
        '{"url": "http://asr.internal:9000/x"}',
        "--disabled",
    )
    generic = Transcriber.objects.get(slug="t-gen")
    assert generic.enabled is False and generic.options == {"url": "http://asr.internal:9000/x"}
    assert generic.api_key_env == "" and generic.price_per_minute == 0
    add("faster_whisper", "tiny.en", "--mode", "streaming", "--options", '{"min_chunk_s": 0.5}')
    local = Transcriber.objects.get(slug="faster-whisper-tiny-en-streaming")
    assert local.mode == "streaming" and local.display_name == "faster-whisper tiny.en (streaming)"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["whisper", "base"], "No provider 'whisper': choose one of assemblyai, deepgram"),
        (["generic", "x", "--options", "{}"], "generic needs the option 'url'"),
        (["generic", "x", "--options", '{"url": "ftp://h/x"}'], "must be a http or https URL"),
        (["generic", "x", "--options", '{"url": "http://h/x", "endpoint": 1}'], "has no option 'endpoint'"),
        (["generic", "x", "--options", '{"url": "http://h/x"'], "--options is not JSON"),
        (["generic", "x", "--options", '["url"]'], "--options must be a JSON object"),
        (["faster_whisper", "base", "--options", '{"beam_size": "5"}'], "'beam_size' must be a whole number"),
        (["faster_whisper", "base", "--options", '{"vad_filter": 1}'], "'vad_filter' must be true or false"),
        (
            [
                "deepgram",
                "nova-3",
                "--mode",
                "streaming",
                "--api-key-env",
                "K",
                "--options",
                '{"base_url": "https://x"}',
            ],
            "must be a ws or wss URL",
        ),
        (["pocketsphinx", "en-us", "--mode", "streaming"], "pocketsphinx has no streaming engine"),
        (["pocketsphinx", "fr-fr"], "only its en-us model"),
        (["deepgram", "nova-3"], "deepgram needs a key: name its environment variable with --api-key-env"),
        (["deepgram", "nova-3", "--api-key-env", "sk-live-abc123"], "never give the key itself"),
        (["faster_whisper", "base", "--api-key-env", "KEY"], "runs here and sends no key"),
        (
            ["openai", "whisper-1", "--api-key-env", "K", "--price-per-minute", "0.006"],
            "A price needs its source",
        ),
        (["openai", "whisper-1", "--api-key-env", "K", "--price-per-minute", "cheap"], "is not a number"),
        (["openai", "whisper-1", "--api-key-env", "K", "--price-per-minute", "-1"], "must be 0 or more"),
        (
            ["openai", "whisper-1", "--api-key-env", "K", "--price-per-minute", "0.0000001"],
            "more than 5 decimals",
        ),
        (
            ["openai", "whisper-1", "--api-key-env", "K", "--price-date", "20 Nov 2026"],
            "is not a day: write YYYY-MM-DD",
        ),
        (["faster_whisper", " "], "The model must not be empty"),
    ],
)
def test_it_refuses_bad_input_with_a_message_that_says_what_to_give(args, says):
    before = Transcriber.objects.count()
    with pytest.raises(CommandError) as caught:
        add(*args)
    assert says in str(caught.value)
    assert Transcriber.objects.count() == before


def test_it_refuses_a_price_date_in_the_future_and_a_slug_already_in_the_catalogue():
    later = (date.today() + timedelta(days=3)).isoformat()
    with pytest.raises(CommandError, match="is in the future"):
        add(
            "openai",
            "m",
            "--api-key-env",
            "K",
            "--price-per-minute",
            "0.1",
            "--price-source",
            "q",
            "--price-date",
            later,
        )
    taken = Transcriber.objects.first().slug  # the catalogue the migrations seed
    with pytest.raises(CommandError, match=f"already has '{taken}'"):
        add("faster_whisper", "base", "--slug", taken)


def test_it_lists_every_problem_at_once():
    with pytest.raises(CommandError) as caught:
        add("deepgram", "nova-3", "--price-per-minute", "0.01", "--options", json.dumps({"nope": 1}))
    message = str(caught.value)
    assert message.startswith("Nothing was added:")
    assert (
        "needs a key" in message and "A price needs its source" in message and "no option 'nope'" in message
    )
