"""A bank's figures are computed when its data change and read by key (transcriber_tests/queries/snapshots.py): a snapshot equals a direct
computation over the same rows, a read after the queue has drained shows the newest version, a read while newer
figures are coming says as of when, nothing a page or API answer shows is computed inside the request, rebuilds
coalesce, a deleted bank's snapshots go with it and an organization never reads another's."""

import random
import tracemalloc

import numpy as np
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from transcriber_tests import actions
from transcriber_tests.actions import scores
from transcriber_tests.actions.synthetic import fill_bank
from transcriber_tests.lib import alignment
from transcriber_tests.lib import trust as uncertainty
from transcriber_tests.models import Bank, Snapshot
from transcriber_tests.queries import confusion, groups, results, snapshots, trust
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


def direct_results(bank, window=30, group=None):
    """The results computed now from the rows, past every cache."""
    return results._compute_bank_results(bank, window, None, None, group)


@pytest.mark.parametrize("seed", [3, 7, 11, 19])
def test_it_keeps_figures_equal_to_a_direct_computation(org, seed):
    rng = random.Random(seed)
    bank = fill_bank(
        org,
        flags=rng.randint(4, 40),
        candidates=rng.randint(2, 4),
        seed=seed,
        name=f"Snap{seed}",
        tenants=rng.randint(1, 3),
        lines_per_call=rng.choice([4, 10]),
    )
    bank = Bank.objects.select_related("organization").get(pk=bank.pk)
    read = snapshots.results_of(bank, 30)
    screen = read.data.screen
    direct = direct_results(bank)
    assert screen.results.cards == direct.cards
    assert screen.results.leader == direct.leader
    assert screen.results.lead == direct.lead
    assert screen.results.control_mix == direct.control_mix
    assert screen.results.live_rows == direct.live_rows
    transcribers = [c.transcriber for c in direct.cards]
    assert screen.trends == results.bank_trends(bank, 30, transcribers)
    assert screen.tags == results.bank_tags(bank, 30, transcribers)
    assert screen.tradeoff == results.bank_tradeoff(bank, direct)
    tables = groups.group_tables(bank, results.window_start(30, bank.organization.zone), None, transcribers)
    assert screen.by_tenant == tables[groups.TENANT]
    assert screen.by_assistant == tables[groups.ASSISTANT]

    tenant = bank.organization.tenants.order_by("pk").last()
    group = groups.group_of(bank.organization, tenant.pk)
    filtered = snapshots.results_of(bank, 30, group=group).data.screen.results
    assert filtered.cards == direct_results(bank, group=group).cards

    assert snapshots.trust_of(bank, 30).computing  # never in a request: the queue computes it
    snapshots.drain()
    figures = snapshots.trust_of(bank, 30).data
    assert figures.trust == trust._compute(bank, direct)
    assert figures.confusions == confusion.confusion_pairs(bank, 30)


def test_it_serves_the_newest_version_once_the_queue_has_drained(admin_client, flag, bank):
    url = f"/banks/{bank.pk}/"
    first = admin_client.get(url).content.decode()
    assert "Figures as of" not in first
    assert "on 2 scored lines" in first
    actions.do_edit_flag(flag, expected_text="Siobhan, a table for four at eight thirty")
    stale = admin_client.get(url).content.decode()
    assert "Figures as of" in stale and "newer figures are being computed" in stale
    assert "on 2 scored lines" in stale  # the figures it has, until the new ones land
    poll = admin_client.get(url + "?fragment=progress", HTTP_HX_REQUEST="true")
    assert poll.status_code == 200  # keeps polling while newer figures are coming
    tasks.drain()
    fresh = admin_client.get(url).content.decode()
    assert "Figures as of" not in fresh
    done = admin_client.get(url + "?fragment=progress", HTTP_HX_REQUEST="true")
    assert done.status_code == 286  # nothing waits, the figures are current: the poll stops
    card = results.bank_results(bank, 30).cards[0]
    assert f"{card.summary.matches} matched" in fresh


