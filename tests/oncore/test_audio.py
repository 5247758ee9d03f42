"""Cutting line clips from call recordings, decoding clips for engines, serving byte ranges."""

import io
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from oncore import audio
from oncore.audio import AudioError, cut_line, decode_wav_mono, encode_wav, http_range, probe, write_recording

RATE = 8000


def tone(freq, seconds, rate=RATE, amplitude=0.5):
    t = np.arange(int(round(seconds * rate))) / rate
    return amplitude * np.sin(2 * np.pi * freq * t)


def stereo_call(seconds=10.0, rate=RATE):
    """Caller at 440 Hz on channel 0, agent at 1500 Hz on channel 1."""
    return np.stack([tone(440, seconds, rate), tone(1500, seconds, rate)], axis=1)


def dominant_freq(samples, rate):
    spectrum = np.abs(np.fft.rfft(samples))
    return np.fft.rfftfreq(len(samples), 1 / rate)[int(np.argmax(spectrum))]


def read_wav(wav):
    data, rate = sf.read(io.BytesIO(wav), dtype="float32", always_2d=True)
    return data, rate


@pytest.fixture
def stereo_flac(tmp_path):
    path = tmp_path / "call.flac"
    write_recording(path, stereo_call(), RATE)
    return path


def test_it_cuts_the_line_with_the_margin_on_both_sides(stereo_flac):
    clips = cut_line(stereo_flac, 2.0, 4.0, margin_s=0.5, label="call 12")
    assert (clips.start_s, clips.end_s) == (1.5, 4.5)
    assert clips.duration_s == pytest.approx(3.0)
    assert clips.sample_rate == RATE
    data, rate = read_wav(clips.playback_wav)
    assert rate == RATE and len(data) == 3 * RATE


def test_it_cuts_exactly_the_samples_at_those_times(tmp_path):
    ramp = np.arange(10 * RATE) % 20000 / 32768  # each frame's value says where it is
    path = tmp_path / "ramp.flac"
    write_recording(path, ramp, RATE)
    clips = cut_line(path, 3.0, 3.5, margin_s=0.0)
    data, _ = read_wav(clips.candidate_wav)
    expected = ramp[3 * RATE : int(3.5 * RATE)]
    np.testing.assert_allclose(data[:, 0], expected, atol=1 / 32768)


def test_it_clamps_the_margin_at_the_start_of_the_recording(stereo_flac):
    clips = cut_line(stereo_flac, 0.1, 1.0, margin_s=0.3)
    assert clips.start_s == 0.0
    assert clips.end_s == pytest.approx(1.3)


def test_it_clamps_a_line_that_runs_past_the_end(stereo_flac):
    clips = cut_line(stereo_flac, 9.0, 12.0, margin_s=0.3)
    assert clips.start_s == pytest.approx(8.7)
    assert clips.end_s == 10.0
    data, _ = read_wav(clips.playback_wav)
    assert len(data) == int(1.3 * RATE)


def test_it_gives_the_caller_channel_to_candidates_and_both_channels_for_playback(stereo_flac):
    clips = cut_line(stereo_flac, 2.0, 4.0, margin_s=0.0)
    candidate, _ = read_wav(clips.candidate_wav)
    playback, _ = read_wav(clips.playback_wav)
    assert candidate.shape[1] == 1
    assert dominant_freq(candidate[:, 0], RATE) == pytest.approx(440, abs=2)
    assert playback.shape[1] == 2
    assert dominant_freq(playback[:, 0], RATE) == pytest.approx(440, abs=2)
    assert dominant_freq(playback[:, 1], RATE) == pytest.approx(1500, abs=2)


def test_it_cuts_mono_recordings(tmp_path):
    path = tmp_path / "mono.wav"
    write_recording(path, tone(700, 5.0), RATE, format="WAV")
    clips = cut_line(path, 1.0, 2.0, margin_s=0.0)
    candidate, _ = read_wav(clips.candidate_wav)
    playback, _ = read_wav(clips.playback_wav)
    assert candidate.shape == playback.shape == (RATE, 1)
    assert dominant_freq(candidate[:, 0], RATE) == pytest.approx(700, abs=2)


