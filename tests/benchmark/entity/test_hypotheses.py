import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmark.models import BenchmarkRun, Hypothesis

from .hypotheses import ALPHA, BETA, write_jsonl


def _cmd(*args):
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_it_imports_hypotheses_as_a_finished_run(dataset, tmp_path):
    path = write_jsonl(tmp_path / "alpha.jsonl", ALPHA, "alpha", "alpha-2026-01", formatting=True)

    out = _cmd(
        "benchmark_import_hypotheses", "--dataset", dataset.name, str(path), "--run-date", "2026-01-15"
    )

    run = BenchmarkRun.objects.get()
    assert (run.source, run.status, run.system_name, run.model, run.formatting) == (
        "imported",
        "done",
        "alpha",
        "alpha-2026-01",
        True,
    )
    assert (run.clips_total, run.clips_done, run.clips_failed) == (5, 5, 0)
    assert run.hypotheses.get(clip__clip_id="ml-0002").text == ALPHA[1]["hypothesis"]
    assert (
        f"Imported run {run.pk}: alpha (alpha-2026-01)" in out
        and "5 hypotheses, 0 clip(s) without a line" in out
    )
    assert "Ignored 1 line(s) for clips excluded at import: ml-0004" in out
    assert run.manifest["hypotheses_file"]["run_date"] == "2026-01-15"


def test_it_records_missing_and_null_hypotheses_as_failed_clips(dataset, tmp_path):
    path = write_jsonl(tmp_path / "beta.jsonl", BETA, "beta", "beta-1")

    out = _cmd("benchmark_import_hypotheses", "--dataset", dataset.name, str(path))

    run = BenchmarkRun.objects.get()
    assert (run.clips_done, run.clips_failed, run.formatting) == (3, 2, None)
    assert "1 clip(s) without a line" in out
    errors = dict(Hypothesis.objects.filter(status="failed").values_list("clip__clip_id", "error"))
    assert errors == {
        "ml-0003": "no line for this clip in beta.jsonl",
        "bf-0001": "the hypothesis is null in beta.jsonl",
    }


def test_it_changes_nothing_when_the_same_file_is_imported_again(dataset, tmp_path):
    path = write_jsonl(tmp_path / "alpha.jsonl", ALPHA, "alpha", "alpha-2026-01")
    _cmd("benchmark_import_hypotheses", "--dataset", dataset.name, str(path))

    out = _cmd("benchmark_import_hypotheses", "--dataset", dataset.name, str(path))

    assert (
        out.startswith("Unchanged:") and BenchmarkRun.objects.count() == 1 and Hypothesis.objects.count() == 5
    )


def test_it_refuses_a_file_with_bad_lines_and_says_which(dataset, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"clip_id": "ml-0001", "hypothesis": "x", "system": "a", "model": "m"}),
                "{not json",
                json.dumps({"clip_id": "ml-0001", "hypothesis": "again", "system": "a", "model": "m"}),
                json.dumps({"clip_id": "nope-1", "hypothesis": "x", "system": "a", "model": "m"}),
                json.dumps({"clip_id": "ml-0002", "hypothesis": "x", "system": "b", "model": "m"}),
                json.dumps({"clip_id": "bf-0001", "hypothesis": 3, "system": "a", "model": "m"}),
            ]
        )
        + "\n"
    )

    with pytest.raises(CommandError) as caught:
        _cmd("benchmark_import_hypotheses", "--dataset", dataset.name, str(path))

    message = str(caught.value)
    assert "bad.jsonl was not imported" in message
    assert "line 2: not JSON" in message
    assert "line 3: clip ml-0001 appears twice" in message
    assert "line 6: hypothesis for bf-0001 must be a string or null" in message
    assert "the file names 2 systems (a, b)" in message
    assert "1 clip id(s) are not in entity-benchmark-fixture 0.1-fixture: nope-1" in message
    assert not BenchmarkRun.objects.exists()


def test_it_takes_the_system_and_model_from_options_when_lines_lack_them(dataset, tmp_path):
    path = tmp_path / "bare.jsonl"
    path.write_text(json.dumps({"clip_id": "ml-0001", "hypothesis": "the epa"}) + "\n")

    with pytest.raises(CommandError, match="no system name"):
        _cmd("benchmark_import_hypotheses", "--dataset", dataset.name, str(path))
    _cmd(
        "benchmark_import_hypotheses",
        "--dataset",
        dataset.name,
        str(path),
        "--system",
        "vendor-x",
        "--model",
        "x-2",
        "--formatting",
        "off",
    )

    assert BenchmarkRun.objects.values_list("system_name", "model", "formatting").get() == (
        "vendor-x",
        "x-2",
        False,
    )


def test_it_names_the_datasets_there_are_when_one_is_unknown(dataset, tmp_path):
    with pytest.raises(
        CommandError, match="No imported dataset named 'nope'. Imported: entity-benchmark-fixture"
    ):
        _cmd("benchmark_import_hypotheses", "--dataset", "nope", str(tmp_path / "x.jsonl"))
