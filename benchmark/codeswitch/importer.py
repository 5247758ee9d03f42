"""Import a code-switched dataset from a JSONL file (the format is in docs/codeswitch.md).

    result = import_codeswitch(Path("fixtures/codeswitch/fixture.jsonl"), name="cs-fixture")

One line per audio clip: an utterance id in one condition. A line that breaks the format is left out and
stored as a CsImportProblem with its line number, utterance id and reason; the other lines import.
Word language tags come from the line's `languages` when given, else from
benchmark.codeswitch.langtag.tag_words over the languages of the clip (both of the pair when
code-switched); switch points and the Code-Mixing Index are computed once here from those tags.

Importing the same file (same sha256) under the same name again changes nothing. A different file under a
name already imported is refused unless replace=True, which deletes the old dataset, its runs included.
"""

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from django.core.files.base import ContentFile
from django.db import transaction

from oncore import audio

from ..models import CsDataset, CsImportProblem, CsUtterance
from .langtag import tag_words
from .metrics import base_language, canonical_tag, gamback_das_index, split_pair, switch_points

CONDITIONS = [c for c, _ in CsUtterance.CONDITIONS]


class ImportRefused(Exception):
    """The file cannot be imported at all."""


@dataclass
class ImportResult:
    dataset: CsDataset
    unchanged: bool
    utterances: int = 0
    detected_tags: int = 0
    problems: list = field(default_factory=list)  # [(line, utterance id, reason)]


@dataclass(frozen=True)
class ParsedLine:
    utterance_id: str
    pair: str
    matrix_language: str
    condition: str
    reference: str
    tags: list | None
    audio_bytes: bytes
    audio_suffix: str
    duration_s: float


class BadLine(Exception):
    def __init__(self, utterance_id: str, reason: str):
        super().__init__(reason)
        self.utterance_id = utterance_id
        self.reason = reason


def _parse(raw: str, folder: Path, seen: set) -> ParsedLine:
    try:
        row = json.loads(raw)
    except ValueError as exc:
        raise BadLine("", f"not JSON ({exc.msg})") from None
    if not isinstance(row, dict):
        raise BadLine("", "not a JSON object")
    uid = row.get("id")
    if not isinstance(uid, str) or not uid.strip():
        raise BadLine("", "no utterance id: give `id` as a non-empty string")
    uid = uid.strip()
    try:
        matrix, embedded = split_pair(row.get("pair") or "")
    except ValueError as exc:
        raise BadLine(uid, str(exc)) from None
    pair = f"{matrix}-{embedded}"
    condition = row.get("condition")
    if condition not in CONDITIONS:
        raise BadLine(uid, f"condition {condition!r} is not one of {', '.join(CONDITIONS)}")
    if (uid, condition) in seen:
        raise BadLine(uid, f"{uid} in condition {condition} appears twice")
    reference = row.get("reference")
    if not isinstance(reference, str) or not reference.strip():
        raise BadLine(uid, "no reference text")
    tags = row.get("languages")
    words = reference.split()
    if tags is not None:
        if not isinstance(tags, list) or len(tags) != len(words):
            count = len(tags) if isinstance(tags, list) else "not a list of"
            raise BadLine(
                uid,
                f"`languages` must give one tag per word: the reference has {len(words)} words, {count} tags",
            )
        tags = [None if t is None else _pair_tag(t, (matrix, embedded)) for t in tags]
        wrong = sorted(
            {str(t) for t, known in zip(row["languages"], tags, strict=True) if t is not None and not known}
        )
        if wrong:
            raise BadLine(uid, f"`languages` holds {', '.join(wrong)}, not a language of the pair {pair}")
    audio_path = row.get("audio")
    if not isinstance(audio_path, str) or not audio_path:
        raise BadLine(uid, "no audio path")
    path = (folder / audio_path).resolve()
    if not path.is_file():
        raise BadLine(uid, f"audio file {audio_path} not found next to the JSONL file")
    data = path.read_bytes()
    try:
        info = audio.probe(path, label=uid)
    except audio.AudioError as exc:
        raise BadLine(uid, f"audio {audio_path} cannot be read: {exc}") from None
    return ParsedLine(
        uid, pair, matrix, condition, reference.strip(), tags, data, path.suffix.lower(), info.duration_s
    )


