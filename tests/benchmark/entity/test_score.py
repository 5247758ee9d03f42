import csv
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmark.entity import actions, matcher
from benchmark.entity.scoring import SpanResult
from benchmark.models import BenchmarkRun, SpanHit

from .hypotheses import ALPHA, BETA, write_jsonl


def _cmd(*args):
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def alpha(dataset, tmp_path):
    path = write_jsonl(tmp_path / "alpha.jsonl", ALPHA, "alpha", "alpha-2026-01", formatting=True)
    _cmd("benchmark_import_hypotheses", "--dataset", dataset.name, str(path), "--run-date", "2026-01-15")
    return BenchmarkRun.objects.get(system_name="alpha")


@pytest.fixture
def beta(dataset, tmp_path):
    path = write_jsonl(tmp_path / "beta.jsonl", BETA, "beta", "beta-1")
    _cmd("benchmark_import_hypotheses", "--dataset", dataset.name, str(path))
    return BenchmarkRun.objects.get(system_name="beta")


def test_it_prints_the_headline_and_writes_the_three_outputs(alpha, tmp_path):
    out = _cmd("benchmark_score", str(alpha.pk), "--out", str(tmp_path / "out"))

    assert "entity accuracy, MLCommons_TestPortion, tier A, n=4: 75.0%" in out
    assert "Belebele_Fleurs_TestPortion: 85.7% (6/7)" in out
    assert "zero entities 1, excluded at import 1" in out
    label = f"run-{alpha.pk}-alpha"
    with open(tmp_path / "out" / f"{label}.hits.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 14  # every span, every tier
    boston = next(r for r in rows if r["span"] == "boston city council")
    assert (boston["span_key"], boston["found"], boston["tier"], boston["type"]) == (
        "ml-0002#1",
        "0",
        "A",
        "ORG",
    )
    assert boston["hypothesis"] == ALPHA[1]["hypothesis"]
    summary = json.loads((tmp_path / "out" / f"{label}.summary.json").read_text())
    assert summary["entity_accuracy"]["headline"] == {"found": 3, "n": 4, "accuracy": 0.75}
    assert summary["entity_accuracy"]["by_tier_all_subsets"]["B"] == {"found": 3, "n": 3, "accuracy": 1.0}
    assert summary["clips"]["zero_entity_clips"] == 1


def test_it_writes_a_manifest_that_makes_the_figure_reproducible(alpha, tmp_path):
    _cmd("benchmark_score", str(alpha.pk), "--out", str(tmp_path))

    manifest = json.loads((tmp_path / f"run-{alpha.pk}-alpha.manifest.json").read_text())
    assert manifest["dataset"]["name"] == "entity-benchmark-fixture"
    assert (manifest["dataset"]["version"], manifest["dataset"]["revision"]) == ("0.1-fixture", "fixture-r1")
    assert len(manifest["dataset"]["source_files"][0]["sha256"]) == 64
    assert manifest["scoring"]["matcher_version"] == matcher.MATCHER_VERSION
    assert manifest["scoring"]["normalizer_version"] == "1"
    assert manifest["scoring"]["tiers"] == "A"
    assert (
        manifest["run"].items()
        >= {
            "system_name": "alpha",
            "model": "alpha-2026-01",
            "formatting": True,
            "run_date": "2026-01-15",
        }.items()
    )
    assert manifest["clips"].items() >= {"in_dataset": 5, "transcribed": 5, "zero_entity_clips": 1}.items()
    assert manifest["excluded"]["count"] == 1
    assert manifest["excluded"]["rows"][0]["clip_id"] == "ml-0004"
    assert "shelbyville" in manifest["excluded"]["rows"][0]["reason"]
    assert manifest["hypotheses_file"]["ignored_for_excluded_clips"] == ["ml-0004"]


def test_it_scores_tier_b_and_a_plus_b_on_request(alpha, tmp_path):
    out_b = _cmd("benchmark_score", str(alpha.pk), "--tiers", "B", "--out", str(tmp_path))
    out_ab = _cmd("benchmark_score", str(alpha.pk), "--tiers", "AB", "--out", str(tmp_path))

    assert "entity accuracy, MLCommons_TestPortion, tier B, n=2: 100.0%" in out_b
    assert "entity accuracy, MLCommons_TestPortion, tier AB, n=6: 83.3%" in out_ab
    assert SpanHit.objects.filter(run=alpha).count() == 14  # scored again: same rows, updated


def test_it_counts_spans_of_clips_without_a_hypothesis_as_missed(beta, tmp_path):
    out = _cmd("benchmark_score", str(beta.pk), "--out", str(tmp_path))

    assert "entity accuracy, MLCommons_TestPortion, tier A, n=4: 75.0%" in out
    assert "Belebele_Fleurs_TestPortion: 57.1% (4/7)" in out
    assert "without a hypothesis 2 (3 tier A spans on them, counted as missed)" in out


def test_it_lists_span_by_span_what_each_run_found_and_the_other_missed(alpha, beta, tmp_path):
    out = _cmd("benchmark_score", str(alpha.pk), "--compare", str(beta.pk), "--out", str(tmp_path))

    assert f"only run {alpha.pk} found 4, only run {beta.pk} found 2" in out
    found_by_alpha = out.split(f"Found by run {alpha.pk}, missed by run {beta.pk} (4):")[1].split("Found by")[
        0
    ]
    assert (
        f"ml-0001#1 [PERSON A] 'maria cantwell' -- run {beta.pk} heard: 'the epa met with senator mario"
        in out
    )
    for key in ("ml-0001#1", "bf-0001#0", "bf-0001#2", "bf-0001#3"):
        assert key in found_by_alpha
    assert f"bf-0001#0 [PERSON A] 'Neil Armstrong' -- run {beta.pk} heard: nothing (no hypothesis)" in out
    found_by_beta = out.split(f"Found by run {beta.pk}, missed by run {alpha.pk} (2):")[1]
    assert "ml-0002#1" in found_by_beta and "bf-0002#0" in found_by_beta
    with open(tmp_path / f"run-{alpha.pk}-alpha-vs-run-{beta.pk}.diff.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 6


def test_it_refuses_to_score_when_the_matcher_fails_its_self_test(alpha, tmp_path, monkeypatch):
    failure = matcher.SelfTestFailure("alias_saint", "Saint Louis", "st. louis county", True, False)
    monkeypatch.setattr(matcher, "self_test", lambda *args: [failure])

    with pytest.raises(CommandError) as caught:
        _cmd("benchmark_score", str(alpha.pk), "--out", str(tmp_path / "out"))

    assert "fails 1 self-test case, so nothing was scored" in str(caught.value)
    assert "alias_saint: entity_found('Saint Louis', 'st. louis county') gave False" in str(caught.value)
    assert not SpanHit.objects.exists() and not (tmp_path / "out").exists()


def test_it_refuses_an_unfinished_run_unless_asked(dataset, endpoint_transcriber, tmp_path):
    from benchmark.entity import runs

    run = runs.create_run(dataset, endpoint_transcriber("ok", text="the epa"))
    runs.execute_run(run.pk, max_clips=1)

    with pytest.raises(CommandError, match="not finished: 4 clip"):
        _cmd("benchmark_score", str(run.pk), "--out", str(tmp_path))
    out = _cmd("benchmark_score", str(run.pk), "--allow-incomplete", "--out", str(tmp_path))
    assert "without a hypothesis 4" in out


def test_it_writes_the_hits_csv_from_stored_rows_for_downloads(alpha, tmp_path):
    from benchmark.entity import reports

    card = actions.score_run(alpha)

    assert reports.hits_csv_for_run(alpha) == actions.hits_csv(card.spans, actions.run_hypotheses(alpha))
    assert isinstance(card.spans[0], SpanResult)


def test_it_compares_a_run_with_a_hits_csv_and_finds_no_difference_against_its_own(alpha, beta, tmp_path):
    _cmd("benchmark_score", str(beta.pk), "--out", str(tmp_path / "beta"))
    out = _cmd("benchmark_score", str(alpha.pk), "--out", str(tmp_path / "alpha"))
    own = tmp_path / "alpha" / f"{alpha.label}.hits.csv"
    assert str(own) in out

    same = _cmd("benchmark_score", str(alpha.pk), "--compare", str(own), "--out", str(tmp_path))
    assert f"only run {alpha.pk} found 0, only {own.name} found 0." in same
    assert "it does not say which matcher scored it" in same

    reference = tmp_path / "beta" / f"{beta.label}.hits.csv"
    against = _cmd("benchmark_score", str(alpha.pk), "--compare", str(reference), "--out", str(tmp_path))
    assert f"only run {alpha.pk} found 4, only {reference.name} found 2" in against  # as against run beta
    assert (
        f"bf-0001#0 [PERSON A] 'Neil Armstrong' -- {reference.name} heard: nothing (no hypothesis)" in against
    )
    with open(tmp_path / f"{alpha.label}-vs-{beta.label}.diff.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 6


def test_it_says_what_is_wrong_with_a_hits_csv_it_cannot_compare(alpha, tmp_path):
    no_found = tmp_path / "bad.hits.csv"
    no_found.write_text("span_key,clip_id\nml-0001#0,ml-0001\n")
    with pytest.raises(CommandError, match="has no found column"):
        _cmd("benchmark_score", str(alpha.pk), "--compare", str(no_found), "--out", str(tmp_path))
    partial = tmp_path / "partial.hits.csv"
    partial.write_text("span_key,found\nml-0001#0,1\n")
    with pytest.raises(CommandError, match="are not in partial.hits.csv"):
        _cmd("benchmark_score", str(alpha.pk), "--compare", str(partial), "--out", str(tmp_path))
    with pytest.raises(CommandError, match="no such run id or file"):
        _cmd("benchmark_score", str(alpha.pk), "--compare", str(tmp_path / "nowhere.csv"))
