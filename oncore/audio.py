"""The only module that reads or writes audio.

Recordings are WAV, FLAC or Ogg Vorbis files with one or two channels; on a two-channel call
recording the caller is channel 0. A line's clip is cut with a seek and a read of just that
stretch, never by decoding the whole recording.

A recording kept by the product lives in a Django storage (the local file system, or S3-compatible object
storage): `stored(field_file)` names it, and every read opens it afresh, by its path on a local file system, else
as a seekable file that fetches byte ranges (RangedFile), so a line's clip is read without downloading the
recording.

Importable without Django: the clip margin default is read from settings only when a caller
asks for it (margin_s=None) and Django settings are available; storages are used through their methods alone.
"""

import io
import math
import os
import re
import struct
import wave
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf
from django.core.exceptions import ImproperlyConfigured

from oncore.config import config

DEFAULT_CLIP_MARGIN_S = 0.3
# A recording shorter than this cannot hold a spoken line.
MIN_RECORDING_S = 0.1
MAX_CHANNELS = 2

# Write settings per container: lossless 16-bit where the container allows it.
_SUBTYPES = {"WAV": "PCM_16", "FLAC": "PCM_16", "OGG": "VORBIS"}
_INTEGER_PCM = {"PCM_S8", "PCM_U8", "PCM_16", "PCM_24", "PCM_32", "ALAW", "ULAW"}


class AudioError(Exception):
    """A recording or clip that cannot be used, with a message a user can act on."""


@dataclass(frozen=True)
class RecordingInfo:
    sample_rate: int
    channels: int
    frames: int
    duration_s: float
    format: str


@dataclass(frozen=True)
class LineClips:
    candidate_wav: bytes  # 16-bit PCM WAV, mono: the caller's channel (channel 0 of a stereo recording)
    samples: np.ndarray = field(repr=False)  # (frames, channels), as read
    sample_rate: int
    start_s: float  # actual cut bounds in the recording, margin included, clamped to the recording
    end_s: float
    duration_s: float

    @property
    def playback_wav(self) -> bytes:
        """16-bit PCM WAV, all channels as recorded (encoded when asked: a transcription sends only the mono
        candidate clip, and playback streams the clip instead)."""
        return encode_wav(self.samples, self.sample_rate)


def _what(label: str, source) -> str:
    """How messages name the audio: "the recording of call 12", else "the recording 'a.flac'"."""
    if label:
        return f"the recording of {label}"
    if isinstance(source, str | os.PathLike):
        return f"the recording {Path(source).name!r}"
    return "the audio"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# Bytes fetched at once from object storage: one ranged GET per 256 KiB read (a FLAC frame is a few KiB, so a
# seek and a line's clip cost a few requests).
RANGE_BYTES = 1 << 18


class RangedFile(io.RawIOBase):
    """A read-only, seekable file over `size` bytes that `fetch(start, end)` (inclusive) returns on demand, e.g.
    an S3 object read with ranged GETs. Wrap it in io.BufferedReader to fetch RANGE_BYTES at a time."""

    def __init__(self, size: int, fetch):
        super().__init__()
        self.size, self.fetch, self.position = size, fetch, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.size - self.position)
        if n <= 0:
            return 0
        data = self.fetch(self.position, self.position + n - 1)
        buffer[: len(data)] = data
        self.position += len(data)
        return len(data)


@dataclass(frozen=True)
class Stored:
    """A recording in a Django storage (any object with path/open, as django.core.files.storage has), by name."""

    storage: object
    name: str

    def open(self):
        """Its local path, or a seekable file reading it by byte ranges (S3-compatible storage), or whatever file
        object the storage gives. FileNotFoundError when it is not there; the storage's own error when unreachable."""
        try:
            return self.storage.path(self.name)
        except NotImplementedError:
            pass
        f = self.storage.open(self.name, "rb")
        obj = getattr(f, "obj", None)  # django-storages' S3 file: its boto3 object, not downloaded yet
        if obj is None:
            return f

        def fetch(start, end):
            return obj.get(Range=f"bytes={start}-{end}")["Body"].read()

        return io.BufferedReader(RangedFile(obj.content_length, fetch), RANGE_BYTES)


