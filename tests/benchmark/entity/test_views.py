"""Entity benchmark pages: the runs with their headline and progress, starting and scoring a run, a run's
figures by tier and its three downloads, the span diff between two runs, and the benchmark line on a bank's
results page. Runs and hits are built with the models; nothing is transcribed."""

import csv
import io
import json

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from benchmark.entity import actions
from benchmark.models import BenchmarkRun, Clip, Dataset, EntitySpan, Hypothesis, SpanHit
from oncore.transcribers.models import Transcriber

pytestmark = pytest.mark.django_db

ML, BF = "MLCommons_TestPortion", "Belebele_Fleurs_TestPortion"
CLIPS = [
    (
        "ml-0001",
        ML,
        "the epa met with senator maria cantwell",
        [("epa", "ORG", "A"), ("maria cantwell", "PERSON", "A")],
    ),
    (
        "ml-0002",
        ML,
        "the boston city council voted on tuesday",
        [("boston city council", "ORG", "A"), ("tuesday", "DATE", "B")],
    ),
    ("bf-0001", BF, "Mount Everest is in Nepal.", [("Mount Everest", "LOC", "A"), ("Nepal", "GPE", "A")]),
    ("bf-0002", BF, "It rained all day.", []),
]
ALPHA = {  # tier A: MLCommons 2/3 (boston city council missed), Belebele 2/2
    "ml-0001": "the epa met with senator maria cantwell",
    "ml-0002": "the boston council voted on tuesday",
    "bf-0001": "mount everest is in nepal",
    "bf-0002": "it rained all day",
}
BETA = {  # tier A: MLCommons 2/3 (maria cantwell missed), Belebele 0/2 (failed on bf-0001)
    "ml-0001": "the epa met with senator mario cantwell",
    "ml-0002": "the boston city council voted on tuesday",
    "bf-0001": None,
    "bf-0002": "it rained all day",
}


def make_dataset(name="Entity benchmark"):
    dataset = Dataset.objects.create(name=name, version="1.0", revision="abc123", clip_count=4, span_count=6)
    clips = Clip.objects.bulk_create(
        [
            Clip(
                dataset=dataset,
                clip_id=clip_id,
                subset=subset,
                transcript=text,
                duration_s=3.0,
                audio=f"benchmark/{clip_id}.wav",
                audio_sha256="0" * 64,
            )
            for clip_id, subset, text, _ in CLIPS
        ]
    )
    EntitySpan.objects.bulk_create(
        [
            EntitySpan(clip=clip, index=i, text=text, type=type_, tier=tier)
            for clip, (_, _, _, spans) in zip(clips, CLIPS, strict=True)
            for i, (text, type_, tier) in enumerate(spans)
        ]
    )
    return dataset


def make_run(dataset, name, texts, *, transcriber=None, status=BenchmarkRun.DONE):
    run = BenchmarkRun.objects.create(
        dataset=dataset,
        source=BenchmarkRun.CATALOGUE if transcriber else BenchmarkRun.IMPORTED,
        transcriber=transcriber,
        system_name=name,
        model=f"{name}-1",
        status=status,
        clips_total=len(texts),
        clips_done=sum(1 for t in texts.values() if t is not None),
        clips_failed=sum(1 for t in texts.values() if t is None),
    )
    clips = dict(Clip.objects.filter(dataset=dataset).values_list("clip_id", "id"))
    Hypothesis.objects.bulk_create(
        [
            Hypothesis(
                run=run,
                clip_id=clips[clip_id],
                text=text or "",
                status=Hypothesis.FAILED if text is None else Hypothesis.DONE,
            )
            for clip_id, text in texts.items()
        ]
    )
    return run


def scored(run):
    actions.score_run(run)
    run.refresh_from_db()
    return run


@pytest.fixture
def dataset():
    return make_dataset()


@pytest.fixture
def beta_stt(db):
    return Transcriber.objects.create(
        slug="endpoint-beta",
        provider=Transcriber.GENERIC,
        model="beta-1",
        display_name="Beta STT",
        options={"url": "http://127.0.0.1:9/beta"},
    )


