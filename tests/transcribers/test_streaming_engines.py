"""The vendors' streaming engines against fake vendors on 127.0.0.1 that speak each live protocol over a real
WebSocket (stream_vendors.py): connect, paced frames, partials, the final, error and close paths, and a vendor
that stalls (the attempt has a deadline and fails with a reason). The pacing is sped up (session.SPEED) where a
test is not about pacing, so the suite does not wait in real time."""

import asyncio
import base64
import socket
import time

import numpy as np
import pytest

from oncore.audio import encode_wav
from oncore.transcribers.engines import EngineResult, TranscriptionError, get_engine
from oncore.transcribers.engines.streaming import session

from .stream_servers import TEST_KEY, TRANSCRIPT, stream_entry
from .stream_vendors import (
    STREAM_VENDORS,
    FakeAssemblyAIStreaming,
    FakeDeepgramLive,
    FakeElevenLabsRealtime,
    FakeOpenAIRealtime,
)

GREETING_VENDORS = [FakeAssemblyAIStreaming, FakeOpenAIRealtime, FakeElevenLabsRealtime]


def clip(seconds=0.6, rate=8000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return encode_wav(0.2 * np.sin(2 * np.pi * 440 * t), rate)


@pytest.fixture(autouse=True)
def fast_pacing(monkeypatch):
    monkeypatch.setattr(session, "SPEED", 20.0)


@pytest.fixture(params=STREAM_VENDORS, ids=lambda cls: cls.vendor)
def server(request, monkeypatch):
    with request.param() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        yield fake


def stream(server, wav=None, language=None, speech_end_s=0.5, speech_start_s=None, **options) -> EngineResult:
    return get_engine(stream_entry(server, **options)).transcribe(
        wav or clip(), language=language, speech_end_s=speech_end_s, speech_start_s=speech_start_s
    )


def error_of(server, **options) -> TranscriptionError:
    with pytest.raises(TranscriptionError) as caught:
        stream(server, **options)
    return caught.value


def client_json(record) -> list[dict]:
    return [m for kind, m in record.received if kind == "text"]


def audio_frames(server, record) -> list[bytes]:
    """The frames of audio a fake received: binary messages, or the audio field of JSON ones."""
    return [m for kind, m in record.received if kind == "binary"] + [
        base64.b64decode(m[server.audio_field]) for m in client_json(record) if m.get(server.audio_field)
    ]


# -- the session -------------------------------------------------------------------------------------------


def test_it_streams_the_clip_and_returns_the_final_text_with_the_streams_figures(server):
    result = stream(server)
    assert result.text == TRANSCRIPT
    figures = result.stream
    assert figures.partials >= 3 and figures.revisions == 0
    assert figures.first_partial_s is not None and figures.first_partial_s >= 0
    assert result.latency_s == figures.time_to_final_s
    # the final came after the end of the audio, which is 0.1 s of clip (at 20x: 5 ms) after the end of speech
    assert figures.time_to_final_s >= 0.1 / 20 - 0.002
    assert figures.speech_end_s == 0.5 and result.audio_seconds == pytest.approx(0.6)
    assert figures.frames == len(audio_frames(server, server.sessions[0]))
    assert result.raw["finals"] == [TRANSCRIPT] and TEST_KEY not in str(result.raw)


def test_time_to_first_partial_counts_from_the_callers_start_to_the_first_text_after_it(server):
    # The fake shows one more word per 50 ms of audio it has received, from the first 50 ms.
    from_start = stream(server).stream
    assert from_start.speech_start_s == 0 and from_start.time_to_first_partial_s == from_start.first_partial_s
    later = stream(server, speech_start_s=0.3).stream
    assert later.speech_start_s == 0.3
    # At 20 times real time the caller's start is heard 15 ms after the first frame; the first text after it is
    # the partial of the audio that follows, within a frame or two (the vendor's frame: 20 or 50 ms of audio).
    assert 0 <= later.time_to_first_partial_s <= (0.05 + 0.05) / 20 + 0.05
    # The first text of all (the clip's first 50 ms) came before the caller's start: not the head.
    assert later.first_partial_s < 0.3 / 20


def test_it_streams_from_a_thread_that_already_runs_an_event_loop(server):
    """The browser tests' driver keeps an event loop running in the test thread, as an async caller would: a
    session still runs, in a thread of its own (CI failed every streaming test after the browser walk)."""

    async def inside_a_loop():
        return stream(server)

    try:
        asyncio.get_running_loop()  # the browser walk ran before in this process: its driver's loop runs
        result = stream(server)
    except RuntimeError:
        result = asyncio.run(inside_a_loop())
    assert result.text == TRANSCRIPT


def test_it_sends_every_sample_of_the_clip_in_frames_of_the_vendors_size(server):
    stream(server)
    record = server.sessions[0]
    audio = record.audio
    rate = {"deepgram": 8000, "assemblyai": 8000, "openai": 24000, "elevenlabs": 8000}[server.provider]
    frame_ms = 50 if server.provider == "assemblyai" else 20
    frame_bytes = 2 * rate * frame_ms // 1000
    assert len(audio) == frame_bytes * -(-int(0.6 * rate) // (rate * frame_ms // 1000))  # the last one filled
    assert len(audio) >= 2 * int(0.6 * rate)
    assert {len(frame) for frame in audio_frames(server, record)} == {frame_bytes}


def test_it_ends_the_audio_with_the_vendors_message_and_reads_until_its_final(server):
    stream(server)
    messages = client_json(server.sessions[0])
    ending = {
        "deepgram": [{"type": "Finalize"}, {"type": "CloseStream"}],
        "assemblyai": [{"type": "Terminate"}],
        "openai": [{"type": "input_audio_buffer.commit"}],
        "elevenlabs": [
            {"message_type": "input_audio_chunk", "audio_base_64": "", "commit": True, "sample_rate": 8000}
        ],
    }[server.provider]
    assert messages[-len(ending) :] == ending


def test_it_counts_a_partial_that_changes_a_word_already_shown_as_a_revision(server):
    server.scenario = "revise"
    result = stream(server)
    assert result.text == TRANSCRIPT
    # OpenAI's deltas only ever extend the transcript: no revision is possible there
    assert result.stream.revisions == (0 if server.provider == "openai" else 1)


def test_a_line_without_speech_is_an_empty_text_with_its_time_to_final(server):
    server.scenario = "silence"
    result = stream(server)
    assert result.text == "" and result.stream.partials == 0 and result.stream.first_partial_s is None
    assert result.stream.time_to_final_s is not None


def test_it_paces_the_frames_in_real_time_at_speed_one(server, monkeypatch):
    monkeypatch.setattr(session, "SPEED", 1.0)
    started = time.perf_counter()
    result = stream(server, wav=clip(0.3), speech_end_s=0.25)
    assert time.perf_counter() - started >= 0.3
    assert result.stream.frames == (6 if server.provider == "assemblyai" else 15)
    assert result.stream.time_to_final_s >= 0.05 - 0.01  # the final came after the clip's last 50 ms


# -- refusals and failures ---------------------------------------------------------------------------------


def test_a_refused_key_is_not_retried_and_names_its_variable_without_repeating_it(server):
    server.scenario = "401"
    error = error_of(server)
    assert not error.retryable
    assert server.key_env in error.message and "401" in error.message and TEST_KEY not in error.message


def test_a_forbidden_key_is_not_retried(server):
    server.scenario = "403"
    error = error_of(server)
    assert not error.retryable and "403" in error.message


def test_a_rate_limited_handshake_is_retried_after_the_vendors_wait(server):
    server.scenario = "429"
    error = error_of(server)
    assert error.retryable and error.retry_after == 7 and "429" in error.message


def test_a_server_error_at_the_handshake_is_retried(server):
    server.scenario = "500"
    error = error_of(server)
    assert error.retryable and "500" in error.message


def test_a_vendor_error_about_the_request_is_not_retried_and_says_what_the_vendor_said(server):
    server.scenario = "error"
    error = error_of(server)
    assert not error.retryable
    said = {
        "deepgram": "DATA-0000",
        "assemblyai": "Input validation",
        "openai": "Invalid audio",
        "elevenlabs": "Invalid audio chunk",
    }[server.provider]
    assert said in error.message


def test_a_vendor_server_error_in_the_stream_is_retried(server):
    server.scenario = "server_error"
    error = error_of(server)
    assert error.retryable and server.vendor in error.message


@pytest.mark.parametrize("scenario", ["stall", "stop_reading"])
def test_a_vendor_that_stalls_fails_at_the_deadline_with_a_reason(server, scenario):
    server.scenario = scenario
    started = time.perf_counter()
    error = error_of(server, final_timeout_s=0.5)
    took = time.perf_counter() - started
    assert error.retryable
    assert "no final transcript within 0.5 s of the end of the audio" in error.message
    assert took < 5


@pytest.mark.parametrize("cls", GREETING_VENDORS, ids=lambda cls: cls.vendor)
def test_a_vendor_that_never_starts_the_session_fails_at_the_connect_deadline(cls, monkeypatch):
    with cls(scenario="no_greeting") as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        started = time.perf_counter()
        with pytest.raises(TranscriptionError) as caught:
            get_engine(stream_entry(fake, connect_timeout_s=0.5)).transcribe(clip())
    assert caught.value.retryable and "did not start the session within 0.5 s" in caught.value.message
    assert time.perf_counter() - started < 5


def test_a_message_that_is_not_json_is_not_retried(server):
    server.scenario = "malformed"
    error = error_of(server)
    assert not error.retryable and "not JSON" in error.message


@pytest.mark.parametrize("scenario", ["close_early", "no_final"])
def test_a_session_closed_before_its_final_is_retried(server, scenario):
    server.scenario = scenario
    error = error_of(server)
    assert error.retryable and "closed the session" in error.message and "before" in error.message


def test_the_key_is_removed_from_a_vendor_message_that_echoes_it(server):
    server.scenario = "echo_key"
    error = error_of(server)
    assert TEST_KEY not in error.message and "[key removed]" in error.message


def test_a_vendor_that_cannot_be_reached_is_retried(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fake = FakeDeepgramLive()
    fake.port = port  # nothing listens there
    monkeypatch.setenv(fake.key_env, fake.key)
    with pytest.raises(TranscriptionError) as caught:
        get_engine(stream_entry(fake)).transcribe(clip())
    assert (
        caught.value.retryable and "Could not open a streaming connection to Deepgram" in caught.value.message
    )


def test_a_missing_key_sends_nothing(server, monkeypatch):
    monkeypatch.delenv(server.key_env)
    error = error_of(server)
    assert not error.retryable and f"{server.key_env} is not set" in error.message
    assert server.handshakes == []


def test_a_wav_that_is_not_audio_sends_nothing(server):
    with pytest.raises(TranscriptionError) as caught:
        get_engine(stream_entry(server)).transcribe(b"RIFF not audio")
    assert not caught.value.retryable and server.handshakes == []


# -- each vendor's particulars -----------------------------------------------------------------------------


def test_deepgram_gets_the_model_raw_audio_format_interim_results_and_language_in_the_query(monkeypatch):
    with FakeDeepgramLive() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        stream(fake, language="en-US", params={"endpointing": 300, "keyterm": ["Siobhan", "O'Brien"]})
    (record,) = fake.sessions
    assert record.query == {
        "model": "nova-3",
        "encoding": "linear16",
        "sample_rate": "8000",
        "channels": "1",
        "interim_results": "true",
        "smart_format": "true",
        "endpointing": "300",
        "keyterm": "O'Brien",
        "language": "en-US",
    }
    assert ("keyterm", "Siobhan") in record.query_pairs and record.headers[
        "authorization"
    ] == f"Token {TEST_KEY}"


def test_assemblyai_takes_50_ms_chunks_and_bills_the_sessions_whole_duration(monkeypatch):
    with FakeAssemblyAIStreaming() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        result = stream(fake)
    (record,) = fake.sessions
    assert record.query == {"sample_rate": "8000", "encoding": "pcm_s16le", "speech_model": "u3-rt-pro"}
    assert record.headers["assemblyai-version"] == "2025-05-12"
    billed = max(result.audio_seconds, result.stream.session_s)
    assert float(result.cost) == pytest.approx(billed / 60 * 0.006, abs=1e-6)


def test_assemblyai_refusing_the_key_after_the_handshake_is_not_retried(monkeypatch):
    with FakeAssemblyAIStreaming(scenario="bad_key_close") as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        error = error_of(fake)
    assert not error.retryable and "ASSEMBLYAI_API_KEY" in error.message and "1008" in error.message


def test_openai_configures_a_transcription_session_at_24_khz_before_any_audio(monkeypatch):
    with FakeOpenAIRealtime() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        stream(fake, language="en-GB", prompt="Bistro Verde bookings")
    messages = client_json(fake.sessions[0])
    assert messages[0] == {
        "type": "session.update",
        "session": {
            "type": "transcription",
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": 24000},
                    "transcription": {
                        "model": "gpt-live-transcribe",
                        "language": "en",
                        "prompt": "Bistro Verde bookings",
                    },
                    "turn_detection": None,
                }
            },
        },
    }
    assert fake.sessions[0].query == {"intent": "transcription"}
    assert {m["type"] for m in messages[1:-1]} == {"input_audio_buffer.append"}


@pytest.mark.parametrize("rate, sent", [(8000, "pcm_8000"), (11025, "pcm_16000"), (16000, "pcm_16000")])
def test_elevenlabs_gets_the_clip_at_its_own_rate_or_the_next_rate_it_takes(monkeypatch, rate, sent):
    with FakeElevenLabsRealtime() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        stream(fake, wav=clip(0.3, rate), language="en", speech_end_s=0.2)
    assert fake.sessions[0].query["audio_format"] == sent and fake.sessions[0].query["language_code"] == "en"


def test_a_streaming_entry_of_a_provider_without_a_streaming_engine_is_refused():
    fake = FakeDeepgramLive()
    fake.port = 9
    entry = stream_entry(fake)
    entry.provider, entry.display_name = "generic", "In-house STT"
    with pytest.raises(TranscriptionError) as caught:
        get_engine(entry)
    assert not caught.value.retryable and "has no streaming engine" in caught.value.message