def stored(field_file) -> Stored:
    """The recording a FileField holds (e.g. call.recording), for probe, locate_clip and cut_line."""
    return Stored(field_file.storage, field_file.name)


def _open(source, what: str) -> sf.SoundFile:
    if isinstance(source, Stored):
        try:
            source = source.open()
        except FileNotFoundError:
            raise AudioError(f"{_cap(what)} is missing: the storage has no file by its name.") from None
        except Exception as exc:  # the storage is unreachable or refused: say so, without its internals
            raise AudioError(f"{_cap(what)} cannot be read from storage ({type(exc).__name__}).") from exc
    if isinstance(source, bytes | bytearray | memoryview):
        if len(source) == 0:
            raise AudioError(f"{_cap(what)} is empty (0 bytes), not audio.")
        source = io.BytesIO(bytes(source))
    elif isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.exists():
            raise AudioError(f"{_cap(what)} is missing: there is no file at its path.")
        if not path.is_file():
            raise AudioError(f"{_cap(what)} is not a file.")
        if path.stat().st_size == 0:
            raise AudioError(f"{_cap(what)} is an empty file (0 bytes).")
    try:
        return sf.SoundFile(source)
    except (sf.SoundFileError, RuntimeError, TypeError, ValueError) as exc:
        raise AudioError(f"{_cap(what)} is not readable audio ({_reason(exc)}).") from exc


def _reason(exc: Exception) -> str:
    """libsndfile's own words, without the file path it sometimes prefixes."""
    text = str(exc)
    if ": " in text and text.startswith("Error opening"):
        text = text.split(": ", 1)[1]
    return text.strip().rstrip(".") or type(exc).__name__


def _info(f: sf.SoundFile) -> RecordingInfo:
    frames = max(int(f.frames), 0)
    return RecordingInfo(
        sample_rate=int(f.samplerate),
        channels=int(f.channels),
        frames=frames,
        duration_s=frames / f.samplerate if f.samplerate else 0.0,
        format=str(f.format),
    )


def _check_usable(info: RecordingInfo, what: str) -> None:
    if info.frames == 0:
        raise AudioError(f"{_cap(what)} is zero-length (no audio frames).")
    if info.duration_s < MIN_RECORDING_S:
        raise AudioError(
            f"{_cap(what)} is too short ({info.duration_s:.3f} s; "
            f"at least {MIN_RECORDING_S} s is needed for a line)."
        )
    if info.channels > MAX_CHANNELS:
        raise AudioError(f"{_cap(what)} has {info.channels} channels; only 1 or 2 are supported.")


def probe(path_or_file, label: str = "") -> RecordingInfo:
    """Describe a recording and check that lines can be cut from it.

    Accepts a path, an open binary file or bytes. Raises AudioError when the recording is
    missing, not audio, zero-length or too short, has more than two channels, or is cut off
    before the length its header announces (checked by reading its last frame).
    """
    what = _what(label, path_or_file)
    f = _open(path_or_file, what)
    with f:
        info = _info(f)
        _check_usable(info, what)
        try:
            if f.seekable():
                f.seek(info.frames - 1)
                last = f.read(1, dtype="float32", always_2d=True)
                if len(last) != 1:
                    raise AudioError(f"{_cap(what)} is truncated: it ends before its stated length.")
        except (sf.SoundFileError, RuntimeError) as exc:
            raise AudioError(
                f"{_cap(what)} is truncated or damaged: its end cannot be read ({_reason(exc)})."
            ) from exc
    return info


# The containers a recording may be in, by its content (libsndfile's major format, whatever the file is called):
# WAV (with the extensible header too), FLAC and Ogg. Others that libsndfile happens to read (MP3, AIFF, AU, ...)
# are refused at import, so every recording kept is one the documented formats cover.
RECORDING_FORMATS = {"WAV": "WAV", "WAVEX": "WAV", "FLAC": "FLAC", "OGG": "Ogg"}
RECORDING_FORMATS_WORDS = "WAV, FLAC or Ogg"


