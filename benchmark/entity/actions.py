"""The entity benchmark's writes besides the dataset import (importer.py) and a run's own work (runs.py): scoring a
run (its SpanHit rows, summary and manifest), importing a hypotheses file as a finished run, and the run's output
files (the hits CSV, the summary and the manifest). Commands, tasks, pages and the API call these.

Scoring refuses to run while the matcher fails its self-test. Results are written under the
UniqueConstraint of SpanHit (run, span) with an upsert, so scoring twice gives the same rows.
"""

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from oncore.csv import FORMULA_START

from ..models import BenchmarkRun, Clip, Dataset, EntitySpan, Hypothesis, ImportProblem, SpanHit
from ..plural import counted
from . import matcher, scoring

MANIFEST_FORMAT = "oncore-entity-benchmark-manifest/1"
MATCHER_NOTE = (
    "benchmark.entity.matcher, written from the dataset card's description of matcher_v5; figures are not "
    "comparable with figures scored by matcher_v5 itself"
)
MAX_REPORTED_ERRORS = 20


class ScoringRefused(Exception):
    """Scoring that must not happen (the matcher fails its self-test, the run is unfinished...)."""


class HypothesesRefused(Exception):
    """A hypotheses file that cannot be imported; `errors` lists what is wrong, line by line."""

    def __init__(self, message: str, errors: list[str] | None = None):
        super().__init__(message)
        self.errors = errors or []


def span_key(clip_id: str, index: int) -> str:
    """A span's stable name across imports: the clip id and the span's position in it."""
    return f"{clip_id}#{index}"


# ---------------------------------------------------------------- scoring


def check_matcher() -> None:
    """Raise ScoringRefused naming every failing self-test case of the matcher."""
    failures = matcher.self_test()
    if failures:
        listed = "; ".join(str(f) for f in failures)
        raise ScoringRefused(
            f"The entity matcher ({matcher.MATCHER_VERSION}) fails {counted(len(failures), 'self-test case')}, "
            "so nothing "
            f"was scored: {listed}"
        )


def load_inputs(run) -> tuple[list[scoring.ClipRow], list[scoring.SpanRow], dict[str, int]]:
    """The run's clips with their hypotheses, every span of the dataset, and span key -> EntitySpan id."""
    texts = dict(Hypothesis.objects.filter(run=run, status=Hypothesis.DONE).values_list("clip_id", "text"))
    clips = [
        scoring.ClipRow(clip_id, subset, transcript, texts.get(pk))
        for pk, clip_id, subset, transcript in Clip.objects.filter(dataset_id=run.dataset_id)
        .order_by("id")
        .values_list("id", "clip_id", "subset", "transcript")
    ]
    spans, keys = [], {}
    for pk, clip_id, index, text, type_, tier in (
        EntitySpan.objects.filter(clip__dataset_id=run.dataset_id)
        .order_by("clip_id", "index")
        .values_list("id", "clip__clip_id", "index", "text", "type", "tier")
    ):
        key = span_key(clip_id, index)
        keys[key] = pk
        spans.append(scoring.SpanRow(key, clip_id, text, type_, tier))
    return clips, spans, keys


def score_run(run, *, tiers: str = "A", allow_incomplete: bool = False) -> scoring.Scorecard:
    """Score a run: store one SpanHit per span, and the summary and manifest on the run; return the card."""
    check_matcher()
    scoring.tier_set(tiers)
    pending = Hypothesis.objects.filter(run=run, status__in=[Hypothesis.QUEUED, Hypothesis.RUNNING]).count()
    if pending and not allow_incomplete:
        raise ScoringRefused(
            f"Run {run.pk} is not finished: {counted(pending, 'clip is', 'clips are')} still queued or running. "
            "Resume it "
            f"(manage.py benchmark_run --run {run.pk}) or score it as it stands with --allow-incomplete."
        )
    clips, spans, keys = load_inputs(run)
    card = scoring.score(clips, spans, tiers)
    now = timezone.now()
    with transaction.atomic():
        _store_hits(run, card, keys)
        run.scored_at = now
        run.matcher_version = card.matcher_version
        run.summary = scoring.summary_dict(card)
        run.manifest = build_manifest(run, card)
        run.save(update_fields=["scored_at", "matcher_version", "summary", "manifest"])
    return card


