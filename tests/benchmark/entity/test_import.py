import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmark.entity.importer import import_dataset
from benchmark.models import Clip, Dataset, EntitySpan, ImportProblem
from tests.benchmark.conftest import FIXTURE


def _run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_imports_the_fixture_with_version_revision_and_files(db):
    out, err = _run("import_entity_benchmark", str(FIXTURE))

    dataset = Dataset.objects.get()
    assert (dataset.name, dataset.version, dataset.revision) == (
        "entity-benchmark-fixture",
        "0.1-fixture",
        "fixture-r1",
    )
    assert dataset.clip_count == 5 and dataset.span_count == 14 and dataset.excluded_count == 1
    assert [f["name"] for f in dataset.source_files] == ["test-00000-of-00001.parquet"]
    assert len(dataset.source_files[0]["sha256"]) == 64
    assert Clip.objects.filter(subset="MLCommons_TestPortion").count() == 3
    assert (
        "Imported entity-benchmark-fixture version 0.1-fixture revision fixture-r1: 5 clips, 14 spans" in out
    )
    assert "1 row(s) excluded" in out


def test_it_reports_the_broken_row_with_its_id_and_reason(db):
    out, err = _run("import_entity_benchmark", str(FIXTURE))

    problem = ImportProblem.objects.get()
    assert problem.clip_id == "ml-0004"
    assert "'shelbyville' is not a substring of the transcript" in problem.reason
    assert "excluded clip ml-0004" in err and "shelbyville" in err
    assert not Clip.objects.filter(clip_id="ml-0004").exists()


def test_it_keeps_clips_with_zero_entities_and_stores_offsets(db):
    import_dataset(FIXTURE)

    assert Clip.objects.get(clip_id="ml-0003").spans.count() == 0
    span = EntitySpan.objects.get(text="Apollo 11")
    assert (span.type, span.tier) == ("OTHER_NAMED", "A")
    assert span.clip.transcript[span.start : span.end] == "Apollo 11"
    clip = Clip.objects.get(clip_id="bf-0001")
    assert clip.audio.name.endswith(".wav") and clip.audio.size > 1000
    assert clip.duration_s == pytest.approx(6.5, abs=0.2)


def test_it_changes_nothing_when_the_same_files_are_imported_again(db):
    _run("import_entity_benchmark", str(FIXTURE))
    before = (list(Clip.objects.values_list("id", "clip_id")), Dataset.objects.get().imported_at)

    out, _ = _run("import_entity_benchmark", str(FIXTURE / "data" / "test-00000-of-00001.parquet"))

    assert out.startswith("Unchanged:") and "nothing was changed" in out and "excluded ml-0004" in out
    assert (list(Clip.objects.values_list("id", "clip_id")), Dataset.objects.get().imported_at) == before
    assert ImportProblem.objects.count() == 1 and EntitySpan.objects.count() == 14