@pytest.fixture
def alpha(dataset):
    return scored(make_run(dataset, "alpha", ALPHA))


@pytest.fixture
def beta(dataset, beta_stt):
    return scored(make_run(dataset, "beta", BETA, transcriber=beta_stt))


def csv_rows(response):
    text = b"".join(response.streaming_content).decode("utf-8")
    assert text.startswith("\ufeff")
    return list(csv.reader(io.StringIO(text[1:])))


def page_urls(run, other):
    return [
        reverse("bench:runs"),
        reverse("bench:run", args=[run.pk]),
        reverse("bench:run_hits", args=[run.pk]),
        reverse("bench:run_summary", args=[run.pk]),
        reverse("bench:run_manifest", args=[run.pk]),
        reverse("bench:compare"),
        reverse("bench:compare") + f"?a={run.pk}&b={other.pk}",
        reverse("bench:compare_csv") + f"?a={run.pk}&b={other.pk}",
    ]


# ---------------------------------------------------------------- access


def test_it_serves_every_page_to_an_admin_of_any_organization(admin_client, alpha, beta):
    for url in page_urls(alpha, beta):
        assert admin_client.get(url).status_code == 200, url


def test_it_shows_the_same_global_runs_to_another_organizations_admin(other_client, alpha, beta):
    response = other_client.get(reverse("bench:runs"))

    assert response.status_code == 200
    assert f"Run {alpha.pk}" in response.content.decode()
    assert other_client.get(reverse("bench:run", args=[beta.pk])).status_code == 200


def test_it_refuses_members(member_client, alpha, beta):
    for url in page_urls(alpha, beta):
        assert member_client.get(url).status_code == 403, url
    assert member_client.post(reverse("bench:run_score", args=[alpha.pk])).status_code == 403
    assert member_client.post(reverse("bench:run_start")).status_code == 403
    assert b"for organization admins" in member_client.get(reverse("bench:runs")).content


def test_it_sends_anonymous_users_to_log_in(client, alpha, beta):
    for url in page_urls(alpha, beta):
        response = client.get(url)
        assert response.status_code == 302 and reverse("login") in response["Location"], url


def test_it_refuses_the_wrong_method(admin_client, alpha, beta):
    assert admin_client.post(reverse("bench:runs")).status_code == 405
    assert admin_client.get(reverse("bench:run_start")).status_code == 405
    assert admin_client.post(reverse("bench:run", args=[alpha.pk])).status_code == 405
    assert admin_client.get(reverse("bench:run_score", args=[alpha.pk])).status_code == 405
    assert admin_client.post(reverse("bench:run_hits", args=[alpha.pk])).status_code == 405
    assert admin_client.post(reverse("bench:run_summary", args=[alpha.pk])).status_code == 405
    assert admin_client.post(reverse("bench:run_manifest", args=[alpha.pk])).status_code == 405
    assert admin_client.post(reverse("bench:compare")).status_code == 422  # a run and a hits file are needed
    assert admin_client.post(reverse("bench:compare_csv")).status_code == 405


def test_it_answers_404_for_a_run_that_does_not_exist(admin_client):
    assert admin_client.get(reverse("bench:run", args=[999])).status_code == 404


# ---------------------------------------------------------------- the runs list


def test_it_lists_runs_with_their_headline_figure_and_n(admin_client, alpha, beta, dataset):
    unscored = make_run(dataset, "gamma", ALPHA)

    content = admin_client.get(reverse("bench:runs")).content.decode()

    assert "Beta STT" in content and "alpha" in content
    assert "entity accuracy, MLCommons_TestPortion, tier A, n=3" in content
    assert "66.7%" in content
    assert f"Run {unscored.pk}" in content and "not scored" in content
    assert 'aria-current="page">Benchmark</a>' in content


def test_it_lists_figures_of_the_tier_asked_for(admin_client, alpha):
    content = admin_client.get(reverse("bench:runs") + "?tiers=B").content.decode()

    assert "entity accuracy, MLCommons_TestPortion, tier B, n=1" in content
    assert "100.0%" in content


