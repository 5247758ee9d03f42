"""Import the Entity Transcription Benchmark from its published parquet files.

    # PATH: a folder with data/test-*.parquet, or one parquet file
    result = import_dataset(Path("entity-transcription-benchmark"))

Columns read: `audio` ({bytes, path}), `transcript`, `subset`, `entities`, `entity_types`, `entity_tiers`,
`entity_offsets` (JSON strings, or lists), `duration_s`, and a clip id column (`id` or `clip_id`) when there
is one; otherwise the id is the audio path's file name without its extension.

A row that breaks the contract is left out, stored as an ImportProblem with its clip id and the reason, and
counted as excluded; the rest import. The contract: the three entity arrays are JSON lists of one length,
tiers are A or B, every span is a substring of the transcript and, where offsets are given, is the text at
its offsets, the audio is readable, clip ids are unique.

The dataset is identified by name, version and revision. Importing the same files again (same sha256)
changes nothing; other files under a name, version and revision already imported are refused.
"""

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils.text import slugify

from oncore import audio

from ..models import Clip, Dataset, EntitySpan, ImportProblem

REQUIRED_COLUMNS = (
    "audio",
    "transcript",
    "subset",
    "entities",
    "entity_types",
    "entity_tiers",
    "entity_offsets",
    "duration_s",
)
ID_COLUMNS = ("clip_id", "id")
TIERS = ("A", "B")
UNKNOWN = "unknown"
AUDIO_DIR = "benchmark/audio"
BATCH_ROWS = 64


class ImportRefused(Exception):
    """The files cannot be imported at all (missing, not the schema, conflicting with an earlier import)."""


@dataclass(frozen=True)
class ParsedSpan:
    index: int
    text: str
    type: str
    tier: str
    start: int | None
    end: int | None


@dataclass(frozen=True)
class ParsedRow:
    subset: str
    transcript: str
    duration_s: float
    audio_bytes: bytes
    audio_format: str
    spans: tuple[ParsedSpan, ...]


@dataclass
class ImportResult:
    dataset: Dataset
    unchanged: bool
    clips: int = 0
    spans: int = 0
    problems: list = field(default_factory=list)  # [(clip_id, reason)]


@dataclass(frozen=True)
class DatasetCard:
    name: str | None
    version: str | None
    revision: str | None


# ---------------------------------------------------------------- files and the dataset card


def parquet_files(path: Path) -> list[Path]:
    """The parquet files of a dataset: PATH itself, or PATH/data/test-*.parquet (or PATH/test-*.parquet)."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ImportRefused(f"There is no file or folder at {path}.")
    for pattern in ("data/test-*.parquet", "test-*.parquet", "data/*.parquet", "*.parquet"):
        files = sorted(path.glob(pattern))
        if files:
            return files
    raise ImportRefused(f"No parquet files in {path}: expected data/test-*.parquet.")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


_VERSION_LINE = re.compile(r"current version:\s*\**\s*v?([0-9A-Za-z][0-9A-Za-z._-]*)", re.IGNORECASE)
_HEX_COMMIT = re.compile(r"[0-9a-f]{40}")


def _front_matter(text: str) -> dict:
    """The simple `key: value` lines of a dataset card's YAML front matter (nested keys are ignored)."""
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    values = {}
    for line in text[3 : end if end > 0 else 0].splitlines():
        if line[:1].isspace() or ":" not in line:
            continue
        key, value = line.split(":", 1)
        value = value.strip().strip("'\"")
        if value:
            values[key.strip()] = value
    return values