def _write_parquet(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


def _row(clip_id, transcript, entities, types, tiers, audio_bytes, offsets=None):
    return {
        "id": clip_id,
        "audio": {"bytes": audio_bytes, "path": f"{clip_id}.wav"},
        "transcript": transcript,
        "subset": "MLCommons_TestPortion",
        "entities": json.dumps(entities),
        "entity_types": json.dumps(types),
        "entity_tiers": json.dumps(tiers),
        "entity_offsets": json.dumps(offsets if offsets is not None else []),
        "duration_s": 1.0,
    }


@pytest.fixture
def wav_bytes():
    import numpy as np

    from oncore import audio

    return audio.encode_wav(np.zeros(16000, dtype=np.float32), 16000)


def test_it_excludes_each_kind_of_contract_violation_with_its_reason(db, tmp_path, wav_bytes):
    rows = [
        _row("good", "the epa met", ["epa"], ["ORG"], ["A"], wav_bytes),
        _row("lengths", "the epa met", ["epa"], ["ORG", "GPE"], ["A"], wav_bytes),
        _row(
            "offsets",
            "the epa met",
            ["epa"],
            ["ORG"],
            ["A"],
            wav_bytes,
            offsets=[{"start": 0, "end": 3, "label": "ORG", "text": "epa"}],
        ),
        _row("audio", "the epa met", ["epa"], ["ORG"], ["A"], b"this is not audio"),
        _row("tier", "the epa met", ["epa"], ["ORG"], ["C"], wav_bytes),
        {**_row("json", "the epa met", [], [], [], wav_bytes), "entities": "[not json"},
        _row("good", "a second row with the same id", [], [], [], wav_bytes),
    ]
    _write_parquet(tmp_path / "ds" / "data" / "test-00000-of-00001.parquet", rows)

    result = import_dataset(tmp_path / "ds", name="broken", version="1", revision="abc")

    reasons = dict(result.problems)
    assert result.clips == 1 and list(Clip.objects.values_list("clip_id", flat=True)) == ["good"]
    assert "different lengths (1, 2, 1)" in reasons["lengths"]
    assert "not the transcript's text at offsets 0-3 (which reads 'the')" in reasons["offsets"]
    assert reasons["audio"].startswith("unreadable audio:")
    assert "tier 'C', not A or B" in reasons["tier"]
    assert "entities is not valid JSON" in reasons["json"]
    assert "used twice" in ImportProblem.objects.get(source_row=6).reason
    assert Dataset.objects.get().excluded_count == 6


def test_it_refuses_other_files_under_a_version_already_imported(db, tmp_path, wav_bytes):
    path = tmp_path / "one.parquet"
    _write_parquet(path, [_row("a", "the epa met", ["epa"], ["ORG"], ["A"], wav_bytes)])
    import_dataset(path, name="ds", version="1", revision="r")
    _write_parquet(path, [_row("b", "the epa met", ["epa"], ["ORG"], ["A"], wav_bytes)])

    with pytest.raises(CommandError, match="already imported from other files"):
        _run("import_entity_benchmark", str(path), "--name", "ds", "--version", "1", "--revision", "r")

    out, _ = _run("import_entity_benchmark", str(path), "--name", "ds", "--version", "1", "--revision", "r2")
    assert "Imported ds version 1 revision r2: 1 clips" in out


def test_it_refuses_files_that_are_not_in_the_schema(db, tmp_path):
    path = tmp_path / "other.parquet"
    _write_parquet(path, [{"text": "hello"}])

    with pytest.raises(CommandError, match="lacks the column"):
        _run("import_entity_benchmark", str(path))


def test_it_reads_version_from_the_card_and_revision_from_the_download_metadata(db, tmp_path, wav_bytes):
    root = tmp_path / "entity-transcription-benchmark"
    _write_parquet(
        root / "data" / "test-00000-of-00001.parquet",
        [_row("a", "the epa met", ["epa"], ["ORG"], ["A"], wav_bytes)],
    )
    (root / "README.md").write_text(
        "---\npretty_name: Entity Transcription Benchmark\n---\n\n## Versioning\n\nCurrent version: **1.0**\n"
    )
    metadata = root / ".cache" / "huggingface" / "download" / "data" / "test-00000-of-00001.parquet.metadata"
    metadata.parent.mkdir(parents=True)
    metadata.write_text('0123456789abcdef0123456789abcdef01234567\n"etag"\n1767225600.0\n')

    dataset = import_dataset(root).dataset

    assert (dataset.name, dataset.version, dataset.revision) == (
        "entity-transcription-benchmark",
        "1.0",
        "0123456789abcdef0123456789abcdef01234567",
    )


def test_it_says_unknown_when_nothing_names_the_version(db, tmp_path, wav_bytes):
    path = tmp_path / "loose.parquet"
    _write_parquet(path, [_row("a", "the epa met", ["epa"], ["ORG"], ["A"], wav_bytes)])

    dataset = import_dataset(path).dataset

    assert (dataset.version, dataset.revision) == ("unknown", "unknown")
