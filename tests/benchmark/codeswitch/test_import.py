"""Importing the code-switched fixture: clips, tags from the data or detected, bad lines, idempotence."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmark.models import CsDataset, CsImportProblem, CsUtterance

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "codeswitch" / "fixture.jsonl"


def _import(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("import_codeswitch", str(FIXTURE), "--name", "cs-fixture", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_it_imports_clips_with_their_tags_and_reports_bad_lines(tmp_path):
    out, err = _import()

    assert (
        "Imported cs-fixture: 9 clips, 1 with word languages detected by lingua, 3 line(s) excluded." in out
    )
    assert "(bad-tags): `languages` must give one tag per word" in err
    assert "(bad-condition): condition 'bilingual' is not one of" in err
    assert "(bad-audio): audio file audio/missing.flac not found" in err
    dataset = CsDataset.objects.get()
    assert (dataset.utterance_count, dataset.excluded_count) == (9, 3)
    assert set(CsImportProblem.objects.values_list("utterance_id", flat=True)) == {
        "bad-tags",
        "bad-condition",
        "bad-audio",
    }
    cs = CsUtterance.objects.get(utterance_id="cs-es-01", condition="code_switched")
    assert (cs.tags_source, cs.switch_points, cs.matrix_language) == ("data", 4, "es")
    assert cs.cmi == pytest.approx(100 * (16 - 11 + 4) / 32)
    assert cs.audio.read()[:4] == b"fLaC"
    detected = CsUtterance.objects.get(utterance_id="cs-es-02", condition="code_switched")
    assert detected.tags_source == "lingua"
    assert detected.tags[5:7] == ["en", "en"]  # "pending approval"
    mono = CsUtterance.objects.get(utterance_id="cs-es-02", condition="monolingual_matrix")
    assert (mono.switch_points, mono.cmi) == (0, 0.0)


@pytest.mark.django_db
def test_it_changes_nothing_when_the_same_file_is_imported_again():
    _import()
    ids = list(CsUtterance.objects.values_list("id", flat=True))

    out, _ = _import()

    assert "Unchanged: cs-fixture was imported from this file" in out
    assert list(CsUtterance.objects.values_list("id", flat=True)) == ids


@pytest.mark.django_db
def test_it_refuses_another_file_under_the_same_name_unless_replaced(tmp_path):
    _import()
    changed = tmp_path / "fixture.jsonl"
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()[:3]
    changed.write_text("\n".join(lines).replace("audio/", str(FIXTURE.parent / "audio") + "/") + "\n")

    with pytest.raises(CommandError, match="A different file was imported as 'cs-fixture'"):
        call_command("import_codeswitch", str(changed), "--name", "cs-fixture", stdout=io.StringIO())
    call_command("import_codeswitch", str(changed), "--name", "cs-fixture", "--replace", stdout=io.StringIO())

    assert CsUtterance.objects.count() == 3