def test_it_answers_the_api_with_the_figures_version(api, flag, bank):
    body = api.get(f"/banks/{bank.pk}/results").json()
    bank.refresh_from_db()
    assert body["figures"]["up_to_date"] is True
    assert body["figures"]["version"].startswith(bank.results_changed_at.isoformat()[:19])
    computing = api.get(f"/banks/{bank.pk}/uncertainty")
    assert computing.status_code == 503
    assert computing.json()["error"]["code"] == "figures_computing"
    assert computing["Retry-After"] == "5"
    tasks.drain()
    found = api.get(f"/banks/{bank.pk}/uncertainty").json()
    assert found["figures"]["up_to_date"] is True
    assert [c["transcriber"]["id"] for c in found["candidates"]] == [
        c.transcriber_id for c in bank.candidates.order_by("position")
    ]


def refuse(*args, **kwargs):
    raise AssertionError("a figure was computed inside a request")


def test_it_never_computes_a_figure_inside_a_request(admin_client, api, flag, bank, monkeypatch):
    urls = [
        f"/banks/{bank.pk}/",
        f"/banks/{bank.pk}/trust/",
        f"/banks/{bank.pk}/turns/",
        f"/banks/{bank.pk}/turns.csv",
        f"/banks/{bank.pk}/results.csv",
        f"/banks/{bank.pk}/confusions.csv",
        f"/calls/{flag.line.call_id}/",
        "/banks/",
    ]
    for url in urls:  # each key asked for once: a results key is computed inline the first time, never again
        assert admin_client.get(url).status_code == 200, url
    api.get(f"/banks/{bank.pk}/uncertainty")
    tasks.drain()
    actions.do_edit_flag(flag, note="a change that moves the version")  # the figures are now stale
    with monkeypatch.context() as m:
        for module, name in (
            (uncertainty, "ratio_bootstrap"),
            (alignment, "align"),
            (results, "_compute_bank_results"),
            (trust, "_compute"),
        ):
            m.setattr(module, name, refuse)
        for url in urls:
            response = admin_client.get(url)
            assert response.status_code == 200, url
            if hasattr(response, "streaming_content"):
                b"".join(response.streaming_content)
        for path in ("results", "uncertainty", "turns", "trends", "tags", "results/groups"):
            assert api.get(f"/banks/{bank.pk}/{path}").status_code == 200, path
        with CaptureQueriesContext(connection) as read:
            admin_client.get(f"/banks/{bank.pk}/")
        touched = " ".join(q["sql"] for q in read.captured_queries)
        assert "transcriber_tests_score" not in touched  # no aggregation over scores, nor over their totals
        assert "transcriber_tests_scoretotal" not in touched


def test_it_rebuilds_a_bank_once_however_many_changes_come(
    bank, flag, settings, django_capture_on_commit_callbacks
):
    settings.ONCORE = {**settings.ONCORE, "SNAPSHOT_INTERVAL_S": 3600.0}
    snapshots.results_of(Bank.objects.select_related("organization").get(pk=bank.pk), 30)
    Bank.objects.filter(pk=bank.pk).update(
        snapshots_wanted_at=None, snapshots_dispatched_at=None, snapshots_built_at=None
    )
    with django_capture_on_commit_callbacks(execute=False) as queued:
        scores.results_changed(bank.pk)
        scores.results_changed(bank.pk)
    assert Bank.objects.get(pk=bank.pk).snapshots_wanted_at is not None
    assert snapshots.dispatch_due() == [bank.pk]
    assert snapshots.dispatch_due() == []  # at most one pending per bank
    assert snapshots.rebuild(bank.pk) == 1
    scores.results_changed(bank.pk)
    assert snapshots.dispatch_due() == []  # within the interval of the last rebuild: waits
    settings.ONCORE = {**settings.ONCORE, "SNAPSHOT_INTERVAL_S": 0.0}
    assert snapshots.sweep() == [bank.pk]  # the minutely sweep hands it over once it is due
    assert len(queued) >= 2


