"""A recording is WAV, FLAC or Ogg by its content, whatever it is called: MP3, AIFF and AU files (which libsndfile
reads too) named `.flac` are refused at import, naming the call, the file and what is accepted."""

import io
import json
import shutil
import subprocess

import numpy as np
import pytest
import soundfile as sf
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from oncore.calls.models import Call, Line
from tests.fixtures import assert_error

pytestmark = pytest.mark.django_db

RATE = 8000


def calls_file(recording: str) -> SimpleUploadedFile:
    data = {
        "format": "oncore-calls/1",
        "tenants": [{"slug": "bistro", "name": "Bistro"}],
        "calls": [
            {
                "external_id": "ext-1",
                "tenant": "bistro",
                "started_at": "2025-03-01T18:00:00+01:00",
                "recording": recording,
                "live_transcriber": {"name": "Old STT"},
                "lines": [{"speaker": "caller", "text": "Table for two.", "start_s": 0.5, "end_s": 1.5}],
            }
        ],
    }
    return SimpleUploadedFile("calls.json", json.dumps(data).encode(), content_type="application/json")


def tone(seconds: float = 3.0) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (np.stack([np.sin(t * 2000), np.sin(t * 3000)], axis=1) * 0.2).astype(np.float32)


def _mp3_by_sox(tmp_path) -> bytes | None:
    if not shutil.which("sox"):
        return None
    out = tmp_path / "tone.mp3"
    done = subprocess.run(
        ["sox", "-n", "-r", str(RATE), "-c", "2", str(out), "synth", "3", "sine", "440"], capture_output=True
    )
    return out.read_bytes() if done.returncode == 0 and out.exists() else None


def _mp3_by_hand() -> bytes:
    """MPEG-1 Layer III frames (8 kHz is MPEG-2.5; this is 32 kHz mono, 32 kbit/s: 144 bytes a frame) of silence:
    a header and zeroed side information and data, as an MP3 file with no tag is."""
    header = bytes([0xFF, 0xFB, 0x18, 0xC4])  # sync, MPEG-1 layer III no CRC; 32 kbit/s, 32 kHz; mono
    return (header + bytes(144 - len(header))) * 400


def encoded(kind: str, tmp_path) -> bytes:
    """A three-second stereo tone in that container: soundfile writes AIFF and AU (and MP3 where its libsndfile
    can); an MP3 otherwise comes from sox, or is made by hand."""
    if kind == "MP3" and "MP3" not in sf.available_formats():
        return _mp3_by_sox(tmp_path) or _mp3_by_hand()
    out = io.BytesIO()
    subtype = {"OGG": "VORBIS", "MP3": "MPEG_LAYER_III", "WAVEX": "PCM_16"}.get(kind, "PCM_16")
    try:
        sf.write(out, tone(), RATE, format=kind, subtype=subtype)
    except (sf.LibsndfileError, ValueError, TypeError):
        assert kind == "MP3", f"soundfile cannot write {kind}"
        return _mp3_by_sox(tmp_path) or _mp3_by_hand()
    return out.getvalue()


def upload(kind: str, name: str, tmp_path) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, encoded(kind, tmp_path), content_type="audio/flac")


@pytest.mark.parametrize("kind", ["MP3", "AIFF", "AU"])
def test_it_refuses_a_recording_that_is_not_wav_flac_or_ogg_by_its_content_whatever_its_name(
    api, org, tmp_path, kind
):
    response = api.upload(
        "/calls/import",
        {"file": calls_file("ext-1.flac"), "recordings": [upload(kind, "ext-1.flac", tmp_path)]},
    )
    error = assert_error(response, 400, "import_format_error")
    message = error["message"]
    assert "call ext-1" in message and "'ext-1.flac'" in message, message
    if kind != "MP3" or "MP3" in sf.available_formats():  # a libsndfile without MP3 refuses it as not audio
        assert f"is {kind} audio" in message and "must be WAV, FLAC or Ogg" in message, message
    assert not Call.objects.exists() and not Line.objects.exists()


def test_the_command_refuses_an_aiff_recording_in_the_same_words(api, org, tmp_path):
    recording = upload("AIFF", "ext-1.flac", tmp_path)
    error = assert_error(
        api.upload("/calls/import", {"file": calls_file("ext-1.flac"), "recordings": [recording]}),
        400,
        "import_format_error",
    )
    recording.seek(0)
    (tmp_path / "ext-1.flac").write_bytes(recording.read())
    (tmp_path / "calls.json").write_bytes(calls_file("ext-1.flac").read())
    with pytest.raises(CommandError) as refused:
        call_command("import_calls", str(tmp_path / "calls.json"), "--org", org.slug)
    assert str(refused.value) == f"Nothing was imported: {error['message']}"


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("WAV", "ext-1.wav"),
        ("WAVEX", "ext-1.wav"),
        ("FLAC", "ext-1.flac"),
        ("OGG", "ext-1.ogg"),
        ("WAV", "ext-1"),
    ],
)
def test_it_imports_wav_flac_and_ogg_recordings(api, org, tmp_path, kind, name):
    response = api.upload(
        "/calls/import", {"file": calls_file(name), "recordings": [upload(kind, name, tmp_path)]}
    )
    assert response.status_code == 200, response.content
    call = Call.objects.get()
    assert call.recording and api.get(f"/lines/{call.lines.get().pk}/audio").status_code == 200