def test_it_shows_progress_of_a_running_run_and_polls_until_none_runs(admin_client, dataset):
    run = make_run(dataset, "gamma", ALPHA, status=BenchmarkRun.RUNNING)
    BenchmarkRun.objects.filter(pk=run.pk).update(clips_done=1, clips_failed=1)
    url = reverse("bench:runs") + "?fragment=progress"

    page = admin_client.get(reverse("bench:runs")).content.decode()
    assert "2 of 4 clips, 1 failed" in page and "hx-get" in page

    assert admin_client.get(url, HTTP_HX_REQUEST="true").status_code == 200
    BenchmarkRun.objects.filter(pk=run.pk).update(status=BenchmarkRun.DONE)
    done = admin_client.get(url, HTTP_HX_REQUEST="true")
    assert done.status_code == 286
    assert "hx-get" not in done.content.decode()


def test_it_keeps_the_list_at_a_fixed_number_of_queries(admin_client, dataset, django_assert_max_num_queries):
    spans = list(EntitySpan.objects.filter(clip__dataset=dataset).values_list("id", flat=True))
    transcribers = Transcriber.objects.bulk_create(
        [
            Transcriber(slug=f"t{i}", provider=Transcriber.GENERIC, model="m", display_name=f"T{i}")
            for i in range(12)
        ]
    )
    runs = BenchmarkRun.objects.bulk_create(
        [
            BenchmarkRun(
                dataset=dataset,
                transcriber=t,
                system_name=t.slug,
                status=BenchmarkRun.DONE,
                scored_at=timezone.now(),
                matcher_version="v",
            )
            for t in transcribers
        ]
        + [BenchmarkRun(dataset=dataset, system_name="running", status=BenchmarkRun.RUNNING, clips_total=4)]
    )
    SpanHit.objects.bulk_create(
        [
            SpanHit(run=run, span_id=span, found=i % 2 == 0, matcher_version="v")
            for run in runs[:12]
            for i, span in enumerate(spans)
        ]
    )

    with django_assert_max_num_queries(7):
        response = admin_client.get(reverse("bench:runs"))
    assert response.content.decode().count("tier A, n=") == 12
    with django_assert_max_num_queries(5):
        assert (
            admin_client.get(reverse("bench:runs") + "?fragment=progress", HTTP_HX_REQUEST="true").status_code
            == 200
        )


# ---------------------------------------------------------------- starting and scoring


def test_it_starts_a_run_of_a_catalogue_transcriber_over_a_dataset(staff_client, dataset, beta_stt):
    response = staff_client.post(
        reverse("bench:run_start"), {"dataset": dataset.pk, "transcriber": beta_stt.pk, "concurrency": 3}
    )

    run = BenchmarkRun.objects.get(transcriber=beta_stt)
    assert response.status_code == 302 and response["Location"] == reverse("bench:run", args=[run.pk])
    assert (run.status, run.clips_total, run.concurrency) == (BenchmarkRun.QUEUED, 4, 3)
    page = staff_client.get(response["Location"]).content.decode()
    assert f"Run {run.pk} queued" in page and "0 of 4 clips" in page and "Not scored yet" in page


def test_it_refuses_a_second_run_while_one_of_the_same_transcriber_is_going(staff_client, dataset, beta_stt):
    make_run(dataset, "beta", BETA, transcriber=beta_stt, status=BenchmarkRun.RUNNING)

    response = staff_client.post(
        reverse("bench:run_start"), {"dataset": dataset.pk, "transcriber": beta_stt.pk, "concurrency": 2}
    )

    assert response.status_code == 422
    assert "already running" in response.content.decode()
    assert BenchmarkRun.objects.count() == 1


def test_it_explains_why_a_transcriber_cannot_run(staff_client, dataset):
    broken = Transcriber.objects.create(slug="broken", provider="nope", model="x", display_name="Broken")

    response = staff_client.post(
        reverse("bench:run_start"), {"dataset": dataset.pk, "transcriber": broken.pk, "concurrency": 2}
    )

    assert response.status_code == 422
    assert "which has no engine" in response.content.decode()
    assert not BenchmarkRun.objects.exists()