def test_it_deletes_a_banks_snapshots_with_it(bank, flag):
    snapshots.results_of(Bank.objects.select_related("organization").get(pk=bank.pk), 30)
    assert Snapshot.objects.filter(bank_id=bank.pk).exists()
    actions.do_delete_bank(bank)
    assert not Snapshot.objects.filter(bank_id=bank.pk).exists()


def test_it_never_serves_another_organizations_figures(admin_client, other_admin, other_api, flag, bank):
    assert admin_client.get(f"/banks/{bank.pk}/").status_code == 200
    assert admin_client.get(f"/banks/{bank.pk}/trust/").status_code == 200
    tasks.drain()
    other = Client()
    other.force_login(other_admin)
    assert other.get(f"/banks/{bank.pk}/").status_code == 404
    assert other.get(f"/banks/{bank.pk}/trust/").status_code == 404
    for path in ("results", "uncertainty", "trends"):
        assert other_api.get(f"/banks/{bank.pk}/{path}").status_code == 404


def test_it_keeps_the_bootstraps_memory_bounded_and_its_figures_unchanged():
    # 4,000 kinds of call: drawn at once, 10,000 resamples would hold 320 MB of counts.
    calls = [(m, s, 1 + (s * 7 + m) % 3) for s in range(1, 90) for m in range(0, s + 1, 2)]
    tracemalloc.start()
    found = uncertainty.ratio_bootstrap(calls, resamples=2000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (
        peak < uncertainty.MEMORY_BOUND + 8 * 2000 + 2**20
    )  # the bound, the statistics and the kinds' arrays
    kinds = sorted(calls)
    x, y, n = (np.array([k[i] for k in kinds], dtype=float) for i in range(3))
    picked = np.random.default_rng(uncertainty.SEED).multinomial(int(n.sum()), n / n.sum(), size=2000)
    low, high = np.quantile((picked @ x) / (picked @ y), [0.025, 0.975])
    assert (found.low, found.high) == (float(low), float(high))


def test_it_shows_computing_then_the_trust_figures(admin_client, flag, bank):
    first = admin_client.get(f"/banks/{bank.pk}/trust/", HTTP_HX_REQUEST="true")
    assert first.status_code == 200
    assert "Resampling calls and counting confusion pairs" in first.content.decode()
    tasks.drain()
    landed = admin_client.get(f"/banks/{bank.pk}/trust/", HTTP_HX_REQUEST="true")
    assert landed.status_code == 286
    assert "calls resampled" in landed.content.decode()


def test_it_recomputes_figures_when_the_day_changes(bank, flag, monkeypatch):
    bank = Bank.objects.select_related("organization").get(pk=bank.pk)
    snapshots.results_of(bank, 30)
    Snapshot.objects.filter(bank=bank).update(day=timezone.now().date().replace(year=2000))
    assert snapshots.results_of(bank, 30).stale


def test_it_keys_each_window_and_filter_apart():
    assert snapshots.results_key(30) != snapshots.results_key(7)
    params = snapshots.parse_key(snapshots.results_key(14, group=groups.Group(groups.TENANT, 3, "Bistro")))
    assert (params.window_days, params.tenant, params.assistant) == (14, 3, None)


def test_it_recomputes_a_banks_figures_when_a_candidates_entity_benchmark_is_scored(bank, flag, monkeypatch):
    from benchmark import selectors

    bank = Bank.objects.select_related("organization").get(pk=bank.pk)
    snapshots.results_of(bank, 30)
    Bank.objects.filter(pk=bank.pk).update(snapshots_wanted_at=None, snapshots_dispatched_at=None)
    good = bank.candidates.get(position=0).transcriber_id
    later = timezone.now() + timezone.timedelta(seconds=1)
    monkeypatch.setattr(selectors, "entity_scored_since", lambda moment: {good: later})
    assert snapshots.sweep() == [bank.pk]