def container_problem(info: RecordingInfo) -> str | None:
    """Why a recording's container is not one a recording may be in ("is MP3 audio (MPEG-1/2 Audio); ..."), or
    None when it is. Reads `info.format`, which probe took from the content."""
    if info.format in RECORDING_FORMATS:
        return None
    described = sf.available_formats().get(info.format, "")
    kind = f"{info.format} audio" + (f" ({described})" if described and described != info.format else "")
    return (
        f"is {kind}, judged by its content whatever its name; a recording must be {RECORDING_FORMATS_WORDS}"
    )


def wav_info(wav_bytes: bytes) -> RecordingInfo:
    """Describe audio held in memory (a clip); raises AudioError when the bytes are not audio."""
    with _open(wav_bytes, "the clip") as f:
        return _info(f)


def _default_margin() -> float:
    """config().clip_margin_s when Django settings are configured (a script may cut clips without them), else the
    default."""
    try:
        return float(config().clip_margin_s)
    except (ImproperlyConfigured, AttributeError, KeyError):  # not configured, or no such setting
        return DEFAULT_CLIP_MARGIN_S


def _to_int16(samples: np.ndarray) -> np.ndarray:
    """Floats in [-1, 1] (clipped) to 16-bit integers; a 16-bit source read back comes out exact."""
    if samples.dtype == np.int16:
        return samples
    scaled = np.rint(np.asarray(samples, dtype=np.float32) * np.float32(32768.0))
    return np.clip(scaled, -32768, 32767).astype(np.int16)


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV bytes from samples shaped (n,) or (n, channels), floats in [-1, 1] (clipped)."""
    samples = np.asarray(samples)
    if samples.ndim not in (1, 2):
        raise ValueError(f"samples must be shaped (n,) or (n, channels), not {samples.shape}")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1 if samples.ndim == 1 else samples.shape[1])
        out.setsampwidth(2)
        out.setframerate(int(sample_rate))
        out.writeframes(_to_int16(samples).astype("<i2", copy=False).tobytes())
    return buffer.getvalue()


def write_recording(path, samples: np.ndarray, sample_rate: int, format: str = "FLAC") -> None:
    """Write a recording to a path or a binary file object: FLAC and WAV as 16-bit PCM, OGG as Vorbis."""
    format = format.upper()
    if format not in _SUBTYPES:
        raise ValueError(f"format must be one of {', '.join(_SUBTYPES)}, not {format!r}")
    samples = np.asarray(samples)
    if format != "OGG":
        samples = _to_int16(samples)
    elif samples.dtype != np.int16:
        samples = np.clip(samples.astype(np.float32), -1.0, 1.0)
    target = path if hasattr(path, "write") else str(path)
    sf.write(target, samples, int(sample_rate), format=format, subtype=_SUBTYPES[format])


WAV_HEADER_BYTES = 44  # the canonical PCM header encode_wav writes: RIFF, fmt and data chunk headers
# Frames read at once while streaming a clip: about 0.7 MB of 16-bit stereo at 48 kHz, whatever the clip's length.
STREAM_BLOCK_FRAMES = 1 << 16


@dataclass(frozen=True)
class Clip:
    """Where a line's clip lies in its recording, found without reading its audio. Its playback WAV (16-bit
    PCM, every channel) has a known size, so it can be streamed in blocks or any byte range read on its own:
    memory stays bounded by one block, whatever the length of the line."""

    source: object  # the recording: a path, bytes or a Stored (opened again for each read)
    what: str
    first: int  # the first frame of the clip in the recording
    frames: int
    channels: int
    sample_rate: int
    dtype: str  # what the frames are read as: "int16" for integer PCM, "float32" for Vorbis and float WAV

    @property
    def start_s(self) -> float:
        return self.first / self.sample_rate

    @property
    def duration_s(self) -> float:
        return self.frames / self.sample_rate

    @property
    def wav_size(self) -> int:
        """Bytes of the playback WAV: its header and every frame."""
        return WAV_HEADER_BYTES + self.frames * self.channels * 2

    def wav_header(self) -> bytes:
        block_align = self.channels * 2
        data_bytes = self.frames * block_align
        return (
            b"RIFF"
            + struct.pack("<I", 36 + data_bytes)
            + b"WAVEfmt "
            + struct.pack(
                "<IHHIIHH",
                16,
                1,
                self.channels,
                self.sample_rate,
                self.sample_rate * block_align,
                block_align,
                16,
            )
            + b"data"
            + struct.pack("<I", data_bytes)
        )

    def samples(self) -> np.ndarray:
        """Every frame of the clip, shaped (frames, channels): for a transcription, never for playback."""
        return np.concatenate(
            list(self._blocks(0, self.frames, self.frames)) or [np.empty((0, self.channels))]
        )

    def wav_bytes(self, start: int = 0, end: int | None = None):
        """Yield bytes start..end (inclusive; end None: to the last byte) of the playback WAV, decoding only
        the frames those bytes hold, one block at a time."""
        end = self.wav_size - 1 if end is None else min(end, self.wav_size - 1)
        if start < WAV_HEADER_BYTES:
            yield self.wav_header()[start : end + 1]
        if end < WAV_HEADER_BYTES:
            return
        frame_bytes = self.channels * 2
        data_start, data_end = max(start, WAV_HEADER_BYTES) - WAV_HEADER_BYTES, end - WAV_HEADER_BYTES
        first, last = data_start // frame_bytes, data_end // frame_bytes
        skip = data_start - first * frame_bytes  # bytes of the first frame before the range
        remaining = data_end - data_start + 1
        for block in self._blocks(first, last + 1, STREAM_BLOCK_FRAMES):
            data = _to_int16(block).astype("<i2", copy=False).tobytes()[skip : skip + remaining]
            skip, remaining = 0, remaining - len(data)
            yield data

    def _blocks(self, first: int, stop: int, block_frames: int):
        """The clip's frames first..stop-1 (relative to the clip), block_frames at a time."""
        with _open(self.source, self.what) as f:
            try:
                f.seek(self.first + first)
                position = first
                while position < stop:
                    n = min(block_frames, stop - position)
                    block = f.read(n, dtype=self.dtype, always_2d=True)
                    if len(block) < n:
                        raise AudioError(
                            f"{_cap(self.what)} is truncated: it stops at "
                            f"{(self.first + position + len(block)) / self.sample_rate:.1f} s, inside the line."
                        )
                    position += n
                    yield block
            except (sf.SoundFileError, RuntimeError) as exc:
                raise AudioError(
                    f"{_cap(self.what)} is truncated or damaged: "
                    f"{self.start_s:.1f}–{self.start_s + self.duration_s:.1f} s cannot be read ({_reason(exc)})."
                ) from exc