def read_card(files: list[Path]) -> DatasetCard:
    """Name, version and revision from the dataset card next to the files, when there is one.

    Version: "Current version: **1.0**" in the README, or `version:` in its front matter.
    Revision: `revision:` in the front matter, or the commit that huggingface-cli recorded when it
    downloaded the first file."""
    first = files[0]
    root = first.parent.parent if first.parent.name == "data" else first.parent
    name = version = revision = None
    readme = root / "README.md"
    if readme.is_file():
        text = readme.read_text(encoding="utf-8", errors="replace")
        front = _front_matter(text)
        name = slugify(front.get("pretty_name", "")) or None
        version = front.get("version")
        if not version:
            match = _VERSION_LINE.search(text)
            version = match.group(1).rstrip(".") if match else None
        revision = front.get("revision")
    if not revision:
        metadata = (
            root
            / ".cache"
            / "huggingface"
            / "download"
            / first.relative_to(root).with_name(first.name + ".metadata")
        )
        if metadata.is_file():
            head = metadata.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0].strip()
            revision = head if _HEX_COMMIT.fullmatch(head) else None
    if not name:
        name = slugify(root.name) or None
    return DatasetCard(name, version, revision)


# ---------------------------------------------------------------- one row


def _json_list(value, column: str) -> list:
    if value is None:
        raise ValueError(f"{column} is missing")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{column} is not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(value, list):
        raise ValueError(f"{column} is not a JSON array")
    return value


def derive_clip_id(row: dict, file_stem: str, row_number: int) -> str:
    for column in ID_COLUMNS:
        value = row.get(column)
        if value not in (None, ""):
            return str(value)
    path = (row.get("audio") or {}).get("path") if isinstance(row.get("audio"), dict) else None
    if path:
        return Path(str(path)).stem or str(path)
    return f"{file_stem}-row{row_number}"


def _pair_offsets(entities, types, offsets, transcript) -> tuple[list, list[str]]:
    """(start, end) per entity from the offsets array, paired by text (and label) in order; and problems."""
    problems = []
    unused = []
    for position, item in enumerate(offsets):
        if not isinstance(item, dict):
            problems.append(f"entity_offsets[{position}] is not an object")
            continue
        start, end = item.get("start"), item.get("end")
        if start is None and end is None:
            continue
        if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start < end:
            problems.append(f"entity_offsets[{position}] has unusable offsets {start!r}-{end!r}")
            continue
        unused.append((position, item))
    pairs = []
    for index, (text, type_) in enumerate(zip(entities, types, strict=True)):
        choices = [entry for entry in unused if entry[1].get("text", text) == text]
        choice = next((entry for entry in choices if entry[1].get("label") in (None, type_)), None)
        choice = choice or (choices[0] if choices else None)
        if choice is None:
            pairs.append((None, None))
            continue
        unused.remove(choice)
        start, end = choice[1]["start"], choice[1]["end"]
        if transcript[start:end] != text:
            problems.append(
                f"span {index} {text!r} is not the transcript's text at offsets {start}-{end} "
                f"(which reads {transcript[start:end]!r})"
            )
        pairs.append((start, end))
    for position, item in unused:
        problems.append(f"entity_offsets[{position}] {item.get('text')!r} belongs to no entity in entities")
    return pairs, problems