def test_it_scores_a_finished_run_and_shows_its_figures(staff_client, dataset):
    run = make_run(dataset, "alpha", ALPHA)

    response = staff_client.post(reverse("bench:run_score", args=[run.pk]), follow=True)

    content = response.content.decode()
    assert "scored: entity accuracy, MLCommons_TestPortion, tier A, n=3: 66.7%" in content
    assert SpanHit.objects.filter(run=run).count() == 6
    assert "Per-span hits CSV" in content


def test_it_refuses_to_score_a_run_with_clips_left_unless_asked(staff_client, dataset):
    run = make_run(dataset, "alpha", ALPHA, status=BenchmarkRun.STOPPED)
    Hypothesis.objects.filter(run=run, clip__clip_id="bf-0001").update(status=Hypothesis.QUEUED)

    refused = staff_client.post(reverse("bench:run_score", args=[run.pk]), follow=True)
    assert "is not finished: 1 clip is still queued" in refused.content.decode()
    assert not SpanHit.objects.filter(run=run).exists()

    staff_client.post(reverse("bench:run_score", args=[run.pk]), {"allow_incomplete": "1"})
    run.refresh_from_db()
    assert run.scored_at is not None
    assert run.summary["clips"]["without_hypothesis"] == 1


def test_it_leaves_starting_and_scoring_runs_to_staff_and_shows_admins_the_results(
    admin_client, staff_client, dataset, beta_stt, alpha
):
    """Runs bill the operator's vendor keys: an organization admin can neither start nor score one."""
    page = admin_client.get(reverse("bench:runs")).content.decode()
    assert "Starting a run is for the operator" in page and 'action="/benchmark/runs/start/"' not in page
    refused = admin_client.post(
        reverse("bench:run_start"), {"dataset": dataset.pk, "transcriber": beta_stt.pk, "concurrency": 3}
    )
    assert refused.status_code == 403 and "billed to the operator" in refused.content.decode()
    assert not BenchmarkRun.objects.filter(transcriber=beta_stt).exists()
    unscored = make_run(dataset, "gamma", ALPHA)
    assert admin_client.post(reverse("bench:run_score", args=[unscored.pk])).status_code == 403
    unscored.refresh_from_db()
    assert unscored.scored_at is None
    assert "Score this run" not in admin_client.get(reverse("bench:run", args=[unscored.pk])).content.decode()
    assert admin_client.get(reverse("bench:run", args=[alpha.pk])).status_code == 200  # results stay readable

    staff_page = staff_client.get(reverse("bench:runs")).content.decode()  # the operator, in no organization
    assert 'action="/benchmark/runs/start/"' in staff_page
    assert staff_client.get(reverse("cs:datasets")).status_code == 200


# ---------------------------------------------------------------- one run


def test_it_shows_a_runs_headline_types_and_subset_gap(admin_client, alpha):
    content = admin_client.get(reverse("bench:run", args=[alpha.pk])).content.decode()

    assert "entity accuracy, MLCommons_TestPortion, tier A, n=3: 66.7%" in content
    assert "+33.3 points" in content  # Belebele 100% against MLCommons 66.7%
    assert "ORG" in content and "PERSON" in content and "LOC" in content
    assert "DATE" not in content  # tier B only
    assert "revision abc123" in content


def test_it_switches_tiers_on_the_run_page(admin_client, alpha):
    url = reverse("bench:run", args=[alpha.pk])

    tier_b = admin_client.get(url + "?tiers=B").content.decode()
    both = admin_client.get(url + "?tiers=AB").content.decode()

    assert "tier B, n=1: 100.0%" in tier_b and "DATE" in tier_b
    assert "tier A+B, n=4: 75.0%" in both and "not comparable" in both
    assert "tier A, n=3" in admin_client.get(url + "?tiers=nonsense").content.decode()