def _store_hits(run, card: scoring.Scorecard, keys: dict[str, int]) -> None:
    """One SpanHit per span under the (run, span) UniqueConstraint: missing rows are inserted (a row another
    scorer inserted first is kept), then rows whose outcome differs are updated."""
    version = card.matcher_version
    wanted = {keys[r.span_id]: r.found for r in card.spans}
    stored = dict(SpanHit.objects.filter(run=run).values_list("span_id", "found"))
    SpanHit.objects.bulk_create(
        [
            SpanHit(run_id=run.pk, span_id=pk, found=found, matcher_version=version)
            for pk, found in wanted.items()
            if pk not in stored
        ],
        ignore_conflicts=True,
        batch_size=500,
    )
    for value in (True, False):
        changed = [
            pk for pk, found in wanted.items() if found is value and stored.get(pk, value) is not value
        ]
        for start in range(0, len(changed), 500):
            SpanHit.objects.filter(run=run, span_id__in=changed[start : start + 500]).update(found=value)
    SpanHit.objects.filter(run=run).exclude(matcher_version=version).update(matcher_version=version)


def _iso(value) -> str | None:
    return value.isoformat() if value else None


def build_manifest(run, card: scoring.Scorecard) -> dict:
    """What a figure needs to be reproduced: dataset version and revision, matcher and normalizer versions,
    the system and its model string, the run date, the clips counted and the rows excluded at import."""
    dataset = run.dataset
    failed = Hypothesis.objects.filter(run=run, status=Hypothesis.FAILED).count()
    excluded = [
        {"clip_id": clip_id, "source_file": source_file, "source_row": source_row, "reason": reason}
        for clip_id, source_file, source_row, reason in ImportProblem.objects.filter(dataset=dataset)
        .order_by("id")
        .values_list("clip_id", "source_file", "source_row", "reason")
    ]
    previous = run.manifest or {}
    run_date = previous.get("hypotheses_file", {}).get("run_date") or _iso(run.started_at or run.created_at)
    selected = sum(1 for r in card.spans if r.tier in card.tiers)
    return {
        "format": MANIFEST_FORMAT,
        "run": {
            "id": run.pk,
            "system_name": run.system_name,
            "model": run.model,
            "formatting": run.formatting,
            "source": run.source,
            "transcriber": run.transcriber.slug if run.transcriber_id else None,
            "run_date": run_date,
            "started_at": _iso(run.started_at),
            "finished_at": _iso(run.finished_at),
            "status": run.status,
            "cost_usd": str(run.cost),
        },
        "dataset": {
            "name": dataset.name,
            "version": dataset.version,
            "revision": dataset.revision,
            "source_files": dataset.source_files,
            "imported_at": _iso(dataset.imported_at),
        },
        "scoring": {
            "scored_at": _iso(run.scored_at or timezone.now()),
            "tiers": card.tiers,
            "metric": "span-level entity accuracy; WER pooled over every transcribed clip",
            "matcher_version": card.matcher_version,
            "matcher": MATCHER_NOTE,
            "matcher_self_test_cases": len(getattr(matcher, "SELF_TEST_CASES", ())),
            "normalizer_version": card.normalizer_version,
        },
        "clips": {
            "in_dataset": card.coverage.clips,
            "transcribed": card.coverage.transcribed,
            "failed": failed,
            "without_hypothesis": card.coverage.without_hypothesis,
            "zero_entity_clips": card.coverage.zero_entity_clips,
        },
        "spans": {"in_dataset": len(card.spans), "scored": selected},
        "excluded": {
            "count": len(excluded),
            "note": "rows that broke the dataset's contract at import; not in any figure",
            "rows": excluded,
        },
        **({"hypotheses_file": previous["hypotheses_file"]} if "hypotheses_file" in previous else {}),
    }


# ---------------------------------------------------------------- outputs