def parse_row(row: dict) -> tuple[ParsedRow | None, list[str]]:
    """Check one parquet row against the contract: (the row, []) or (None, the reasons it breaks it)."""
    problems = []
    transcript = row.get("transcript")
    if not isinstance(transcript, str):
        problems.append("transcript is missing")
        transcript = ""
    subset = row.get("subset")
    if not isinstance(subset, str) or not subset.strip():
        problems.append("subset is missing")
    lists = {}
    for column in ("entities", "entity_types", "entity_tiers", "entity_offsets"):
        try:
            lists[column] = _json_list(row.get(column), column)
        except ValueError as exc:
            problems.append(str(exc))
    spans = []
    if len(lists) == 4:
        entities, types, tiers = lists["entities"], lists["entity_types"], lists["entity_tiers"]
        if not len(entities) == len(types) == len(tiers):
            problems.append(
                f"entities, entity_types and entity_tiers have different lengths "
                f"({len(entities)}, {len(types)}, {len(tiers)})"
            )
        elif not all(isinstance(v, str) and v for v in entities + types):
            problems.append("entities and entity_types must be non-empty strings")
        else:
            for index, (text, tier) in enumerate(zip(entities, tiers, strict=True)):
                if tier not in TIERS:
                    problems.append(f"span {index} {text!r} has tier {tier!r}, not A or B")
                if text not in transcript:
                    problems.append(f"span {index} {text!r} is not a substring of the transcript")
            pairs, offset_problems = _pair_offsets(entities, types, lists["entity_offsets"], transcript)
            problems.extend(offset_problems)
            spans = [
                ParsedSpan(index, text, type_, tier, start, end)
                for index, (text, type_, tier, (start, end)) in enumerate(
                    zip(entities, types, tiers, pairs, strict=True)
                )
            ]
    data = row.get("audio")
    raw = data.get("bytes") if isinstance(data, dict) else None
    info = None
    if not raw:
        problems.append("audio has no bytes")
    else:
        try:
            info = audio.probe(bytes(raw))
        except audio.AudioError as exc:
            problems.append(f"unreadable audio: {exc}")
    duration = row.get("duration_s")
    if duration is None and info is not None:
        duration = info.duration_s
    if not isinstance(duration, int | float) or not math.isfinite(duration) or duration <= 0:
        problems.append(f"duration_s {duration!r} is not a positive number of seconds")
    if problems:
        return None, problems
    return ParsedRow(
        subset=subset.strip(),
        transcript=transcript,
        duration_s=float(duration),
        audio_bytes=bytes(raw),
        audio_format=info.format.lower(),
        spans=tuple(spans),
    ), []


# ---------------------------------------------------------------- the import


def _store_audio(data: bytes, fmt: str) -> tuple[str, str]:
    """Save clip audio once under MEDIA_ROOT, named by its sha256; (storage name, sha256)."""
    digest = hashlib.sha256(data).hexdigest()
    ext = {"wav": "wav", "flac": "flac", "ogg": "ogg", "mpeg": "mp3", "mp3": "mp3"}.get(fmt, "bin")
    name = f"{AUDIO_DIR}/{digest[:2]}/{digest}.{ext}"
    if not default_storage.exists(name):
        saved = default_storage.save(name, ContentFile(data))
        if saved != name:  # a concurrent import saved it first
            default_storage.delete(saved)
    return name, digest


def _check_columns(schema_names, path: Path) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in schema_names]
    if missing:
        raise ImportRefused(
            f"{path.name} lacks the column(s) {', '.join(missing)}: it is not in the benchmark schema."
        )


def _describe_sources(files: list[Path]) -> list[dict]:
    """Each parquet file's name, sha256, size and row count; a file that is not readable parquet in the benchmark's
    schema refuses the import."""
    import pyarrow.parquet as pq

    sources = []
    for file in files:
        try:
            meta = pq.ParquetFile(file)
        except Exception as exc:
            raise ImportRefused(f"{file.name} is not a readable parquet file ({exc}).") from exc
        _check_columns(meta.schema_arrow.names, file)
        sources.append(
            {
                "name": file.name,
                "sha256": sha256_of(file),
                "bytes": file.stat().st_size,
                "rows": meta.metadata.num_rows,
            }
        )
    return sources


def _earlier_import(name: str, version: str, revision: str, sources: list[dict]) -> ImportResult | None:
    """The earlier import of these same files, unchanged (None when there is none); other files under a name,
    version and revision already imported are refused."""
    existing = Dataset.objects.filter(name=name, version=version, revision=revision).first()
    if existing is None:
        return None
    if [(s["name"], s["sha256"]) for s in existing.source_files] == [
        (s["name"], s["sha256"]) for s in sources
    ]:
        problems = list(existing.problems.values_list("clip_id", "reason"))
        return ImportResult(existing, True, existing.clip_count, existing.span_count, problems)
    raise ImportRefused(
        f"{name} version {version} revision {revision} was already imported from other files "
        f"({', '.join(s['name'] + ' ' + s['sha256'][:12] for s in existing.source_files)}). "
        "Name the new files' version or revision with --version / --revision."
    )


