"""benchmark.selectors: the entity benchmark figure the product shows on a bank's candidate cards."""

import dataclasses

import pytest

from benchmark import selectors
from benchmark.entity import reports
from benchmark.models import Clip
from tests.benchmark.entity.test_views import ALPHA, BETA, make_dataset, make_run, scored

pytestmark = pytest.mark.django_db


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


def test_it_gives_each_transcriber_the_figure_the_product_reads_today_and_says_it_is_the_fixture(
    dataset, beta_stt, whisper_tiny, django_assert_num_queries
):
    clips = list(Clip.objects.filter(dataset=dataset).values_list("clip_id", "transcript"))
    scored(make_run(dataset, "first", {c: "nothing" for c, _ in clips}, transcriber=beta_stt))
    latest = scored(make_run(dataset, "latest", dict(clips), transcriber=beta_stt))

    with django_assert_num_queries(2):
        headlines = selectors.entity_headlines([beta_stt.pk, whisper_tiny.pk])

    assert set(headlines) == {beta_stt.pk}  # whisper_tiny has no scored run
    figure = headlines[beta_stt.pk]
    today = reports.entity_accuracy_by_transcriber([beta_stt.pk])[beta_stt.pk]
    assert (figure.accuracy, figure.n, figure.run_id) == today == (1.0, 4, latest.pk)
    assert (figure.is_fixture, figure.dataset_clips, figure.tier, figure.dataset_label) == (
        True,
        5,
        "A",
        "packaged fixture",
    )
    assert figure.caption == "packaged fixture, 5 clips — not the full benchmark, tier A, n=4"
    with pytest.raises(dataclasses.FrozenInstanceError):
        figure.accuracy = 0.5


def test_it_names_the_mlcommons_subset_of_a_real_dataset(beta_stt):
    dataset = make_dataset()
    run = scored(make_run(dataset, "beta", BETA, transcriber=beta_stt))
    scored(make_run(dataset, "alpha", ALPHA))  # imported: no transcriber, not on any card

    figure = selectors.entity_headlines([beta_stt.pk])[beta_stt.pk]

    assert figure == selectors.EntityHeadline(
        accuracy=pytest.approx(2 / 3),
        n=3,
        run_id=run.pk,
        is_fixture=False,
        dataset_clips=4,
        tier="A",
        dataset_label="MLCommons subset",
    )
    assert figure.caption == "MLCommons subset, tier A, n=3"