def _pair_tag(tag, pair: tuple[str, str]) -> str:
    """The pair's tag a word's tag names ("fr-ca" or plain "fr" in a fr-CA pair), or "" when it names none."""
    try:
        tag = canonical_tag(tag)
    except ValueError:
        return ""
    if tag in pair:
        return tag
    same_language = [code for code in pair if base_language(code) == tag]
    return same_language[0] if len(same_language) == 1 else ""


def languages_of(clip) -> list[str]:
    """The languages spoken in a clip (a ParsedLine or a CsUtterance): both of the pair when code-switched, else
    the one."""
    if clip.condition == CsUtterance.CODE_SWITCHED:
        return list(split_pair(clip.pair))
    return [clip.matrix_language if clip.condition == CsUtterance.MONO_MATRIX else "en"]


def tags_for(line: ParsedLine) -> tuple[list, str]:
    """The line's tags and where they came from."""
    if line.tags is not None:
        return line.tags, CsUtterance.DATA
    languages = languages_of(line)
    source = CsUtterance.LINGUA if len(languages) > 1 else CsUtterance.CONDITION
    return tag_words(line.reference.split(), languages), source


def import_codeswitch(path: Path, *, name: str | None = None, replace: bool = False) -> ImportResult:
    path = Path(path)
    if not path.is_file():
        raise ImportRefused(f"There is no file at {path}.")
    raw = path.read_bytes()
    sha = hashlib.sha256(raw).hexdigest()
    name = (name or path.stem).strip()
    existing = CsDataset.objects.filter(name=name).first()
    if existing is not None:
        if existing.source_sha256 == sha:
            return ImportResult(existing, True, existing.utterance_count)
        if not replace:
            raise ImportRefused(
                f"A different file was imported as {name!r} before. Import this one under another --name, "
                "or give --replace to delete the old dataset and its runs."
            )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportRefused(f"{path} is not UTF-8 text.") from None

    parsed: list[tuple[int, ParsedLine]] = []
    problems: list[tuple[int, str, str]] = []
    seen: set = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = _parse(line, path.parent, seen)
        except BadLine as bad:
            problems.append((number, bad.utterance_id, bad.reason))
            continue
        seen.add((item.utterance_id, item.condition))
        parsed.append((number, item))
    if not parsed:
        reasons = "; ".join(f"line {n}: {r}" for n, _, r in problems[:5])
        raise ImportRefused(f"No usable line in {path}. {reasons}".strip())

    tagged = [(number, item, *tags_for(item)) for number, item in parsed]  # lingua before the transaction
    with transaction.atomic():
        if existing is not None:
            existing.delete()
        dataset = CsDataset.objects.create(
            name=name,
            source_file=path.name,
            source_sha256=sha,
            utterance_count=len(tagged),
            excluded_count=len(problems),
        )
        for number, item, tags, source in tagged:
            digest = hashlib.sha256(item.audio_bytes).hexdigest()
            utterance = CsUtterance(
                dataset=dataset,
                utterance_id=item.utterance_id,
                pair=item.pair,
                matrix_language=item.matrix_language,
                condition=item.condition,
                reference=item.reference,
                tags=tags,
                tags_source=source,
                switch_points=switch_points(tags),
                cmi=gamback_das_index(tags),  # descriptive; the two-part model uses metrics.code_mixing_index
                audio_sha256=digest,
                duration_s=item.duration_s,
                line=number,
            )
            utterance.audio.save(f"{digest}{item.audio_suffix}", ContentFile(item.audio_bytes), save=False)
            utterance.save()
        CsImportProblem.objects.bulk_create(
            [CsImportProblem(dataset=dataset, line=n, utterance_id=uid, reason=r) for n, uid, r in problems]
        )
    detected = sum(source == CsUtterance.LINGUA for *_, source in tagged)
    return ImportResult(dataset, False, len(tagged), detected, problems)
