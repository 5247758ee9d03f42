"""What a person reads on the code-switching pages: one caution for figures over 100% on a few clips (with their
n), counts pluralized, "too little data" said once per section with what a figure needs, the packaged fixture
labelled with its clip count, and no misleading "n/a" or "0.0000"."""

import shutil
from pathlib import Path

import pytest
from django.template import Context, Template
from django.urls import reverse

from benchmark.codeswitch import runs as cs_runs
from benchmark.codeswitch.importer import import_codeswitch
from benchmark.codeswitch.judge import SEMANTIC_PROMPT_VERSION
from benchmark.models import CsJudgement, CsResult, CsUtterance

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "codeswitch" / "fixture.jsonl"
BABBLE = " ".join(["hallucinated"] * 40)  # more words than any reference of the fixture: WER over 100%


@pytest.fixture
def babbled(db, endpoint_transcriber, monkeypatch):
    """The packaged fixture (2 es-en and 1 fr-en utterances in three conditions) transcribed by an endpoint
    that hallucinates the same 40 words on every clip."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    dataset = import_codeswitch(FIXTURE, name="cs-fixture").dataset
    run = cs_runs.create_run(dataset, endpoint_transcriber("babble", text=BABBLE), language_hint=False)
    cs_runs.execute_run(run.pk)
    return dataset, run


def report_page(client, dataset) -> str:
    response = client.get(reverse("cs:report", args=[dataset.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_it_cautions_once_about_figures_over_100_percent_on_a_few_clips(babbled, admin_client):
    dataset, _ = babbled

    page = report_page(admin_client, dataset)

    caution = (
        "Figures over 100% come from n=1 and n=2 clips: one clip with many insertions (a hallucination) "
        "dominates; read them as a warning, not a rate."
    )
    assert page.count(caution) == 1
    assert page.count("a hallucination") == 1  # not repeated on every figure
    assert "<sup>*</sup> <small>(2 clips)</small>" in page  # each such figure keeps its n
    assert "<sup>*</sup> <small>(1 clip)</small>" in page


def test_it_gives_no_caution_when_no_figure_is_over_100_percent(db, admin_client, endpoint_transcriber):
    dataset = import_codeswitch(FIXTURE, name="cs-fixture").dataset
    run = cs_runs.create_run(dataset, endpoint_transcriber("silent", text=""), language_hint=False)
    cs_runs.execute_run(run.pk)

    assert "Figures over 100%" not in report_page(admin_client, dataset)


def test_it_pluralizes_clips_and_lines(babbled, admin_client):
    dataset, _ = babbled

    page = report_page(admin_client, dataset)
    listed = admin_client.get(reverse("cs:datasets")).content.decode()

    assert "(1 clip)" in page and "(2 clips)" in page
    assert "1 clips" not in page and "(s)" not in page
    assert "3 lines excluded at import" in page
    assert "of 9 clips" in listed


def test_it_says_too_little_data_once_for_the_two_part_model_with_what_a_fit_needs(babbled, admin_client):
    dataset, _ = babbled

    page = report_page(admin_client, dataset)
    model = page[page.index("What predicts errors") :]

    assert model.count("Too little data") == 1
    assert "needs at least 5 code-switched clips per system and language pair" in model
    assert "Parts marked — have fewer and are not fitted" in model
    assert "<td>endpoint-babble (auto-detect)</td><td>es-en</td><td>2</td><td>2</td>" in model
    assert "Of 2 utterances" not in model and "Of 1 utterances" not in model
    assert "linear combination" not in model  # notes of a fit that never happened


def test_it_labels_the_packaged_fixture_with_its_clip_count(babbled, admin_client, tmp_path):
    dataset, _ = babbled
    badge = "packaged fixture, 9 clips — not the full benchmark"

    assert badge in report_page(admin_client, dataset)
    assert badge in admin_client.get(reverse("cs:datasets")).content.decode()
    assert admin_client.get(reverse("cs:report_json", args=[dataset.pk])).json()["dataset"][
        "packaged_fixture"
    ]

    copy = tmp_path / "mine.jsonl"  # the same clips in a file of one's own: not the packaged fixture
    copy.write_text(FIXTURE.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    shutil.copytree(FIXTURE.parent / "audio", tmp_path / "audio")
    own = import_codeswitch(copy, name="mine").dataset
    assert not own.is_fixture and "packaged fixture" not in report_page(admin_client, own)


def test_it_marks_a_language_outside_a_rows_pair_as_not_spoken(babbled, admin_client):
    dataset, _ = babbled

    page = report_page(admin_client, dataset)

    assert "endpoint-babble (auto-detect) · es-en, fr: not spoken in this pair" in page  # the heat map
    assert "—: the language is not spoken in that row's pair." in page


def test_it_cautions_about_a_semantic_wer_over_100_percent_and_pluralizes_its_clips(babbled, admin_client):
    dataset, run = babbled
    fr = CsResult.objects.get(
        run=run, utterance__pair="fr-en", utterance__condition=CsUtterance.CODE_SWITCHED
    )
    CsJudgement.objects.create(
        result=fr, kind=CsJudgement.SEMANTIC, prompt_version=SEMANTIC_PROMPT_VERSION, errors=40, total=12
    )

    page = report_page(admin_client, dataset)
    judged = page[page.index("Semantic WER and answer error rate") : page.index("What predicts errors")]

    assert "333.3%<sup>*</sup> <small>(1 clip)</small>" in judged
    assert judged.count("Figures over 100% come from n=1 clip:") == 1


def test_it_never_writes_a_p_value_as_zero():
    template = Template("{% load benchmark_tags %}{{ tiny|p_value }} {{ usual|p_value }}")

    assert (
        template.render(Context({"tiny": 3e-9, "usual": 0.04321})) == "&lt; 0.0001 0.0432"
    )  # "< 0.0001" on the page


def _row(system: str, model, clips: int):
    from benchmark.codeswitch.metrics import ErrorLocation, SwitchingCost
    from benchmark.codeswitch.report import CONDITIONS, Row

    return Row(
        run_id=1, label=f"{system} (auto-detect)", system=system, language_hint=False, pair="es-en",
        clips=dict.fromkeys(CONDITIONS, clips), failed=0, wer=dict.fromkeys(CONDITIONS, 0.2), per_language={},
        cost_vs_matrix=SwitchingCost(0.01, clips, 0), cost_vs_english=SwitchingCost(0.02, clips, 0),
        location=ErrorLocation(1, 1, 0, 10, 10, 0), semantic=None, answers=None, model=model,
    )  # fmt: skip


def test_it_shows_a_fitted_models_coefficients_and_leaves_a_row_with_too_few_clips_blank(db):
    from django.template.loader import render_to_string

    from benchmark.codeswitch.report import Report
    from benchmark.codeswitch.stats import two_part_model
    from benchmark.models import CsDataset
    from tests.benchmark.codeswitch.test_stats import synthetic

    wers, predictors = synthetic(400)
    few = two_part_model([0.0, 0.1, 0.2], {"switch_points": [0, 1, 2], "code_mixing_index": [0, 10, 30]})
    dataset = CsDataset.objects.create(name="big", utterance_count=1200)
    rows = [_row("many", two_part_model(wers, predictors), 400), _row("few", few, 3)]
    report = Report(dataset, "not configured", rows, ["es", "en"], [])

    html = render_to_string("benchmark/cs/report.html", {"dataset": dataset, "r": report, "pictures": {}})
    model = html[html.index("What predicts errors") :]

    assert model.count("Too little data") == 1
    assert model.count("fitted: coefficients below") == 2  # both parts of the 400-clip row
    assert "fitted on n = 400 code-switched clips" in model and "<td>switch_points</td>" in model
    assert "&lt; 0.0001" in model  # the planted effect's p-value
    assert "<td>few (auto-detect)</td><td>es-en</td><td>3</td>" in model
    assert "packaged fixture" not in html
