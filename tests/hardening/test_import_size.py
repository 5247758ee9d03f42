"""An import holds at most ONCORE_MAX_LINES_PER_IMPORT lines, is refused while it is read once it holds more, and
costs memory in proportion to its lines: lines are kept as dicts, not a model each, and written in batches
(bench/import_memory.py measures the largest import allowed)."""

import json
import os
import subprocess
import sys
import tracemalloc

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from oncore.calls import importer
from oncore.calls.models import Call, Line
from tests.fixtures import assert_error

pytestmark = pytest.mark.django_db


def calls_data(calls: int, lines: int) -> dict:
    return {
        "format": "oncore-calls/1",
        "tenants": [{"slug": "bistro", "name": "Bistro"}],
        "calls": [
            {
                "external_id": f"ext-{c}",
                "tenant": "bistro",
                "started_at": "2025-03-01T18:00:00+01:00",
                "recorded": False,
                "live_transcriber": {"name": "Old STT"},
                "lines": [
                    {"speaker": ("caller", "assistant")[i % 2], "text": f"Line {i} of call {c}."}
                    for i in range(lines)
                ],
            }
            for c in range(calls)
        ],
    }


def upload(data) -> SimpleUploadedFile:
    return SimpleUploadedFile("calls.json", json.dumps(data).encode(), content_type="application/json")


@pytest.fixture
def at_most(settings):
    def set_limit(lines: int) -> None:
        settings.ONCORE = {**settings.ONCORE, "MAX_LINES_PER_IMPORT": lines}

    return set_limit


def test_it_refuses_an_import_of_more_lines_than_allowed_naming_the_setting(api, org, at_most):
    at_most(5)
    error = assert_error(
        api.upload("/calls/import", {"file": upload(calls_data(2, 3))}), 400, "import_format_error"
    )
    assert error["message"] == (
        "calls.json: more than 5 lines; an import may have at most 5 lines (ONCORE_MAX_LINES_PER_IMPORT). "
        "Split it into several files."
    )
    assert not Call.objects.exists()
    data = calls_data(2, 3)
    data["calls"][1]["lines"].pop()
    assert api.upload("/calls/import", {"file": upload(data)}).json()["lines"] == 5


def test_it_stops_reading_a_file_once_it_holds_more_lines_than_allowed(org, tmp_path, at_most):
    """A file of 20 times the lines allowed is refused at the first line past the limit: it is never read
    whole, so a file too large costs no more than the largest import allowed."""
    at_most(1_000)
    text = json.dumps(calls_data(4, 5_000))
    error = pytest.raises(importer.ImportFormatError, importer.parse_json, text, "calls.json").value
    assert str(error).startswith("calls.json: more than 1,000 lines; an import may have at most 1,000 lines")
    data = importer.parse_json(json.dumps(calls_data(1, 1_000)), "calls.json")
    # Lines counted as written, whatever they hold, by the validator too (data read some other way).
    data["calls"].append({**data["calls"][0], "lines": [{}]})
    with pytest.raises(
        importer.ImportFormatError, match="1,001 lines; an import may have at most 1,000 lines"
    ):
        importer.validate(data, "calls.json")
    # Objects other than lines count too, four to a line allowed: 5,000 calls without lines are too many here.
    text = json.dumps({"format": "oncore-calls/1", "calls": [{"tenant": "t", "lines": []}] * 5_001})
    with pytest.raises(importer.ImportFormatError, match="more than 5,000 JSON objects"):
        importer.parse_json(text, "calls.json")


def test_it_imports_the_most_lines_allowed_in_memory_proportionate_to_them(org, tmp_path, at_most):
    at_most(10_000)
    (tmp_path / "calls.json").write_text(json.dumps(calls_data(2, 5_000)))
    tracemalloc.start()
    try:
        counts = importer.do_import_calls(tmp_path / "calls.json", org)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counts["lines"] == 10_000 and Line.objects.count() == 10_000
    # Measured on Python 3.11: about 690 bytes a line when written (the file's text, its parse, the validated
    # dicts, one batch of Line objects), where a model per line and every Line of a call at once took 1,090; 856
    # on the same code two releases later (this test alone), up to 940 inside the whole suite (tracemalloc counts
    # what the process's other threads allocate meanwhile).
    assert peak / 10_000 < 1_000, f"{peak / 10_000:,.0f} bytes a line"


def test_it_writes_calls_and_lines_in_batches(org, tmp_path, monkeypatch):
    """The calls of a batch are written together, then their lines: a few inserts, not three queries a call."""
    monkeypatch.setattr(importer, "BATCH_LINES", 300)
    (tmp_path / "calls.json").write_text(json.dumps(calls_data(60, 10)))
    inserts = {"calls_call": 0, "calls_line": 0}

    def count(execute, sql, params, many, context):
        for table in inserts:
            inserts[table] += sql.startswith(f'INSERT INTO "{table}"')
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        assert importer.do_import_calls(tmp_path / "calls.json", org)["lines"] == 600
    # Two batches of 30 calls; SQLite takes at most 999 values a statement, so a batch of lines may be two.
    assert inserts["calls_call"] == 2 and 2 <= inserts["calls_line"] <= 4 and Line.objects.count() == 600
    assert set(Call.objects.values_list("n_lines", flat=True)) == {10}


def test_it_refuses_to_start_with_a_line_limit_below_one():
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "oncore.settings", "DEBUG": "1"}
    environment.pop("DATABASE_URL", None)
    code = "import django; django.setup(); from oncore.config import config; print(config().max_lines_per_import)"

    def start(value: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=django_settings.BASE_DIR,
            env={**environment, "ONCORE_MAX_LINES_PER_IMPORT": value},
            capture_output=True,
            text=True,
            timeout=60,
        )

    refused = start("0")
    assert refused.returncode != 0 and "ONCORE_MAX_LINES_PER_IMPORT=0 must be at least 1." in refused.stderr
    assert start("").stdout.strip() == "50000" and start("20000").stdout.strip() == "20000"
