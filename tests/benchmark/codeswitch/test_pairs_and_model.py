"""Language pairs with region subtags, and the two-part model fitted on code-switched utterances only with the
predictors the public benchmark names."""

import json
from pathlib import Path

import pytest
from django.urls import reverse

from benchmark.codeswitch import report as cs_report
from benchmark.codeswitch import runs as cs_runs
from benchmark.codeswitch.importer import import_codeswitch, languages_of
from benchmark.codeswitch.metrics import split_pair
from benchmark.models import CsImportProblem, CsUtterance

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "codeswitch" / "fixture.jsonl"


def with_canadian_french(tmp_path) -> Path:
    """The fixture, plus its French utterance again as a Canadian French pair (same audio, by absolute path)."""
    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        if "audio" in row:
            row["audio"] = str((FIXTURE.parent / row["audio"]).resolve())
    canadian = []
    for row in rows:
        if row.get("id") == "cs-fr-01":
            copy = {**row, "id": "cs-frca-01", "pair": "fr-CA-en"}
            if "languages" in copy:  # plain "fr" tags name the pair's Canadian French
                copy["languages"] = ["fr" if t == "fr" else t for t in copy["languages"]]
            canadian.append(copy)
    untagged = {**canadian[0], "id": "cs-frca-02", "pair": "fr-ca/en"}
    untagged.pop("languages", None)
    wrong = {**canadian[0], "id": "cs-frca-03", "pair": "fr-ca-en"}  # ambiguous: which part is the region?
    path = tmp_path / "with-fr-ca.jsonl"
    path.write_text(
        "\n".join(json.dumps(r) for r in rows + canadian + [untagged, wrong]) + "\n", encoding="utf-8"
    )
    return path


def test_it_reads_pairs_with_region_subtags():
    assert split_pair("fr-CA-en") == ("fr-CA", "en")
    assert split_pair("fr-ca/en") == split_pair(["fr_CA", "EN"]) == ("fr-CA", "en")
    assert split_pair("ES-EN") == ("es", "en")
    for bad in ("fr-ca-en", "fr-FR", "en-US-en", "french-english"):
        with pytest.raises(ValueError, match="fr-CA-en"):
            split_pair(bad)


@pytest.mark.django_db
def test_it_keeps_canadian_french_english_apart_from_french_english(tmp_path, endpoint_transcriber):
    result = import_codeswitch(with_canadian_french(tmp_path), name="fr-ca")
    dataset = result.dataset
    pairs = set(CsUtterance.objects.filter(dataset=dataset).values_list("pair", flat=True))
    assert pairs == {"es-en", "fr-en", "fr-CA-en"}
    tagged = CsUtterance.objects.get(dataset=dataset, utterance_id="cs-frca-01", condition="code_switched")
    assert tagged.matrix_language == "fr-CA" and set(tagged.tags) == {"fr-CA", "en"}
    assert languages_of(tagged) == ["fr-CA", "en"]
    detected = CsUtterance.objects.get(dataset=dataset, utterance_id="cs-frca-02")
    assert detected.tags_source == "lingua" and set(detected.tags) <= {"fr-CA", "en", None}
    assert "fr-CA" in detected.tags and "en" in detected.tags
    problem = CsImportProblem.objects.get(dataset=dataset, utterance_id="cs-frca-03")
    assert "fr-CA-en" in problem.reason

    run = cs_runs.create_run(dataset, endpoint_transcriber("fixed", text="Bonjour"), language_hint=True)
    cs_runs.execute_run(run.pk)
    rows = {row.pair: row for row in cs_report.dataset_report(dataset).rows}
    assert {"fr-en", "fr-CA-en"} <= set(rows)
    assert set(rows["fr-CA-en"].per_language) == {"fr-CA", "en"}
    assert set(rows["fr-en"].per_language) == {"fr", "en"}


@pytest.mark.django_db
def test_it_fits_the_two_part_model_on_code_switched_clips_only_and_says_its_n(
    admin_client, endpoint_transcriber
):
    dataset = import_codeswitch(FIXTURE, name="cs-fixture").dataset
    run = cs_runs.create_run(dataset, endpoint_transcriber("fixed", text="hola"), language_hint=False)
    cs_runs.execute_run(run.pk)

    report = cs_report.dataset_report(dataset)
    es = next(row for row in report.rows if row.pair == "es-en")
    assert es.clips == {"code_switched": 2, "monolingual_matrix": 2, "monolingual_english": 2}
    assert es.model.n == 2  # the two code-switched clips, not all six
    page = admin_client.get(reverse("cs:report", args=[dataset.pk])).content.decode()
    model = page[page.index("What predicts errors") :]
    assert '<th scope="col">Code-switched clips</th>' in model and "<td>es-en</td><td>2</td>" in model
    assert cs_report.report_json(report)["rows"][0]["two_part_model"]["n"] == 2

    csv_page = admin_client.get(reverse("cs:report_csv", args=[dataset.pk]))
    header = b"".join(csv_page.streaming_content if csv_page.streaming else [csv_page.content]).decode()
    assert "code_mixing_index" in header and "gamback_das_index_descriptive" in header