HIT_COLUMNS = [
    "span_key",
    "clip_id",
    "subset",
    "span_index",
    "span",
    "type",
    "tier",
    "found",
    "transcribed",
    "hypothesis",
]


def hits_csv(results, hypotheses: dict[str, str | None]) -> str:
    """One row per SpanResult (a scorecard's spans: every tier): found 1/0, and what the system said."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HIT_COLUMNS)
    for r in results:
        index = str(r.span_id).rsplit("#", 1)[-1]
        writer.writerow(
            [
                r.span_id,
                r.clip_id,
                r.subset,
                index,
                r.text,
                r.type,
                r.tier,
                int(r.found),
                int(r.transcribed),
                hypotheses.get(r.clip_id) or "",
            ]
        )
    return buffer.getvalue()


# The columns a hits CSV must have to be compared with a run; the others are read when present.
HIT_COLUMNS_REQUIRED = ("span_key", "found")
_TRUE, _FALSE = {"1", "true", "yes"}, {"0", "false", "no", ""}


@dataclass(frozen=True)
class HitsFile:
    """A hits CSV read back: whether each span was found (by span_key), and what was heard per clip (clips
    with a `transcribed` of 1, when the file says)."""

    name: str
    found: dict
    heard: dict


def _cell(value) -> str:
    """A cell as written before the dashboard's CSV safety prefixed it ("'=x" back to "=x")."""
    value = (value or "").strip()
    return value[1:] if value.startswith("'") and value[1:2] in tuple(FORMULA_START) else value