@pytest.mark.parametrize("fmt", ["WAV", "FLAC", "OGG"])
def test_it_reads_wav_flac_and_ogg_recordings(tmp_path, fmt):
    path = tmp_path / f"call.{fmt.lower()}"
    write_recording(path, stereo_call(rate=16000), 16000, format=fmt)
    info = probe(path, label="call 3")
    assert (info.sample_rate, info.channels, info.format) == (16000, 2, fmt)
    assert info.duration_s == pytest.approx(10.0, abs=0.01)
    clips = cut_line(path, 5.0, 6.0, margin_s=0.25)
    candidate, _ = read_wav(clips.candidate_wav)
    assert len(candidate) == int(1.5 * 16000)
    assert dominant_freq(candidate[:, 0], 16000) == pytest.approx(440, abs=2)
    assert np.abs(candidate).max() == pytest.approx(0.5, abs=0.05)


def test_it_probes_an_open_file_or_bytes(stereo_flac):
    with open(stereo_flac, "rb") as handle:
        info = probe(handle, label="call 2")
    assert (info.channels, info.frames, info.format) == (2, 10 * RATE, "FLAC")
    assert probe(stereo_flac.read_bytes()).duration_s == 10.0


def test_it_keeps_the_level_of_float_wav_recordings(tmp_path):
    path = tmp_path / "float.wav"
    sf.write(path, tone(440, 3.0), RATE, subtype="FLOAT")
    clips = cut_line(path, 1.0, 2.0, margin_s=0.0)
    candidate, _ = read_wav(clips.candidate_wav)
    assert np.abs(candidate).max() == pytest.approx(0.5, abs=0.01)


def test_it_reads_the_margin_from_settings_when_none_is_given(stereo_flac, settings):
    settings.ONCORE = {**settings.ONCORE, "CLIP_MARGIN_S": 1.0}
    clips = cut_line(stereo_flac, 3.0, 4.0)
    assert (clips.start_s, clips.end_s) == (2.0, 5.0)


def test_it_imports_and_uses_the_default_margin_without_django_settings(stereo_flac):
    code = (
        "import os; os.environ.pop('DJANGO_SETTINGS_MODULE', None)\n"
        "from oncore.audio import cut_line\n"
        f"c = cut_line({str(stereo_flac)!r}, 3.0, 4.0)\n"
        "print(round(c.start_s, 3), round(c.end_s, 3))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2.7", "4.3"]


def test_it_names_the_call_when_the_recording_is_missing(tmp_path):
    with pytest.raises(AudioError, match="call 12 is missing"):
        cut_line(tmp_path / "gone.flac", 1.0, 2.0, label="call 12")
    with pytest.raises(AudioError, match="call 12 is missing"):
        probe(tmp_path / "gone.flac", label="call 12")


def test_it_refuses_files_that_are_not_audio(tmp_path):
    path = tmp_path / "notes.flac"
    path.write_bytes(b"these are meeting notes, not a recording" * 10)
    with pytest.raises(AudioError, match="call 4 is not readable audio"):
        cut_line(path, 1.0, 2.0, label="call 4")
    with pytest.raises(AudioError, match="not readable audio"):
        decode_wav_mono(b"RIFF but not really a wave file")
    with pytest.raises(AudioError):
        audio.wav_info(b"")


def test_it_reports_a_truncated_flac_instead_of_crashing(tmp_path):
    path = tmp_path / "cut-off.flac"
    write_recording(path, stereo_call(seconds=20.0), RATE)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(AudioError, match="call 9 is truncated"):
        probe(path, label="call 9")
    with pytest.raises(AudioError, match="call 9 is truncated"):
        cut_line(path, 15.0, 17.0, label="call 9")
    # The first half of the call is still there and still cuts.
    assert cut_line(path, 1.0, 2.0, label="call 9").duration_s > 1.0


def test_it_refuses_zero_length_and_too_short_recordings(tmp_path):
    empty = tmp_path / "empty.wav"
    sf.write(empty, np.zeros((0, 1)), RATE)
    with pytest.raises(AudioError, match="zero-length"):
        cut_line(empty, 0.0, 1.0, label="call 5")
    with pytest.raises(AudioError, match="zero-length"):
        probe(empty, label="call 5")
    blip = tmp_path / "blip.wav"
    write_recording(blip, tone(440, 0.05), RATE, format="WAV")
    with pytest.raises(AudioError, match="too short"):
        cut_line(blip, 0.0, 0.04, label="call 6")
    zero_bytes = tmp_path / "zero.flac"
    zero_bytes.write_bytes(b"")
    with pytest.raises(AudioError, match="empty file"):
        probe(zero_bytes, label="call 7")