def locate_clip(
    path,
    start_s: float,
    end_s: float,
    *,
    margin_s: float | None = None,
    label: str = "",
    check_end: bool = True,
) -> Clip:
    """Where a line's clip lies, with margin_s of audio on each side, clamped to the recording.

    A line that starts at or past the end (or ends at or before the start) of the recording is an AudioError;
    so is, with check_end, a recording whose clip cannot be read to its last frame (checked by reading that
    frame alone, so a streamed clip does not break off halfway).
    """
    what = _what(label, path)
    start_s, end_s = float(start_s), float(end_s)
    if not (math.isfinite(start_s) and math.isfinite(end_s)):
        raise AudioError(f"The line timing {start_s}–{end_s} s for {what} is not a pair of numbers.")
    if start_s >= end_s:
        raise AudioError(
            f"The line timing {start_s:.1f}–{end_s:.1f} s for {what} does not end after it starts."
        )
    margin = _default_margin() if margin_s is None else float(margin_s)
    if not math.isfinite(margin) or margin < 0:
        raise ValueError(f"margin_s must be a number >= 0, not {margin_s!r}")

    with _open(path, what) as f:
        info = _info(f)
        _check_usable(info, what)
        if start_s >= info.duration_s or end_s <= 0:
            raise AudioError(
                f"The line timing {start_s:.1f}–{end_s:.1f} s lies outside {what}, "
                f"which is {info.duration_s:.1f} s long."
            )
        rate = info.sample_rate
        first = max(0, int(math.floor((start_s - margin) * rate)))
        last = min(info.frames, int(math.ceil((end_s + margin) * rate)))
        # Integer PCM (WAV, FLAC) is read as 16-bit integers directly; Vorbis and float WAV as floats.
        dtype = "int16" if f.subtype in _INTEGER_PCM else "float32"
        readable = True
        try:
            if check_end:
                f.seek(last - 1)
                readable = len(f.read(1, dtype=dtype)) == 1
        except (sf.SoundFileError, RuntimeError) as exc:
            raise AudioError(
                f"{_cap(what)} is truncated or damaged: "
                f"{first / rate:.1f}–{last / rate:.1f} s cannot be read ({_reason(exc)})."
            ) from exc
        if not readable:
            raise AudioError(
                f"{_cap(what)} is truncated: it stops before {last / rate:.1f} s "
                f"but says it is {info.duration_s:.1f} s long."
            )
    source = bytes(path) if isinstance(path, bytes | bytearray | memoryview) else path
    return Clip(source, what, first, last - first, info.channels, rate, dtype)