def read_hits_csv(text: str, name: str) -> HitsFile:
    """Read a hits CSV (HIT_COLUMNS; written by `benchmark_score`, downloaded from a run's page, or a
    reference run's `.hits.csv` as the dataset card publishes them) for span_diff_with_file. Only span_key and
    found are required. ValueError naming the line and what is wrong."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    missing = [c for c in HIT_COLUMNS_REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError(
            f"{name} is not a hits CSV: it has no {' or '.join(missing)} column (the first line names the "
            f"columns: {', '.join(HIT_COLUMNS)})."
        )
    found, heard = {}, {}
    for number, row in enumerate(reader, start=2):
        key, value = _cell(row.get("span_key")), _cell(row.get("found")).lower()
        if not key:
            raise ValueError(f"{name}, line {number}: no span_key.")
        if value not in _TRUE | _FALSE:
            raise ValueError(f"{name}, line {number}: found is {row.get('found')!r}, not 1 or 0.")
        if key in found:
            raise ValueError(f"{name}, line {number}: span {key} is listed twice.")
        found[key] = value in _TRUE
        clip = _cell(row.get("clip_id")) or key.rsplit("#", 1)[0]
        if row.get("hypothesis") is not None and _cell(row.get("transcribed")).lower() not in _FALSE - {""}:
            heard.setdefault(clip, _cell(row.get("hypothesis")))
    if not found:
        raise ValueError(f"{name} holds no span.")
    return HitsFile(name, found, heard)


def run_hypotheses(run) -> dict[str, str | None]:
    return dict(
        Hypothesis.objects.filter(run=run, status=Hypothesis.DONE).values_list("clip__clip_id", "text")
    )


def write_outputs(run, card: scoring.Scorecard, out_dir: Path) -> dict[str, Path]:
    """Write <label>.hits.csv, <label>.summary.json and <label>.manifest.json; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "hits": out_dir / f"{run.label}.hits.csv",
        "summary": out_dir / f"{run.label}.summary.json",
        "manifest": out_dir / f"{run.label}.manifest.json",
    }
    paths["hits"].write_text(hits_csv(card.spans, run_hypotheses(run)), encoding="utf-8")
    paths["summary"].write_text(
        json.dumps(run.summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    paths["manifest"].write_text(
        json.dumps(run.manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return paths


# ---------------------------------------------------------------- importing hypotheses


@dataclass
class HypothesesImport:
    run: BenchmarkRun
    unchanged: bool
    lines: int = 0
    missing: int = 0  # clips of the dataset with no line in the file
    ignored_excluded: list = field(default_factory=list)  # clip ids excluded at import


def _parse_formatting(value, where: str, errors: list[str]):
    if value is None or isinstance(value, bool):
        return value
    errors.append(f"{where}: formatting must be true, false or absent, not {value!r}")
    return None


@dataclass
class _HypothesesFile:
    """What a hypotheses file's lines hold: clip id -> text (None: null in the file), and the systems, models and
    formatting settings they name."""

    rows: dict = field(default_factory=dict)
    systems: set = field(default_factory=set)
    models: set = field(default_factory=set)
    formats: set = field(default_factory=set)


def _read_lines(raw: bytes, errors: list[str]) -> _HypothesesFile:
    """Each JSONL line read and checked; a wrong line adds its problem to `errors` and is left out."""
    found = _HypothesesFile()
    for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{where}: not JSON ({exc.msg})")
            continue
        if not isinstance(item, dict):
            errors.append(f"{where}: not a JSON object")
            continue
        clip_id = item.get("clip_id")
        if not isinstance(clip_id, str | int) or clip_id == "":
            errors.append(f"{where}: clip_id is missing")
            continue
        clip_id = str(clip_id)
        text = item.get("hypothesis")
        if text is not None and not isinstance(text, str):
            errors.append(f"{where}: hypothesis for {clip_id} must be a string or null")
            continue
        if clip_id in found.rows:
            errors.append(f"{where}: clip {clip_id} appears twice")
            continue
        found.rows[clip_id] = text
        if item.get("system") not in (None, ""):
            found.systems.add(str(item["system"]))
        if item.get("model") not in (None, ""):
            found.models.add(str(item["model"]))
        if "formatting" in item:
            found.formats.add(_parse_formatting(item["formatting"], where, errors))
    return found


def _one_system(found: _HypothesesFile, system, model, formatting, errors: list[str]):
    """(system, model, formatting) of the run: as given, else the one the file's lines name; a file that names
    several without one given adds a problem to `errors`."""
    for label, values, given in (("system", found.systems, system), ("model", found.models, model)):
        if len(values) > 1 and not given:
            errors.append(
                f"the file names {len(values)} {label}s ({', '.join(sorted(values))}): one run is one "
                f"system; split the file or pass --{label}"
            )
    if len(found.formats) > 1:
        errors.append("formatting is true on some lines and false on others: import each setting separately")
    system = system or (next(iter(found.systems)) if len(found.systems) == 1 else None)
    if not system:
        errors.append('no system name: give each line a "system", or pass --system')
    model = model if model is not None else (next(iter(found.models)) if len(found.models) == 1 else "")
    if formatting is None and len(found.formats) == 1:
        formatting = next(iter(found.formats))
    return system, model, formatting


def _clips_named(dataset, rows: dict, errors: list[str]) -> tuple[dict, list]:
    """(clip id -> pk of the dataset's clips, the file's clip ids that were excluded at import); clip ids the
    dataset never had add a problem to `errors`."""
    known = dict(Clip.objects.filter(dataset=dataset).values_list("clip_id", "id"))
    excluded = set(ImportProblem.objects.filter(dataset=dataset).values_list("clip_id", flat=True))
    ignored = sorted(c for c in rows if c not in known and c in excluded)
    unknown = sorted(c for c in rows if c not in known and c not in excluded)
    if unknown:
        errors.append(
            f"{len(unknown)} clip id(s) are not in {dataset.name} {dataset.version}: "
            + ", ".join(unknown[:10])
            + (" ..." if len(unknown) > 10 else "")
        )
    return known, ignored


def _refuse_if_wrong(path: Path, rows: dict, errors: list[str]) -> None:
    if not rows and not errors:
        errors.append("the file holds no hypotheses")
    if errors:
        shown = errors[:MAX_REPORTED_ERRORS]
        more = len(errors) - len(shown)
        raise HypothesesRefused(
            f"{path.name} was not imported: {len(errors)} problem(s)"
            + (f", first {len(shown)} listed" if more else ""),
            shown,
        )


def _write_run(same_file: dict, path: Path, rows: dict, known: dict, ignored: list, run_date) -> BenchmarkRun:
    """The finished run and one hypothesis per clip of the dataset (failed where the file has none, or null)."""
    now = timezone.now()
    missing_error = f"no line for this clip in {path.name}"
    with transaction.atomic():
        run = BenchmarkRun.objects.create(
            **same_file,
            status=BenchmarkRun.DONE,
            started_at=now,
            finished_at=now,
            manifest={
                "hypotheses_file": {
                    "name": path.name,
                    "sha256": same_file["source_sha256"],
                    "lines": len(rows),
                    "run_date": run_date.isoformat() if run_date else None,
                    "ignored_for_excluded_clips": ignored,
                }
            },
        )
        hypotheses = []
        for clip_id, pk in known.items():
            if clip_id not in rows:
                hypotheses.append(
                    Hypothesis(run=run, clip_id=pk, status=Hypothesis.FAILED, error=missing_error)
                )
            elif rows[clip_id] is None:
                hypotheses.append(
                    Hypothesis(
                        run=run,
                        clip_id=pk,
                        status=Hypothesis.FAILED,
                        error=f"the hypothesis is null in {path.name}",
                    )
                )
            else:
                hypotheses.append(Hypothesis(run=run, clip_id=pk, status=Hypothesis.DONE, text=rows[clip_id]))
        Hypothesis.objects.bulk_create(hypotheses, batch_size=500)
        done = sum(1 for h in hypotheses if h.status == Hypothesis.DONE)
        run.clips_total, run.clips_done, run.clips_failed = len(hypotheses), done, len(hypotheses) - done
        run.save(update_fields=["clips_total", "clips_done", "clips_failed"])
    return run


def import_hypotheses(
    dataset,
    path,
    *,
    system: str | None = None,
    model: str | None = None,
    formatting: bool | None = None,
    run_date: date | None = None,
) -> HypothesesImport:
    """Import a JSONL file of hypotheses as a finished run. Each line: {"clip_id", "hypothesis", "system",
    "model", "formatting" (optional)}. The whole file is refused when any line is wrong; the same file
    imported again for the same system changes nothing."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise HypothesesRefused(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    errors: list[str] = []
    found = _read_lines(raw, errors)
    system, model, formatting = _one_system(found, system, model, formatting, errors)
    known, ignored = _clips_named(dataset, found.rows, errors)
    _refuse_if_wrong(path, found.rows, errors)

    same_file = dict(
        dataset=dataset,
        source=BenchmarkRun.IMPORTED,
        system_name=system,
        model=model,
        formatting=formatting,
        source_sha256=hashlib.sha256(raw).hexdigest(),
    )
    missing = len(known) - len(found.rows) + len(ignored)  # clips of the dataset with no line in the file
    existing = BenchmarkRun.objects.filter(**same_file).first()
    if existing is not None:
        return HypothesesImport(existing, True, len(found.rows), missing, ignored)
    run = _write_run(same_file, path, found.rows, known, ignored, run_date)
    return HypothesesImport(run, False, len(found.rows), missing, ignored)


# ---------------------------------------------------------------- lookups for commands and pages


def dataset_named(name: str, version: str | None = None, revision: str | None = None):
    """The latest import of a dataset by name (and version / revision when given); DoesNotExist names the
    datasets there are."""
    found = Dataset.objects.filter(name=name)
    if version:
        found = found.filter(version=version)
    if revision:
        found = found.filter(revision=revision)
    dataset = found.order_by("-imported_at", "-id").first()
    if dataset is None:
        there = ", ".join(
            f"{d.name} {d.version} ({d.revision})" for d in Dataset.objects.order_by("name", "id")
        )
        raise Dataset.DoesNotExist(
            f"No imported dataset named {name!r}"
            + (f" at version {version}" if version else "")
            + (f" revision {revision}" if revision else "")
            + (
                f". Imported: {there}."
                if there
                else ". Import one with manage.py import_entity_benchmark PATH."
            )
        )
    return dataset
