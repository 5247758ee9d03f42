"""Vendor engines against fake vendor servers on 127.0.0.1 that speak each vendor's documented shapes."""

from decimal import Decimal
from types import SimpleNamespace

import numpy as np
import pytest

from oncore.audio import encode_wav
from oncore.transcribers.engines import EngineResult, TranscriptionError, get_engine

from .vendor_servers import (
    TEST_KEY,
    FakeAssemblyAI,
    FakeDeepgram,
    FakeElevenLabs,
    FakeGeneric,
    FakeOpenAI,
    catalogue_entry,
)

VENDORS = [FakeDeepgram, FakeOpenAI, FakeElevenLabs, FakeAssemblyAI, FakeGeneric]
FAST = {"poll_interval_s": 0.01}  # AssemblyAI polls; the others ignore it


def clip(seconds=1.5, rate=8000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return encode_wav(0.2 * np.sin(2 * np.pi * 440 * t), rate)


def entry_for(server, **options):
    extra = dict(FAST) if server.provider == "assemblyai" else {}
    if server.provider == "generic":
        extra["json_path"] = "result.transcript"
    return catalogue_entry(server, **{**extra, **options})


@pytest.fixture(params=VENDORS, ids=lambda cls: cls.vendor)
def server(request, monkeypatch):
    with request.param() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        yield fake


def transcribe(server, language=None, wav=None, **options):
    return get_engine(entry_for(server, **options)).transcribe(wav or clip(), language=language)


def error_of(server, **options) -> TranscriptionError:
    with pytest.raises(TranscriptionError) as caught:
        transcribe(server, **options)
    return caught.value


# -- happy paths ------------------------------------------------------------------------------------------


def test_it_returns_the_vendors_transcript_with_duration_cost_and_latency(server):
    result = transcribe(server)
    assert isinstance(result, EngineResult)
    assert result.text == "I'd like a table for two at seven, please."
    assert result.audio_seconds == pytest.approx(1.5)
    # 1.5 s at $0.006/min = $0.00015
    assert result.cost == Decimal("0.000150")
    assert result.latency_s > 0
    assert isinstance(result.raw, dict) and result.raw


def test_it_sends_the_deepgram_model_smart_format_and_language_as_query_parameters(monkeypatch):
    with FakeDeepgram() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        result = get_engine(catalogue_entry(fake, model="nova-2")).transcribe(clip(), language="en-US")
    (request,) = fake.requests
    assert request.query == {"model": "nova-2", "smart_format": "true", "language": "en-US"}
    assert request.headers["authorization"] == f"Token {TEST_KEY}"
    assert request.body.startswith(b"RIFF")
    assert result.raw["results"]["channels"][0]["alternatives"][0]["transcript"] == result.text


def test_it_encodes_deepgram_params_as_the_sdk_does_and_sends_the_audio_as_octet_stream(monkeypatch):
    params = {"punctuate": True, "numerals": False, "keyterm": ["Siobhan", "O'Brien"], "tag": None}
    with FakeDeepgram() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        get_engine(catalogue_entry(fake, params=params)).transcribe(clip())
    (request,) = fake.requests
    assert request.query_pairs == [
        ("model", "nova-3"),
        ("smart_format", "true"),
        ("punctuate", "true"),
        ("numerals", "false"),
        ("keyterm", "Siobhan"),
        ("keyterm", "O'Brien"),
    ]
    assert request.headers["content-type"] == "application/octet-stream"


def test_it_lets_deepgram_params_turn_smart_format_off(monkeypatch):
    with FakeDeepgram() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        get_engine(catalogue_entry(fake, params={"smart_format": False})).transcribe(clip())
    assert fake.requests[0].query["smart_format"] == "false"


@pytest.mark.parametrize("suffix", ["", "/v1", "/v1/"])
def test_it_takes_an_openai_base_url_with_or_without_v1(monkeypatch, suffix):
    with FakeOpenAI() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        result = get_engine(catalogue_entry(fake, base_url=fake.base_url + suffix)).transcribe(clip())
    assert [r.path for r in fake.requests] == ["/v1/audio/transcriptions"]
    assert result.text.startswith("I'd like")


def test_it_sends_openai_a_multipart_file_with_model_and_a_two_letter_language(monkeypatch):
    with FakeOpenAI() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        get_engine(catalogue_entry(fake, model="whisper-1")).transcribe(clip(), language="en-US")
    (request,) = fake.requests
    assert request.form == {"model": "whisper-1", "response_format": "json", "language": "en"}
    assert request.files["file"][1] == "audio/wav"
    assert request.headers["authorization"] == f"Bearer {TEST_KEY}"


def test_it_sends_elevenlabs_the_model_id_language_code_and_no_audio_event_tags(monkeypatch):
    with FakeElevenLabs() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        get_engine(catalogue_entry(fake)).transcribe(clip(), language="es")
    (request,) = fake.requests
    assert request.form == {"model_id": "scribe_v2", "language_code": "es", "tag_audio_events": "false"}
    assert request.headers["xi-api-key"] == TEST_KEY
    assert "authorization" not in request.headers


def test_it_uploads_submits_and_polls_assemblyai_until_the_transcript_is_completed(monkeypatch):
    with FakeAssemblyAI(processing_polls=2) as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        result = get_engine(catalogue_entry(fake, **FAST)).transcribe(clip(), language="en-US")
    steps = [(r.method, r.path.rsplit("/", 1)[0] if r.method == "GET" else r.path) for r in fake.requests]
    assert steps == [("POST", "/v2/upload"), ("POST", "/v2/transcript")] + [("GET", "/v2/transcript")] * 3
    submit = fake.requests[1].json
    assert submit["speech_models"] == ["universal-2"] and submit["language_code"] == "en_us"
    assert submit["audio_url"] in fake.uploads
    assert all(r.headers["authorization"] == TEST_KEY for r in fake.requests)
    assert result.raw["status"] == "completed" and result.text.startswith("I'd like")


def test_it_counts_a_completed_assemblyai_job_without_text_as_no_text(monkeypatch):
    with FakeAssemblyAI() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        fake.scenario = "null_text"
        result = get_engine(catalogue_entry(fake, **FAST)).transcribe(clip())
    assert result.text == "" and result.raw["status"] == "completed" and result.raw["text"] is None


@pytest.mark.parametrize(
    "language, code",
    [
        ("en-GB", "en_uk"),
        ("en_gb", "en_uk"),
        ("en-US", "en_us"),
        ("en-AU", "en_au"),
        ("fr-CA", "fr"),
        ("es", "es"),
    ],
)
def test_it_sends_assemblyai_language_codes_from_the_sdks_list(monkeypatch, language, code):
    with FakeAssemblyAI() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        get_engine(catalogue_entry(fake, **FAST)).transcribe(clip(), language=language)
    assert fake.requests[1].json["language_code"] == code


def test_it_polls_assemblyai_every_3_s_then_backs_off_up_to_its_limit(monkeypatch):
    waits = []
    monkeypatch.setattr("oncore.transcribers.engines.assemblyai.time.sleep", waits.append)
    with FakeAssemblyAI(processing_polls=6) as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        get_engine(catalogue_entry(fake, poll_max_interval_s=8)).transcribe(clip())
    assert waits == [3.0, 4.5, 6.75, 8.0, 8.0, 8.0, 8.0]


def test_it_sends_a_generic_endpoint_raw_audio_with_a_bearer_key(monkeypatch):
    with FakeGeneric() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        entry = catalogue_entry(fake, json_path="result.transcript", language_param="lang")
        result = get_engine(entry).transcribe(clip(), language="fr")
    (request,) = fake.requests
    assert request.headers["content-type"] == "audio/wav" and request.query == {"lang": "fr"}
    assert result.text.startswith("I'd like")


def test_it_sends_a_generic_endpoint_multipart_with_a_named_key_header(monkeypatch):
    with FakeGeneric(auth_header="X-Api-Key", auth_prefix="", field_name="audio") as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        entry = catalogue_entry(
            fake, auth="X-Api-Key", field="audio", json_path="result.transcript", form={"model": "callcenter"}
        )
        result = get_engine(entry).transcribe(clip())
    (request,) = fake.requests
    assert request.headers["x-api-key"] == TEST_KEY
    assert request.form == {"model": "callcenter"} and request.files["audio"][2].startswith(b"RIFF")
    assert result.text.startswith("I'd like")


def test_it_says_how_to_fix_a_generic_entry_without_a_url():
    entry = SimpleNamespace(
        provider="generic",
        model="",
        options={},
        api_key_env="",
        display_name="In-house STT",
        price_per_minute=Decimal(0),
    )
    with pytest.raises(TranscriptionError, match="set options.url") as caught:
        get_engine(entry).transcribe(clip())
    assert caught.value.retryable is False


# -- errors -----------------------------------------------------------------------------------------------


def test_it_refuses_without_retry_when_the_key_variable_is_not_set(server, monkeypatch):
    monkeypatch.delenv(server.key_env)
    error = error_of(server)
    assert error.retryable is False
    assert f"{server.key_env} is not set on this server: set it to your" in str(error)
    assert server.requests == []


def test_it_reports_a_rejected_key_as_not_retryable_and_names_its_variable(server, monkeypatch):
    monkeypatch.setenv(server.key_env, "sk-wrong-key-123456")
    error = error_of(server)
    assert error.retryable is False
    assert f"rejected the key in {server.key_env} (401)" in str(error) and "check the key" in str(error)
    assert "sk-wrong-key-123456" not in str(error)  # the fake echoes the key it was given


def test_it_reports_a_forbidden_key_as_not_retryable(server):
    server.scenario = "403"
    error = error_of(server)
    assert error.retryable is False and "(403)" in str(error) and server.key_env in str(error)


def test_it_retries_a_rate_limit_after_the_vendors_retry_after(server):
    server.scenario = "429"
    error = error_of(server)
    assert error.retryable is True and error.retry_after == 7.0
    assert "rate limiting" in str(error) and "retry after 7 s" in str(error)


def test_it_prefers_retry_after_ms_to_retry_after(server):
    server.scenario = "429"
    server.retry_after_ms = "250"
    assert error_of(server).retry_after == 0.25


@pytest.mark.parametrize("status", ["408", "409"])
def test_it_retries_what_the_vendor_sdks_retry(server, status):
    server.scenario = status
    error = error_of(server)
    assert error.retryable is True and f"({status})" in str(error)


def test_it_reads_a_retry_after_given_as_an_http_date(server):
    server.scenario = "429"
    server.retry_after = "Wed, 21 Oct 2015 07:28:00 GMT"  # in the past: retry now
    assert error_of(server).retry_after == 0.0


@pytest.mark.parametrize("status", ["500", "503"])
def test_it_retries_server_errors(server, status):
    server.scenario = status
    error = error_of(server)
    assert error.retryable is True and f"({status})" in str(error)


def test_it_retries_when_the_vendor_is_too_slow(server):
    server.scenario = "slow"
    server.slow_s = 1.5
    error = error_of(server, timeout_s=0.2)
    assert error.retryable is True and "did not answer within 0.2 s" in str(error)


def test_it_retries_when_the_vendor_cannot_be_reached(server):
    entry = entry_for(server)
    server.stop()  # nothing listens on that port any more
    with pytest.raises(TranscriptionError) as caught:
        get_engine(entry).transcribe(clip())
    assert caught.value.retryable is True and "Could not reach" in str(caught.value)


def test_it_passes_on_the_vendors_message_for_a_bad_request_without_retry(server):
    server.scenario = "400"
    error = error_of(server)
    assert error.retryable is False
    assert "(400)" in str(error) and "Audio file is corrupt or in an unsupported format." in str(error)


def test_it_passes_on_elevenlabs_validation_errors():
    with FakeElevenLabs() as fake:
        fake.scenario = "422"
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(fake.key_env, fake.key)
            with pytest.raises(TranscriptionError) as caught:
                get_engine(catalogue_entry(fake)).transcribe(clip())
    assert (
        caught.value.retryable is False
        and "(422)" in str(caught.value)
        and "Field required" in str(caught.value)
    )


def test_it_does_not_retry_a_body_that_is_not_json(server):
    server.scenario = "malformed"
    error = error_of(server)
    assert error.retryable is False
    assert "not JSON" in str(error) and '{"results"' in str(error)


def test_it_does_not_retry_a_response_without_a_transcript_and_says_where_it_looked(server):
    server.scenario = "no_transcript"
    error = error_of(server)
    path = {"deepgram": "results.channels.0.alternatives.0.transcript", "generic": "result.transcript"}
    assert error.retryable is False
    assert f"without a transcript at {path.get(server.provider, 'text')}" in str(error)


def test_it_does_not_retry_an_assemblyai_job_that_failed(monkeypatch):
    with FakeAssemblyAI() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        fake.scenario = "job_error"
        with pytest.raises(TranscriptionError) as caught:
            get_engine(catalogue_entry(fake, **FAST)).transcribe(clip())
    assert caught.value.retryable is False and "does not appear to contain audio" in str(caught.value)


def test_it_gives_up_on_an_assemblyai_job_that_never_finishes_and_retries_later(monkeypatch):
    with FakeAssemblyAI() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        fake.scenario = "never_done"
        with pytest.raises(TranscriptionError) as caught:
            get_engine(catalogue_entry(fake, poll_interval_s=0.02, poll_timeout_s=0.2)).transcribe(clip())
    assert caught.value.retryable is True and "did not finish" in str(caught.value)
    assert 3 <= len(fake.requests) <= 14


def test_it_refuses_audio_that_is_not_a_wav_before_calling_the_vendor(server):
    with pytest.raises(TranscriptionError) as caught:
        get_engine(entry_for(server)).transcribe(b"not audio at all")
    assert caught.value.retryable is False and server.requests == []


def test_it_names_the_choices_for_an_unknown_provider():
    entry = SimpleNamespace(
        provider="whisperx",
        model="",
        options={},
        api_key_env="",
        display_name="X",
        price_per_minute=Decimal(0),
    )
    with pytest.raises(TranscriptionError, match="choose one of") as caught:
        get_engine(entry)
    assert caught.value.retryable is False


# -- the key never leaks ----------------------------------------------------------------------------------


def test_it_keeps_the_key_out_of_raw_even_when_the_vendor_echoes_it(server):
    server.scenario = "echo_key"
    result = transcribe(server)
    assert TEST_KEY not in repr(result.raw) and TEST_KEY not in repr(result)


@pytest.mark.parametrize(
    "scenario", ["401", "403", "429", "500", "400", "malformed", "no_transcript", "slow"]
)
def test_it_keeps_the_key_out_of_every_error_message(server, scenario):
    server.scenario = scenario
    server.slow_s = 1.0
    error = error_of(server, timeout_s=0.3)
    assert TEST_KEY not in str(error) and TEST_KEY not in repr(error.args)