def test_it_refuses_a_line_outside_the_recording(tmp_path):
    path = tmp_path / "minute.flac"
    write_recording(path, tone(440, 60.0), RATE)
    with pytest.raises(AudioError) as caught:
        cut_line(path, 61.0, 63.0, label="call 12")
    assert str(caught.value) == (
        "The line timing 61.0–63.0 s lies outside the recording of call 12, which is 60.0 s long."
    )
    with pytest.raises(AudioError, match="outside"):
        cut_line(path, 60.0, 61.0, label="call 12")


def test_it_refuses_a_line_that_does_not_end_after_it_starts(stereo_flac):
    with pytest.raises(AudioError, match="does not end after it starts"):
        cut_line(stereo_flac, 3.0, 3.0, label="call 1")
    with pytest.raises(AudioError, match="does not end after it starts"):
        cut_line(stereo_flac, 4.0, 3.0, label="call 1")


def test_it_refuses_recordings_with_more_than_two_channels(tmp_path):
    path = tmp_path / "surround.wav"
    write_recording(path, np.zeros((RATE, 3)), RATE, format="WAV")
    with pytest.raises(AudioError, match="3 channels"):
        cut_line(path, 0.1, 0.5, label="call 8")


def test_it_resamples_8k_clips_to_16k_for_engines():
    wav = encode_wav(tone(300, 2.5, rate=8000), 8000)
    samples = decode_wav_mono(wav, target_rate=16000)
    assert samples.dtype == np.float32
    assert len(samples) == 2.5 * 16000
    assert dominant_freq(samples, 16000) == pytest.approx(300, abs=1)
    assert np.abs(samples).max() <= 1.0


def test_it_averages_channels_when_decoding_for_engines():
    both = np.stack([np.full(1600, 0.5), np.full(1600, -0.1)], axis=1)
    samples = decode_wav_mono(encode_wav(both, 16000))
    assert len(samples) == 1600
    np.testing.assert_allclose(samples, 0.2, atol=1e-3)


def test_it_describes_a_clip_for_engines(stereo_flac):
    clips = cut_line(stereo_flac, 2.0, 4.0, margin_s=0.3)
    info = audio.wav_info(clips.candidate_wav)
    assert (info.channels, info.sample_rate, info.format) == (1, RATE, "WAV")
    assert info.duration_s == pytest.approx(2.6)


def test_it_encodes_16_bit_wav_and_clips_loud_samples():
    wav = encode_wav(np.array([0.0, 2.0, -3.0, 0.5]), RATE)
    data, rate = sf.read(io.BytesIO(wav), dtype="int16")
    assert sf.info(io.BytesIO(wav)).subtype == "PCM_16"
    assert list(data) == [0, 32767, -32768, 16384]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("bytes=0-99", (0, 99)),
        ("bytes=100-", (100, 999)),
        ("bytes=-100", (900, 999)),
        ("bytes=-5000", (0, 999)),
        ("bytes=900-5000", (900, 999)),
        ("bytes=999-999", (999, 999)),
        ("Bytes = 10-20", (10, 20)),
    ],
)
def test_it_reads_http_byte_ranges(header, expected):
    assert http_range(1000, header) == expected


@pytest.mark.parametrize(
    "header",
    [
        "bytes=1000-",
        "bytes=2000-3000",
        "bytes=-0",
        "bytes=50-10",
        "bytes=-",
        "items=0-5",
        "bytes=0-5,10-20",
        "0-5",
    ],
)
def test_it_refuses_unsatisfiable_or_malformed_ranges(header):
    with pytest.raises(ValueError):
        http_range(1000, header)


def test_it_refuses_any_range_of_an_empty_body():
    with pytest.raises(ValueError):
        http_range(0, "bytes=0-")
    with pytest.raises(ValueError):
        http_range(0, "bytes=-10")