def cut_line(
    path, start_s: float, end_s: float, *, margin_s: float | None = None, label: str = ""
) -> LineClips:
    """Cut one line's clips from a recording, with margin_s of audio on each side (see locate_clip), read
    whole into memory: what a transcription sends. Playback streams the clip instead (Clip.wav_bytes)."""
    clip = locate_clip(path, start_s, end_s, margin_s=margin_s, label=label, check_end=False)
    data = clip.samples()  # a short read here says where the recording stops
    return LineClips(
        candidate_wav=encode_wav(data[:, 0], clip.sample_rate),
        samples=data,
        sample_rate=clip.sample_rate,
        start_s=clip.start_s,
        end_s=(clip.first + clip.frames) / clip.sample_rate,
        duration_s=clip.duration_s,
    )


def decode_wav_mono(wav_bytes: bytes, target_rate: int = 16000) -> np.ndarray:
    """Decode audio bytes (a WAV clip) to float32 mono in [-1, 1] at target_rate.

    Channels are averaged; the rate is changed with a polyphase filter. Raises AudioError when
    the bytes are not audio. A valid clip with no frames gives an empty array.
    """
    with _open(wav_bytes, "the clip") as f:
        rate = int(f.samplerate)
        try:
            data = f.read(dtype="float32", always_2d=True)
        except (sf.SoundFileError, RuntimeError) as exc:
            raise AudioError(f"The clip is truncated or damaged ({_reason(exc)}).") from exc
    mono = data.mean(axis=1, dtype=np.float32) if data.shape[1] > 1 else data[:, 0]
    if rate != target_rate and len(mono):
        from scipy.signal import resample_poly

        step = math.gcd(rate, int(target_rate))
        mono = resample_poly(mono, int(target_rate) // step, rate // step)
    return np.clip(mono, -1.0, 1.0).astype(np.float32, copy=False)


_RANGE = re.compile(r"bytes\s*=\s*(\d*)\s*-\s*(\d*)", re.IGNORECASE)


def http_range(total_length: int, header: str | None) -> tuple[int, int] | None:
    """Inclusive (start, end) byte positions asked for by an HTTP Range header.

    None when there is no header (serve everything with 200). ValueError when the header is
    malformed, asks for several ranges, or cannot be satisfied (the view answers 416).
    """
    if header is None or not header.strip():
        return None
    match = _RANGE.fullmatch(header.strip())
    if not match:
        raise ValueError(f"malformed or unsupported Range header: {header!r}")
    first, last = match.groups()
    if first == "" and last == "":
        raise ValueError(f"malformed Range header: {header!r}")
    if first == "":  # the last n bytes
        suffix = int(last)
        if suffix == 0 or total_length <= 0:
            raise ValueError(f"unsatisfiable Range {header!r} for {total_length} bytes")
        return max(0, total_length - suffix), total_length - 1
    start = int(first)
    end = total_length - 1 if last == "" else int(last)
    if end < start:
        raise ValueError(f"malformed Range header: {header!r}")
    if start >= total_length:
        raise ValueError(f"unsatisfiable Range {header!r} for {total_length} bytes")
    return start, min(end, total_length - 1)
