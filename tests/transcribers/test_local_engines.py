"""The offline engines (faster-whisper with the packaged models, PocketSphinx) on speech synthesized by espeak-ng."""

import os
import re
import shutil
import subprocess
from decimal import Decimal
from types import SimpleNamespace

import jiwer
import pytest

from oncore.transcribers.engines import TranscriptionError, get_engine
from oncore.transcribers.engines import faster_whisper as fw

SENTENCE = "Could you please call me back when the order is ready?"

needs_espeak = pytest.mark.skipif(
    shutil.which("espeak-ng") is None and os.environ.get("CI") != "true",
    reason="espeak-ng is not installed (apt-get install espeak-ng): these tests synthesize their speech with it",
)


def entry(provider, model, **options):
    return SimpleNamespace(
        provider=provider,
        model=model,
        options=options,
        api_key_env="",
        price_per_minute=Decimal("0"),
        display_name=f"{provider} {model}",
    )


def words(text):
    return " ".join(re.sub(r"[^\w']+", " ", text.lower()).split())


def wer(expected, said):
    return jiwer.wer(words(expected), words(said) or "<nothing>")


@pytest.fixture(scope="module")
def spoken(tmp_path_factory):
    path = tmp_path_factory.mktemp("speech") / "sentence.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(path), SENTENCE], check=True, capture_output=True)
    return path.read_bytes()


@needs_espeak
@pytest.mark.slow
def test_it_transcribes_a_spoken_sentence_with_whisper_tiny_en_offline(spoken):
    result = get_engine(entry("faster_whisper", "tiny.en")).transcribe(spoken, language="es")  # .en forces en
    assert wer(SENTENCE, result.text) <= 0.2, result.text
    assert result.audio_seconds == pytest.approx(3.1, abs=0.6)
    assert result.cost == Decimal("0") and result.latency_s > 0
    assert result.raw["model"] == "tiny.en" and result.raw["language"] == "en"


@needs_espeak
@pytest.mark.slow
def test_it_transcribes_a_spoken_sentence_with_whisper_base_joined_from_its_parts(spoken, settings, tmp_path):
    settings.ONCORE = {**settings.ONCORE, "MODEL_CACHE_DIR": tmp_path}
    result = get_engine(entry("faster_whisper", "base")).transcribe(spoken, language="en-US")
    assert wer(SENTENCE, result.text) <= 0.2, result.text
    assert (tmp_path / "whisper-base" / "model.bin").exists()


@needs_espeak
@pytest.mark.slow
def test_it_returns_some_text_from_pocketsphinx(spoken):
    result = get_engine(entry("pocketsphinx", "en-us")).transcribe(spoken)
    assert result.text.strip()
    assert result.raw["engine"] == "pocketsphinx" and result.cost == Decimal("0")


def test_it_joins_whisper_base_once_and_reuses_the_joined_file(tmp_path):
    folder = fw.prepare_base_model(tmp_path)
    model_bin = folder / "model.bin"
    parts = [
        fw._package_data(fw.BASE_PART_PACKAGES[0]) / "model.bin.part1",
        fw._package_data(fw.BASE_PART_PACKAGES[1]) / "model.bin.part2",
    ]
    assert model_bin.stat().st_size == sum(p.stat().st_size for p in parts)
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.json",
        "model.bin",
        "tokenizer.json",
        "vocabulary.json",
    ]
    before = model_bin.stat()
    fw.prepare_base_model(tmp_path)
    after = model_bin.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_it_rejoins_a_truncated_whisper_base(tmp_path):
    folder = fw.prepare_base_model(tmp_path)
    expected = (folder / "model.bin").stat().st_size
    with open(folder / "model.bin", "r+b") as f:
        f.truncate(1000)
    fw.prepare_base_model(tmp_path)
    assert (folder / "model.bin").stat().st_size == expected
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_it_loads_each_whisper_model_once_per_process(monkeypatch):
    monkeypatch.setattr(fw, "_models", {})
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert fw.load_model("tiny.en") is fw.load_model("tiny.en")
    assert len(fw._models) == 1
    assert "HF_HUB_OFFLINE" not in os.environ  # set only while the local folder loads


def test_it_explains_that_named_whisper_models_need_the_hub(settings, tmp_path):
    settings.ONCORE = {**settings.ONCORE, "MODEL_CACHE_DIR": tmp_path}
    with pytest.raises(TranscriptionError, match="Offline, use tiny.en or base") as caught:
        fw.load_model("no-such-model")
    assert caught.value.retryable is False


def test_it_refuses_pocketsphinx_models_that_are_not_shipped():
    with pytest.raises(TranscriptionError, match="only the en-us model") as caught:
        get_engine(entry("pocketsphinx", "de-de"))
    assert caught.value.retryable is False


def test_it_refuses_audio_that_is_not_a_wav_in_local_engines():
    for provider, model in [("faster_whisper", "tiny.en"), ("pocketsphinx", "en-us")]:
        with pytest.raises(TranscriptionError) as caught:
            get_engine(entry(provider, model)).transcribe(b"RIFF but not really a wav")
        assert caught.value.retryable is False


@pytest.mark.slow
def test_it_replays_a_clip_whisper_finds_hard_to_the_same_text_every_time(settings):
    """faster-whisper's own default falls back to sampling at rising temperatures on a clip like this one (a demo
    line tiny.en loops on), whose text then changes from one replay to the next; the engine decodes at temperature
    0 unless told otherwise, so a full-call run's calibration measures the audio path, not sampling noise."""
    import json
    from pathlib import Path

    from oncore import audio

    demo = Path(settings.BASE_DIR) / "fixtures" / "demo"
    call = next(
        c
        for c in json.loads((demo / "calls.json").read_text())["calls"]
        if c["external_id"] == "helpdesk-006"
    )
    line = call["lines"][3]
    clip = audio.cut_line(demo / call["recording"], line["start_s"], line["end_s"]).candidate_wav
    engine = get_engine(entry("faster_whisper", "tiny.en"))
    texts = {engine.transcribe(clip).text for _ in range(3)}
    assert len(texts) == 1