def _clip_of(dataset, file: Path, row: dict, row_number: int, seen: dict, result: ImportResult, out):
    """(the row's Clip, unsaved, and its parsed spans); or None for a row that breaks the contract, which is stored
    as an ImportProblem, counted in `result` and told to `out`. `seen` maps the clip ids met so far to where."""
    clip_id = derive_clip_id(row, file.stem, row_number)
    parsed, problems = parse_row(row)
    where = f"{file.name} row {row_number}"
    if clip_id in seen:
        problems = [f"clip id {clip_id!r} is used twice (first at {seen[clip_id]})", *problems]
        parsed = None
    else:
        seen[clip_id] = where
    if parsed is None:
        reason = "; ".join(problems)
        ImportProblem.objects.create(
            dataset=dataset, clip_id=clip_id, source_file=file.name, source_row=row_number, reason=reason
        )
        result.problems.append((clip_id, reason))
        if out:
            out(f"excluded clip {clip_id} ({where}): {reason}")
        return None
    stored, digest = _store_audio(parsed.audio_bytes, parsed.audio_format)
    clip = Clip(
        dataset=dataset,
        clip_id=clip_id,
        subset=parsed.subset,
        transcript=parsed.transcript,
        duration_s=parsed.duration_s,
        audio=stored,
        audio_sha256=digest,
        source_file=file.name,
        source_row=row_number,
    )
    return clip, parsed.spans


def _write_batch(clips: list, spans_of: list, result: ImportResult) -> None:
    """One insert of a batch's clips, then one of their spans."""
    created = Clip.objects.bulk_create(clips)
    spans = [
        EntitySpan(clip=clip, index=s.index, text=s.text, type=s.type, tier=s.tier, start=s.start, end=s.end)
        for clip, parsed_spans in zip(created, spans_of, strict=True)
        for s in parsed_spans
    ]
    EntitySpan.objects.bulk_create(spans)
    result.clips += len(created)
    result.spans += len(spans)


def _import_file(dataset, file: Path, seen: dict, result: ImportResult, out) -> None:
    """A parquet file's rows, read and written BATCH_ROWS at a time."""
    import pyarrow.parquet as pq

    row_number = 0
    for batch in pq.ParquetFile(file).iter_batches(batch_size=BATCH_ROWS):
        clips, spans_of = [], []
        for row in batch.to_pylist():
            found = _clip_of(dataset, file, row, row_number, seen, result, out)
            if found is not None:
                clips.append(found[0])
                spans_of.append(found[1])
            row_number += 1
        _write_batch(clips, spans_of, result)


def import_dataset(
    path, *, name: str | None = None, version: str | None = None, revision: str | None = None, out=None
) -> ImportResult:
    """Import the dataset at `path`; `out(message)` hears about each excluded row as it is met."""
    files = parquet_files(Path(path))
    card = read_card(files)
    name = name or card.name or "entity-benchmark"
    version = version or card.version or UNKNOWN
    revision = revision or card.revision or UNKNOWN
    sources = _describe_sources(files)
    earlier = _earlier_import(name, version, revision, sources)
    if earlier is not None:
        return earlier

    with transaction.atomic():
        dataset = Dataset.objects.create(name=name, version=version, revision=revision, source_files=sources)
        result = ImportResult(dataset, False)
        seen: dict[str, str] = {}
        for file in files:
            _import_file(dataset, file, seen, result, out)
        dataset.clip_count = result.clips
        dataset.span_count = result.spans
        dataset.excluded_count = len(result.problems)
        dataset.save(update_fields=["clip_count", "span_count", "excluded_count"])
    return result
