"""What a person reads on the entity benchmark pages: figures from the packaged fixture are labelled as such with
their clip counts, money reads as money, a WER over 100% on a few clips carries its caution, counts are
pluralized, and an empty table says so in words (never "None")."""

from decimal import Decimal

import pytest
from django.urls import reverse

from benchmark.models import BenchmarkRun, Clip
from tests.benchmark.entity.test_views import ALPHA, BETA, make_dataset, make_run, scored

pytestmark = pytest.mark.django_db

FIXTURE_BADGE = "packaged fixture, 5 clips"


@pytest.fixture
def beta_stt(db):
    from oncore.transcribers.models import Transcriber

    return Transcriber.objects.create(
        slug="endpoint-beta",
        provider=Transcriber.GENERIC,
        model="beta-1",
        display_name="Beta STT",
        options={"url": "http://127.0.0.1:9/beta"},
    )


def page(client, name, *args, query=""):
    response = client.get(reverse(name, args=args) + query)
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def fixture_runs(dataset):
    """Two scored runs on the packaged fixture (conftest's `dataset`: fixtures/entity_benchmark, 5 clips)."""
    clips = list(Clip.objects.filter(dataset=dataset).values_list("clip_id", "transcript"))
    heard = {clip_id: text for clip_id, text in clips}
    half = {clip_id: (text if i % 2 else "nothing") for i, (clip_id, text) in enumerate(clips)}
    return scored(make_run(dataset, "right", heard)), scored(make_run(dataset, "half", half))


def test_it_labels_figures_from_the_packaged_fixture_with_their_clip_count(admin_client, fixture_runs):
    right, half = fixture_runs

    listed = page(admin_client, "bench:runs")
    run_page = page(admin_client, "bench:run", right.pk)
    compared = page(admin_client, "bench:compare", query=f"?a={right.pk}&b={half.pk}")

    assert listed.count(FIXTURE_BADGE) == 2  # one per run, and one explanation under the table
    assert listed.count("not on the full benchmark") == 1
    assert "packaged fixture, 5 clips — not the full benchmark" in run_page
    assert "Packaged fixture, 5 clips — not the full benchmark." in run_page  # beside the headline
    assert "Both runs are on the packaged fixture, 5 clips — not the full benchmark." in compared


def test_it_does_not_label_a_dataset_imported_from_other_files(admin_client):
    dataset = make_dataset()
    alpha = scored(make_run(dataset, "alpha", ALPHA))
    beta = scored(make_run(dataset, "beta", BETA))

    assert not dataset.is_fixture
    for content in (
        page(admin_client, "bench:runs"),
        page(admin_client, "bench:run", alpha.pk),
        page(admin_client, "bench:compare", query=f"?a={alpha.pk}&b={beta.pk}"),
    ):
        assert "packaged fixture" not in content


def test_it_shows_a_runs_cost_as_money_and_an_imported_runs_as_not_recorded(admin_client, beta_stt):
    dataset = make_dataset()
    local = scored(make_run(dataset, "local", ALPHA, transcriber=beta_stt))
    vendor = scored(make_run(dataset, "vendor", ALPHA, transcriber=beta_stt))
    BenchmarkRun.objects.filter(pk=vendor.pk).update(cost=Decimal("0.004"))
    imported = scored(make_run(dataset, "imported", ALPHA))

    assert "<dd>$0.00</dd>" in page(admin_client, "bench:run", local.pk)
    assert "<dd>under $0.01</dd>" in page(admin_client, "bench:run", vendor.pk)
    shown = page(admin_client, "bench:run", imported.pk)
    assert "not recorded (imported hypotheses)" in shown and "$0.0" not in shown


def test_it_cautions_about_a_wer_over_100_percent_on_a_few_clips(admin_client):
    dataset = make_dataset()
    babble = " ".join(["hallucinated"] * 40)
    run = scored(make_run(dataset, "babble", {clip_id: babble for clip_id in ALPHA}))

    content = page(admin_client, "bench:run", run.pk)

    assert "Over 100% on n=4 clips: one clip with many insertions (a hallucination) dominates" in content
    sane = scored(make_run(dataset, "alpha", ALPHA))
    assert "Over 100%" not in page(admin_client, "bench:run", sane.pk)


def test_it_says_no_span_where_a_diff_side_is_empty(admin_client):
    dataset = make_dataset()
    alpha = scored(make_run(dataset, "alpha", ALPHA))
    twin = scored(make_run(dataset, "twin", ALPHA))

    content = page(admin_client, "bench:compare", query=f"?a={alpha.pk}&b={twin.pk}")

    assert content.count(">No span.</td>") == 2 and "None." not in content


def test_it_pluralizes_clip_counts(staff_client, beta_stt):
    dataset = make_dataset()

    response = staff_client.post(
        reverse("bench:run_start"),
        {"dataset": dataset.pk, "transcriber": beta_stt.pk, "concurrency": 2},
        follow=True,
    )

    content = response.content.decode()
    assert "over 4 clips." in content and "clip(s)" not in content
