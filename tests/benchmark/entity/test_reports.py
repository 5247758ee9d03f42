"""The numbers benchmark pages show, read from stored rows with a fixed number of queries."""

import io

import pytest
from django.core.management import call_command

from benchmark.entity import actions, reports, runs
from benchmark.models import BenchmarkRun

from .hypotheses import ALPHA, BETA, write_jsonl

ML, BF = "MLCommons_TestPortion", "Belebele_Fleurs_TestPortion"


@pytest.fixture
def scored(dataset, tmp_path):
    made = {}
    for name, lines in (("alpha", ALPHA), ("beta", BETA)):
        path = write_jsonl(tmp_path / f"{name}.jsonl", lines, name, f"{name}-1")
        call_command(
            "benchmark_import_hypotheses", "--dataset", dataset.name, str(path), stdout=io.StringIO()
        )
        made[name] = BenchmarkRun.objects.get(system_name=name)
        actions.score_run(made[name])
        made[name].refresh_from_db()
    return made


def test_it_gives_each_scored_run_its_headline_and_n(scored, django_assert_num_queries):
    with django_assert_num_queries(2):
        listed = reports.run_list()

    figures = {run.system_name: figure for run, figure in listed}
    assert figures["alpha"].text == "entity accuracy, MLCommons_TestPortion, tier A, n=4: 75.0%"
    assert (figures["beta"].found, figures["beta"].n, figures["beta"].subset) == (3, 4, ML)
    assert reports.headline(scored["alpha"], tiers="AB").text.endswith("n=6: 83.3%")


def test_it_leaves_unscored_runs_without_a_headline(dataset, endpoint_transcriber):
    run = runs.create_run(dataset, endpoint_transcriber("ok"))

    assert reports.run_list() == [(run, None)]
    assert reports.subset_gap(run) is None


def test_it_tabulates_accuracy_per_type_and_subset(scored, django_assert_num_queries):
    with django_assert_num_queries(1):
        table = reports.type_table(scored["alpha"])

    assert table.subsets == (ML, BF)  # the headline subset first
    rows = {row.type: row for row in table.rows}
    assert [(a.found, a.n) for a in rows["ORG"].by_subset] == [(1, 2), (1, 1)]  # boston city council missed
    assert (rows["PERSON"].overall.found, rows["PERSON"].overall.n) == (2, 3)  # Siobhan O'Neill missed
    assert [(a.found, a.n) for a in rows["DATE"].by_subset] == [(0, 0), (1, 1)]


def test_it_shows_the_gap_between_the_two_subsets(scored):
    gap = reports.subset_gap(scored["beta"])

    assert (gap.headline.label, gap.headline.found, gap.headline.n) == (ML, 3, 4)
    assert (gap.other.label, gap.other.found, gap.other.n) == (BF, 4, 7)
    assert gap.gap_points == pytest.approx(100 * (4 / 7 - 3 / 4))


def test_it_diffs_two_runs_span_by_span_with_what_each_heard(scored, django_assert_num_queries):
    with django_assert_num_queries(4):
        result = reports.span_diff(scored["alpha"], scored["beta"])

    assert [r.span_id for r in result.diff.only_a] == ["ml-0001#1", "bf-0001#0", "bf-0001#2", "bf-0001#3"]
    assert [r.span_id for r in result.diff.only_b] == ["ml-0002#1", "bf-0002#0"]
    assert result.heard_b["ml-0001"].startswith("the epa met with senator mario")
    assert "bf-0001" not in result.heard_b  # beta has no hypothesis there


def test_it_refuses_to_diff_a_run_that_is_not_scored(scored, dataset, endpoint_transcriber):
    unscored = runs.create_run(dataset, endpoint_transcriber("ok"))

    with pytest.raises(ValueError, match="not scored yet"):
        reports.span_diff(scored["alpha"], unscored)


def test_it_gives_each_transcriber_the_entity_accuracy_of_its_latest_scored_run(
    dataset, endpoint, endpoint_transcriber, django_assert_num_queries
):
    good = endpoint_transcriber("good", text="the epa met with senator maria cantwell; boston city council")
    poor = endpoint_transcriber("poor", text="nothing useful")
    never = endpoint_transcriber("never")
    for transcriber in (good, good, poor):
        run = runs.create_run(dataset, transcriber)
        runs.execute_run(run.pk)
        actions.score_run(run)
    endpoint.text["good"] = "the epa"  # a later run of the same transcriber does worse
    latest = runs.create_run(dataset, good)
    runs.execute_run(latest.pk)
    actions.score_run(latest)

    with django_assert_num_queries(2):
        figures = reports.entity_accuracy_by_transcriber([good.pk, poor.pk, never.pk])

    assert figures[good.pk] == (0.25, 4, latest.pk)  # epa only, MLCommons tier A
    assert figures[poor.pk][:2] == (0.0, 4)
    assert never.pk not in figures
