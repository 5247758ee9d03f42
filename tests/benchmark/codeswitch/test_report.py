"""The code-switching report page (admins only), its pictures and downloads, and per-language WER of a bank
whose label names several languages."""

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.urls import reverse

from benchmark.codeswitch import langtag
from benchmark.codeswitch import pictures as cs_pictures
from benchmark.codeswitch import report as cs_report
from benchmark.codeswitch import runs as cs_runs
from benchmark.codeswitch.importer import import_codeswitch
from tests.benchmark.codeswitch.test_runs import HEARD, cs_responder

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "codeswitch" / "fixture.jsonl"


@pytest.fixture
def transcribed(db, endpoint_transcriber):
    """The fixture transcribed by an endpoint that always hears the first code-switched utterance."""
    dataset = import_codeswitch(FIXTURE, name="cs-fixture").dataset
    run = cs_runs.create_run(dataset, endpoint_transcriber("fixed", text=HEARD), language_hint=False)
    cs_runs.execute_run(run.pk)
    return dataset, run


def test_it_shows_the_report_with_its_pictures_and_says_the_judge_is_not_configured(
    transcribed, admin_client, monkeypatch
):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    dataset, run = transcribed

    page = admin_client.get(reverse("cs:report", args=[dataset.pk])).content.decode()

    assert "endpoint-fixed (auto-detect)" in page and "es-en" in page and "fr-en" in page
    assert page.count("<svg") == 3 and "Per-language WER, code-switched clips" in page
    assert "Code-switching cost: mean delta WER (points)" in page
    assert "Judge not configured" in page and "not judged" not in page
    assert "bad-condition: condition &#x27;bilingual&#x27; is not one of" in page
    es = next(row for row in cs_report.dataset_report(dataset).rows if row.pair == "es-en")
    assert es.per_language["en"] < es.per_language["es"]  # HEARD matches cs-es-01, whose English is short
    assert es.cost_vs_matrix.paired == 2 and es.cost_vs_matrix.mean_delta < 0


def test_it_is_for_admins_only(transcribed, member_client):
    dataset, _ = transcribed
    assert member_client.get(reverse("cs:report", args=[dataset.pk])).status_code == 403
    assert member_client.get(reverse("cs:report_csv", args=[dataset.pk])).status_code == 403
    assert member_client.get(reverse("cs:datasets")).status_code == 403


def test_it_lists_datasets(transcribed, admin_client):
    page = admin_client.get(reverse("cs:datasets")).content.decode()
    assert "cs-fixture" in page and reverse("cs:report", args=[transcribed[0].pk]) in page


def test_it_shows_semantic_wer_and_answer_error_rate_once_judged(transcribed, admin_client, llm_server):
    from benchmark.codeswitch import judge as cs_judge

    llm_server.responder = cs_responder
    dataset, run = transcribed
    cs_judge.judge_run(run.pk)

    page = admin_client.get(reverse("cs:report", args=[dataset.pk])).content.decode()

    assert "Judge not configured" not in page
    row = next(row for row in cs_report.dataset_report(dataset).rows if row.pair == "es-en")
    assert row.semantic.clips == 2 and row.semantic.zero_share == 0.5  # cs-es-01 heard right, cs-es-02 not
    assert row.answers.rate == pytest.approx(0.0)  # the fixed text says "laptop": every answer graded right
    assert "50.0%" in page