def test_it_polls_a_running_run_until_it_stops(staff_client, dataset):
    run = make_run(dataset, "gamma", ALPHA, status=BenchmarkRun.QUEUED)
    url = reverse("bench:run", args=[run.pk]) + "?fragment=progress"

    assert staff_client.get(url, HTTP_HX_REQUEST="true").status_code == 200
    BenchmarkRun.objects.filter(pk=run.pk).update(status=BenchmarkRun.DONE)
    done = staff_client.get(url, HTTP_HX_REQUEST="true")
    assert done.status_code == 286
    assert "Score this run" in done.content.decode()


def test_it_downloads_the_hits_csv_with_every_span(admin_client, beta):
    response = admin_client.get(reverse("bench:run_hits", args=[beta.pk]))

    assert response["Content-Disposition"] == f'attachment; filename="run-{beta.pk}-beta.hits.csv"'
    rows = csv_rows(response)
    assert rows[0] == actions.HIT_COLUMNS
    assert len(rows) == 1 + 6  # every tier
    by_key = {row[0]: row for row in rows[1:]}
    assert by_key["ml-0001#1"] == [
        "ml-0001#1",
        "ml-0001",
        ML,
        "1",
        "maria cantwell",
        "PERSON",
        "A",
        "0",
        "1",
        "the epa met with senator mario cantwell",
    ]
    assert by_key["bf-0001#0"][7:] == ["0", "0", ""]  # failed clip: missed, not transcribed


def test_it_downloads_the_summary_and_manifest_as_the_command_writes_them(admin_client, alpha):
    summary = admin_client.get(reverse("bench:run_summary", args=[alpha.pk]))
    manifest = admin_client.get(reverse("bench:run_manifest", args=[alpha.pk]))

    assert summary["Content-Disposition"] == f'attachment; filename="run-{alpha.pk}-alpha.summary.json"'
    data = json.loads(summary.content)
    assert {"headline", "entity_accuracy", "wer", "clips", "matcher_version", "normalizer_version"} <= set(
        data
    )
    assert data["headline"] == "entity accuracy, MLCommons_TestPortion, tier A, n=3: 66.7%"
    meta = json.loads(manifest.content)
    assert {"format", "run", "dataset", "scoring", "clips", "spans", "excluded"} <= set(meta)
    assert (meta["dataset"]["revision"], meta["run"]["system_name"]) == ("abc123", "alpha")
    assert manifest.content.decode() == json.dumps(alpha.manifest, indent=2, ensure_ascii=False) + "\n"


def test_it_offers_no_downloads_before_a_run_is_scored(admin_client, dataset):
    run = make_run(dataset, "gamma", ALPHA)

    for name in ("bench:run_hits", "bench:run_summary", "bench:run_manifest"):
        response = admin_client.get(reverse(name, args=[run.pk]))
        assert response.status_code == 404 and b"not scored yet" in response.content
    assert "Per-span hits CSV" not in admin_client.get(reverse("bench:run", args=[run.pk])).content.decode()


# ---------------------------------------------------------------- comparing two runs


def test_it_shows_what_one_run_found_and_the_other_missed(admin_client, alpha, beta):
    url = reverse("bench:compare") + f"?a={alpha.pk}&b={beta.pk}"

    content = admin_client.get(url).content.decode()

    assert f"only run {alpha.pk} found 3, only run {beta.pk} found 1" in content
    assert "maria cantwell" in content and "the epa met with senator mario cantwell" in content
    assert "nothing (no hypothesis)" in content  # beta failed on bf-0001
    assert "the boston council voted on tuesday" in content  # what alpha heard where beta found the council
    assert reverse("bench:compare_csv") in content


def test_it_downloads_the_span_diff(admin_client, alpha, beta):
    response = admin_client.get(reverse("bench:compare_csv") + f"?a={alpha.pk}&b={beta.pk}")

    assert (
        response["Content-Disposition"]
        == f'attachment; filename="run-{alpha.pk}-alpha-vs-run-{beta.pk}.diff.csv"'
    )
    rows = csv_rows(response)
    assert rows[0][:3] == ["span_key", "clip_id", "subset"] and rows[0][-1] == "missing_run_heard"
    assert [
        "ml-0002#0",
        "ml-0002",
        ML,
        "boston city council",
        "ORG",
        "A",
        str(beta.pk),
        str(alpha.pk),
        "the boston council voted on tuesday",
    ] in rows
    assert len(rows) == 1 + 4


