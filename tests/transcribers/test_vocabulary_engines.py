"""A vocabulary candidate's terms on the wire: each engine sends them in its vendor's own option, encoded as the
vendor's official SDK encodes them (the SDK files named beside each assertion), batch and streaming, against the
fake vendors on 127.0.0.1; and a list over a vendor's limit is refused before anything is sent, naming the limit."""

import json
import os
import shutil
import subprocess
from decimal import Decimal
from types import SimpleNamespace

import numpy as np
import pytest

from oncore.audio import encode_wav
from oncore.transcribers import vocabulary
from oncore.transcribers.engines import TranscriptionError, get_engine
from oncore.transcribers.engines import faster_whisper as fw
from oncore.transcribers.engines.streaming import session

from .stream_servers import stream_entry
from .stream_vendors import (
    FakeAssemblyAIStreaming,
    FakeDeepgramLive,
    FakeElevenLabsRealtime,
    FakeOpenAIRealtime,
)
from .vendor_servers import FakeAssemblyAI, FakeDeepgram, FakeElevenLabs, FakeOpenAI, catalogue_entry

TERMS = ["Siobhan", "O'Brien", "Bistro Verde"]


def wav(seconds=0.4, rate=8000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return encode_wav(0.2 * np.sin(2 * np.pi * 440 * t), rate)


@pytest.fixture(autouse=True)
def fast_pacing(monkeypatch):
    monkeypatch.setattr(session, "SPEED", 20.0)


def batch(fake, monkeypatch, terms=TERMS, **kwargs):
    monkeypatch.setenv(fake.key_env, fake.key)
    entry = catalogue_entry(fake, **kwargs)
    entry.keyterms = terms
    entry.mode = "batch"
    return get_engine(entry).transcribe(wav())


def streamed(fake, monkeypatch, terms=TERMS):
    monkeypatch.setenv(fake.key_env, fake.key)
    entry = stream_entry(fake)
    entry.keyterms = terms
    return get_engine(entry).transcribe(wav(), speech_end_s=0.3)


# ---- batch


def test_it_sends_deepgram_one_keyterm_per_term(monkeypatch):
    with FakeDeepgram() as fake:
        batch(fake, monkeypatch)
    request = fake.requests[-1]
    # deepgram-sdk encodes a list as one repeated query parameter per item (its query encoder), as `keyterm`.
    assert [v for k, v in request.query_pairs if k == "keyterm"] == TERMS


def test_it_sends_assemblyai_the_keyterms_prompt_list(monkeypatch):
    with FakeAssemblyAI(processing_polls=0) as fake:
        batch(fake, monkeypatch, poll_interval_s=0.01)
    submit = next(r for r in fake.requests if r.path == "/v2/transcript" and r.method == "POST")
    # assemblyai SDK: TranscriptionConfig(keyterms_prompt=[...]) travels as a JSON list in the request body.
    assert submit.json["keyterms_prompt"] == TERMS


def test_it_sends_openai_the_terms_as_its_prompt_after_the_prompt_option(monkeypatch):
    with FakeOpenAI() as fake:
        batch(fake, monkeypatch)
        batch(fake, monkeypatch, prompt="A restaurant's bookings.")
    # openai SDK: audio.transcriptions.create(prompt=...) sends one multipart text field `prompt`.
    assert fake.requests[0].form["prompt"] == "Siobhan, O'Brien, Bistro Verde"
    assert fake.requests[1].form["prompt"] == "A restaurant's bookings. Siobhan, O'Brien, Bistro Verde"


def test_it_sends_elevenlabs_the_keyterms_field_as_a_json_list(monkeypatch):
    with FakeElevenLabs() as fake:
        batch(fake, monkeypatch)
    # elevenlabs SDK speech_to_text/raw_client.py: data={"keyterms": json.dumps(jsonable_encoder(keyterms)), ...}
    assert json.loads(fake.requests[-1].form["keyterms"]) == TERMS


@pytest.mark.parametrize("fake_class", [FakeDeepgram, FakeOpenAI, FakeElevenLabs])
def test_it_sends_no_vocabulary_option_for_a_plain_entry(fake_class, monkeypatch):
    with fake_class() as fake:
        batch(fake, monkeypatch, terms=[])
    request = fake.requests[-1]
    assert "keyterm" not in request.query and not {"prompt", "keyterms"} & set(request.form)


# ---- streaming


def test_it_opens_deepgram_live_with_one_keyterm_per_term(monkeypatch):
    with FakeDeepgramLive() as fake:
        streamed(fake, monkeypatch)
    assert [v for k, v in fake.handshakes[-1].query_pairs if k == "keyterm"] == TERMS


def test_it_opens_assemblyai_streaming_with_the_keyterms_prompt_json_encoded(monkeypatch):
    with FakeAssemblyAIStreaming() as fake:
        streamed(fake, monkeypatch)
    # assemblyai SDK streaming/v3/_base.py _build_uri: a list parameter is json.dumps'd into the query.
    assert json.loads(fake.handshakes[-1].query["keyterms_prompt"]) == TERMS


def test_it_gives_openai_realtime_the_terms_as_the_transcription_prompt(monkeypatch):
    with FakeOpenAIRealtime() as fake:
        streamed(fake, monkeypatch)
    update = next(
        m for kind, m in fake.sessions[-1].received if kind == "text" and m["type"] == "session.update"
    )
    assert update["session"]["audio"]["input"]["transcription"]["prompt"] == "Siobhan, O'Brien, Bistro Verde"


def test_it_opens_elevenlabs_realtime_with_one_keyterms_per_term(monkeypatch):
    with FakeElevenLabsRealtime() as fake:
        streamed(fake, monkeypatch)
    # elevenlabs SDK realtime/scribe.py _build_websocket_url: params.append(("keyterms", term)) for each term.
    pairs = fake.handshakes[-1].query_pairs
    assert [v for k, v in pairs if k == "keyterms"] == TERMS
    names = [k for k, _ in pairs]
    assert names.index("keyterms") > names.index("include_timestamps")


# ---- limits


def refused(fake, monkeypatch, terms, streaming=False, model=None) -> str:
    monkeypatch.setenv(fake.key_env, fake.key)
    entry = stream_entry(fake) if streaming else catalogue_entry(fake)
    entry.keyterms = terms
    if model:
        entry.model = model
    with pytest.raises(TranscriptionError) as caught:
        get_engine(entry).transcribe(wav(), **({"speech_end_s": 0.3} if streaming else {}))
    assert not caught.value.retryable
    assert not fake.requests if not streaming else not fake.handshakes
    return caught.value.message


def test_it_refuses_deepgram_keyterms_past_100_or_on_a_model_before_nova_3(monkeypatch):
    with FakeDeepgram() as fake:
        message = refused(fake, monkeypatch, [f"term{i}" for i in range(101)])
        assert "at most 100 terms" in message and "remove 1" in message
        assert "nova-3* models only" in refused(fake, monkeypatch, TERMS, model="nova-2")


def test_it_refuses_an_assemblyai_phrase_of_seven_words_and_a_long_streaming_term(monkeypatch):
    with FakeAssemblyAI() as fake:
        assert "at most 6 words" in refused(fake, monkeypatch, ["one two three four five six seven"])
    with FakeAssemblyAIStreaming() as fake:
        assert "at most 50 characters" in refused(fake, monkeypatch, ["x" * 51], streaming=True)


def test_it_refuses_an_openai_prompt_over_224_tokens(monkeypatch):
    terms = [f"Surname{i} Fitzgerald-O'Donoghue" for i in range(40)]
    assert vocabulary.count_tokens(vocabulary.prompt_text(terms)) > 224
    with FakeOpenAI() as fake:
        assert "at most 224 tokens" in refused(fake, monkeypatch, terms)


def test_it_refuses_elevenlabs_realtime_terms_over_20_characters_and_brackets(monkeypatch):
    with FakeElevenLabsRealtime() as fake:
        assert "at most 20 characters" in refused(
            fake, monkeypatch, ["Ballymount Industrial Estate"], streaming=True
        )
    with FakeElevenLabs() as fake:
        assert "refuses the characters" in refused(fake, monkeypatch, ["[menu]"])


def test_it_names_each_limit_in_the_problems_of_a_list():
    assert vocabulary.problems("deepgram", "batch", "nova-3", TERMS) == []
    assert "no terms" in vocabulary.problems("deepgram", "batch", "nova-3", [])[0]
    assert "takes no vocabulary" in vocabulary.problems("pocketsphinx", "batch", "en-us", TERMS)[0]
    many = [f"w{i}" for i in range(60)]
    assert vocabulary.problems("elevenlabs", "streaming", "scribe_v2_realtime", many)[0].startswith(
        "ElevenLabs (streaming) takes at most 50 terms"
    )


def test_it_prices_the_vendors_documented_surcharges():
    assert vocabulary.surcharge("deepgram", "batch", Decimal("0.0043")) == (
        Decimal("0.00120"),
        vocabulary.SURCHARGES[("deepgram", "batch")][2],
    )
    assert vocabulary.surcharge("elevenlabs", "batch", Decimal("0.00367"))[0] == Decimal("0.00073")
    assert vocabulary.surcharge("assemblyai", "streaming", Decimal("0.0025"))[0] == Decimal("0.00067")
    assert vocabulary.surcharge("openai", "batch", Decimal("0.006")) == (Decimal("0.00000"), "")
    assert vocabulary.surcharge("faster_whisper", "batch", 0) == (Decimal("0.00000"), "")


def test_it_cleans_terms_one_per_line():
    assert vocabulary.clean_terms("  Siobhan \n\nsiobhan\nBistro   Verde\n") == ["Siobhan", "Bistro Verde"]


# ---- local


def local_entry(model="tiny.en", terms=TERMS, mode="batch"):
    return SimpleNamespace(
        provider="faster_whisper",
        model=model,
        mode=mode,
        options={},
        api_key_env="",
        price_per_minute=Decimal("0"),
        display_name="Whisper",
        keyterms=terms,
    )


def test_it_gives_faster_whisper_the_terms_as_hotwords(monkeypatch):
    seen = {}

    class Model:
        def transcribe(self, audio, **kwargs):
            seen.update(kwargs)
            return [], SimpleNamespace(language="en", language_probability=1.0)

    monkeypatch.setattr(fw, "load_model", lambda *args: Model())
    get_engine(local_entry()).transcribe(wav())
    assert seen["hotwords"] == "Siobhan, O'Brien, Bistro Verde"
    seen.clear()
    get_engine(local_entry(terms=[])).transcribe(wav())
    assert "hotwords" not in seen


def test_it_refuses_hotwords_faster_whisper_would_cut():
    terms = [f"Surname{i} Fitzgerald-O'Donoghue" for i in range(40)]
    with pytest.raises(TranscriptionError, match="at most 223 tokens"):
        get_engine(local_entry(terms=terms)).transcribe(wav())


needs_espeak = pytest.mark.skipif(
    shutil.which("espeak-ng") is None and os.environ.get("CI") != "true",
    reason="espeak-ng is not installed: this test synthesizes its speech with it",
)


@needs_espeak
@pytest.mark.slow
def test_it_runs_whisper_tiny_en_with_hotwords_offline_batch_and_streaming(tmp_path):
    path = tmp_path / "name.wav"
    said = "My name is Siobhan O'Brien and I booked Bistro Verde."
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(path), said], check=True, capture_output=True)
    clip = path.read_bytes()
    plain = get_engine(local_entry(terms=[])).transcribe(clip)
    hinted = get_engine(local_entry()).transcribe(clip)
    live = get_engine(local_entry(mode="streaming")).transcribe(clip, speech_end_s=2.5)
    assert plain.text and hinted.text and live.text
    assert "bistro" in hinted.text.lower(), (plain.text, hinted.text)


def test_it_bills_elevenlabs_at_least_20_seconds_past_100_keyterms(monkeypatch):
    with FakeElevenLabs() as fake:
        few = batch(fake, monkeypatch, terms=TERMS)
        many = batch(fake, monkeypatch, terms=[f"t{i}" for i in range(101)])
    assert few.cost < many.cost == Decimal("0.002000")  # 20 s at $0.006 a minute