def test_it_downloads_one_csv_row_per_clip_and_every_figure_as_json(transcribed, admin_client, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    dataset, run = transcribed

    response = admin_client.get(reverse("cs:report_csv", args=[dataset.pk]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    data = json.loads(admin_client.get(reverse("cs:report_json", args=[dataset.pk])).content)

    assert len(rows) == 9
    row = next(r for r in rows if r["utterance_id"] == "cs-es-01" and r["condition"] == "code_switched")
    # JSON key order differs between databases (PostgreSQL's jsonb sorts keys): compare the parsed value.
    assert (row["wer"], json.loads(row["per_language_wer"]), row["switch_points"]) == (
        "0.0",
        {"es": 0.0, "en": 0.0},
        "4",
    )
    assert row["hypothesis"] == HEARD and row["semantic_wer"] == ""
    assert data["dataset"]["excluded"] == 3 and len(data["excluded"]) == 3
    es = next(r for r in data["rows"] if r["pair"] == "es-en")
    assert es["semantic_wer"] == "judge not configured" and es["clips"]["code_switched"] == 2
    assert set(es["per_language_wer"]) == {"es", "en"}
    assert es["two_part_model"]["any_error"]["part"].startswith("any error")


def test_it_draws_escaped_svg():
    svg = cs_pictures.heat_map_svg("<WER>", ["a & b"], ["en"], [[0.25]])
    assert "&lt;WER&gt;" in svg and "a &amp; b" in svg and "25%" in svg
    bars = cs_pictures.cost_bars_svg("cost", ["x"], {"vs English": [-0.1], "vs matrix": [None]})
    assert "-10.0" in bars and "no pairs" in bars


def test_it_detects_the_languages_texts_span_whatever_they_are_labelled():
    english = [
        "Hi, I'd like to book a table for four at eight thirty on Friday.",
        "Krzysztof Nowak, extension two.",
    ]
    assert langtag.detect_languages(english) == ["en"]  # a name's mis-tagged words make no run of four
    mixed = english + ["Hola, necesito ayuda porque my laptop keeps crashing y no puedo abrir el email."]
    assert set(langtag.detect_languages(mixed)) == {"en", "es"}
    assert set(langtag.detect_languages(english + ["je voudrais réserver une table pour demain"])) == {
        "en",
        "fr",
    }


def test_it_gives_per_language_wer_when_a_banks_lines_span_two_languages_whatever_its_label(org, tenant):
    from oncore.calls.models import Assistant, Call, Line
    from oncore.transcribers.models import Transcriber
    from transcriber_tests import queries
    from transcriber_tests.models import Bank, Candidate, Flag, Score

    bank = Bank.objects.create(organization=org, name="Desk", language_label="English")
    bilingual_label = Bank.objects.create(
        organization=org, name="Bilingual", language_label="English + French"
    )
    stt = Transcriber.objects.create(slug="t", provider="generic", model="m", display_name="T")
    for b in (bank, bilingual_label):
        Candidate.objects.create(bank=b, transcriber=stt, position=0)
    assistant = Assistant.objects.create(tenant=tenant, name="Desk", instructions="Help.")
    call = Call.objects.create(
        tenant=tenant, assistant=assistant, started_at=datetime.now(UTC), recorded=False
    )
    said = [
        (bank, "je voudrais réserver une table pour demain", "je voudrais réserver une table pour demain"),
        (bank, "my laptop keeps crashing every morning", "my lap keeps crashing every morning"),
        (bilingual_label, "my laptop keeps crashing every morning", "my laptop keeps crashing every morning"),
    ]
    for k, (b, expected, heard) in enumerate(said):
        line = Line.objects.create(
            call=call, position=k, speaker="caller", text=heard, start_s=k, end_s=k + 1
        )
        flag = Flag.objects.create(organization=org, line=line, bank=b, expected_text=expected)
        Score.objects.create(
            flag=flag, transcriber=stt, hypothesis=heard, wer=0.0, normalizer_version="1", source="candidate"
        )

    assert queries.bank_language_wer(bank, 30, transcriber_id=stt.pk) == {
        "fr": (0.0, 7),
        "en": (pytest.approx(1 / 6), 6),
    }
    assert queries.bank_language_wer(bilingual_label, 30) is None  # its lines are all English


def test_it_builds_the_report_in_a_fixed_number_of_queries(transcribed, django_assert_max_num_queries):
    dataset, _ = transcribed
    with django_assert_max_num_queries(3):
        report = cs_report.dataset_report(dataset, fit_models=False)
    assert len(report.rows) == 2