def test_it_explains_why_two_runs_cannot_be_compared(admin_client, alpha):
    elsewhere = scored(make_run(make_dataset("Another benchmark"), "delta", ALPHA))

    different = admin_client.get(reverse("bench:compare") + f"?a={alpha.pk}&b={elsewhere.pk}")
    same = admin_client.get(reverse("bench:compare") + f"?a={alpha.pk}&b={alpha.pk}")
    download = admin_client.get(reverse("bench:compare_csv") + f"?a={alpha.pk}&b={elsewhere.pk}")

    assert different.status_code == 422 and "different datasets" in different.content.decode()
    assert same.status_code == 422 and "two different runs" in same.content.decode()
    assert download.status_code == 422 and b"different datasets" in download.content


def test_it_preselects_the_run_to_compare_from_its_page(admin_client, alpha, beta):
    response = admin_client.get(reverse("bench:compare") + f"?a={alpha.pk}")

    assert response.status_code == 200
    assert f'<option value="{alpha.pk}" selected>' in response.content.decode()


# ---------------------------------------------------------------- a bank's results page


def test_it_puts_each_candidates_entity_accuracy_beside_its_own_lines(org, beta, beta_stt):
    from benchmark import selectors
    from transcriber_tests import actions as bank_actions
    from transcriber_tests import queries

    bank = bank_actions.do_create_bank(org, name="English", language_label="English")
    bank_actions.do_add_candidate(bank, beta_stt, confirmed=True)
    other = Transcriber.objects.create(
        slug="no-bench", provider=Transcriber.GENERIC, model="x", display_name="No Bench"
    )
    bank_actions.do_add_candidate(bank, other, confirmed=True)
    results = queries.bank_results(bank)
    context = {"bank": bank, "r": results, "windows": [30], "queue": None}

    entity = selectors.entity_headlines([card.transcriber.pk for card in results.cards])
    html = render_to_string("transcriber_tests/_results_figures.html", {**context, "entity": entity})

    assert "Entity benchmark: <strong>66.7%</strong>" in html
    assert "(MLCommons subset, tier A, n=3)" in html
    assert f'<a href="{reverse("bench:run", args=[beta.pk])}">run #{beta.pk}</a>' in html
    assert html.count("Entity benchmark:") == 1  # the candidate without a scored run shows none
    assert "Entity benchmark" not in render_to_string("transcriber_tests/_results_figures.html", context)


def test_it_compares_a_run_with_an_uploaded_hits_csv(admin_client, alpha, beta):
    from django.core.files.uploadedfile import SimpleUploadedFile

    def download(run) -> bytes:
        return b"".join(admin_client.get(reverse("bench:run_hits", args=[run.pk])).streaming_content)

    def upload(run, name, content):
        hits = SimpleUploadedFile(name, content, content_type="text/csv")
        return admin_client.post(reverse("bench:compare"), {"a": run.pk, "hits": hits, "tiers": "A"})

    own = upload(alpha, "alpha.hits.csv", download(alpha))  # the dashboard's export: BOM, safe cells
    assert own.status_code == 200
    assert f"only run {alpha.pk} found 0, only alpha.hits.csv found 0." in own.content.decode()

    against = upload(alpha, "beta.hits.csv", download(beta)).content.decode()
    assert f"only run {alpha.pk} found 3, only beta.hits.csv found 1." in against  # as against run beta
    assert "maria cantwell" in against and "the epa met with senator mario cantwell" in against
    assert "does not say which matcher scored it" in against

    wrong = upload(alpha, "notes.csv", b"a,b\n1,2\n")
    assert wrong.status_code == 422 and "has no span_key or found column" in wrong.content.decode()
