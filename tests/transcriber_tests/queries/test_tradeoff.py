"""Latency and cost beside accuracy, per tenant and assistant (issue 27), on small banks built for the purpose: the
figures each surface shows (the results page, the leaderboard, the turn table, the CSV files, the API) against a
direct count of the rows. Every latency here is constructed, none measured on this machine."""

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from oncore.calls.models import Call, Line
from oncore.transcribers.models import Transcriber
from tests.fixtures import assert_error, make_call
from transcriber_tests import actions, aggregates, queries
from transcriber_tests.actions import scores
from transcriber_tests.lib import scoring
from transcriber_tests.lib import tradeoff as tradeoffs
from transcriber_tests.models import Score, Transcription

pytestmark = pytest.mark.django_db

TEXTS = ["table for four", "eight thirty", "my name is niamh", "tuesday please", "account number one"]


def _finish(transcription, text, latency_s, audio_s=1.6):
    Transcription.objects.filter(pk=transcription.pk).update(
        status=Transcription.DONE, text=text, cost="0.000160", latency_s=latency_s, audio_seconds=audio_s
    )
    transcription.refresh_from_db()
    scores.score_transcription(transcription)


@pytest.fixture
def world(org, tenant, live_transcriber, make_transcriber):
    """A bank of three candidates (a fast vendor, a slow one, a local engine) over two tenants' calls: Bistro has
    two calls (one assistant each), Cafe one; every caller line is 1.6 s. An old call (40 days ago) counts in no
    volume. Each candidate's latency on each line is made up: fast 0.2 s + 0.01 s per line, slow 1 s + 0.1 s,
    local 0.4 s + 0.02 s (so its real-time factor is known exactly)."""
    live_transcriber.price_per_minute = Decimal("0.002")
    live_transcriber.save(update_fields=["price_per_minute"])
    fast = make_transcriber("fast", price="0.0043")
    slow = make_transcriber("slow", price="0.006")
    local = Transcriber.objects.create(
        slug="test-local", provider=Transcriber.FASTER_WHISPER, model="tiny.en", display_name="Test local"
    )
    cafe = org.tenants.create(name="Cafe", slug="cafe")
    calls = [
        make_call(tenant, live_transcriber, caller_texts=TEXTS),
        make_call(tenant, live_transcriber, caller_texts=TEXTS[:3]),
        make_call(cafe, live_transcriber, caller_texts=TEXTS[:4]),
    ]
    old = make_call(cafe, live_transcriber, caller_texts=TEXTS[:2])
    Call.objects.filter(pk=old.pk).update(started_at=timezone.now() - timedelta(days=40))
    bank = actions.do_create_bank(org, name="English", controls_per_flag=0)
    for t in (fast, slow, local):
        actions.do_add_candidate(bank, t, confirmed=True)
    lines = [ln for c in calls for ln in c.lines.filter(speaker="caller").order_by("position")]
    for line in lines:
        actions.do_flag_line(line, line.text, bank=bank, confirm_matches_live=True)
    latency = {fast.pk: (0.2, 0.01), slow.pk: (1.0, 0.1), local.pk: (0.4, 0.02)}
    for t in Transcription.objects.order_by("line_id", "transcriber_id"):
        base, step = latency[t.transcriber_id]
        i = lines.index(t.line)
        wrong = (t.transcriber_id == fast.pk and i % 3 == 0) or (t.transcriber_id == slow.pk and i % 4 == 1)
        _finish(t, "something else entirely" if wrong else t.line.text, round(base + step * i, 6))
    bank.refresh_from_db()
    return {
        "bank": bank,
        "fast": fast,
        "slow": slow,
        "local": local,
        "bistro": tenant,
        "cafe": cafe,
        "calls": calls,
    }


def _latencies(bank, transcriber, **call):
    return list(
        Score.objects.filter(
            flag__bank=bank,
            transcriber=transcriber,
            source=Score.CANDIDATE,
            latency_s__isnull=False,
            **{f"flag__line__call__{k}": v for k, v in call.items()},
        ).values_list("latency_s", flat=True)
    )


def _direct(bank, transcriber, **call):
    qs = Score.objects.filter(
        flag__bank=bank,
        transcriber=transcriber,
        source=Score.CANDIDATE,
        failed=False,
        **{f"flag__line__call__{k}": v for k, v in call.items()},
    )
    return qs.count(), qs.filter(match=True).count()


def _caller_seconds(calls):
    return sum(
        ln.end_s - ln.start_s
        for c in calls
        for ln in Line.objects.filter(call=c, speaker="caller", start_s__isnull=False)
    )


def test_each_candidates_latency_is_read_from_the_buckets_within_the_resolution(world):
    bank = world["bank"]
    since = queries.window_start(30)
    found = queries.latency.latencies(bank.pk, since)
    for key in ("fast", "slow", "local"):
        t = world[key]
        exact = _latencies(bank, t)
        got = found[t.pk]
        assert got.lines == len(exact) == 12
        for percent, value in ((50, got.p50_s), (95, got.p95_s)):
            truth = tradeoffs.exact_percentile(exact, percent)
            assert abs(value - truth) <= tradeoffs.RESOLUTION * truth
        micros = [tradeoffs.micros(x) for x in exact]
        assert got.real_time_factor == sum(micros) / (12 * tradeoffs.micros(1.6))
    assert (
        queries.tradeoff.bank_tradeoff(bank, queries.bank_results(bank))
        .by_id[world["fast"].pk]
        .real_time_factor
        is None
    )


def test_per_tenant_and_per_assistant_accuracy_equal_a_direct_count(world):
    bank, bistro, cafe = world["bank"], world["bistro"], world["cafe"]
    candidates = [c.transcriber for c in queries.candidates_of(bank)]
    table = queries.bank_groups(bank, 30, candidates, "tenant")
    assert [row.group.name for row in table.rows] == ["Bistro", "Cafe"]  # most lines first
    assert [row.lines for row in table.rows] == [8, 4]
    for row, tenant in zip(table.rows, (bistro, cafe), strict=True):
        for t, cell in zip(candidates, row.cells, strict=True):
            assert (cell.scored, cell.matches) == _direct(bank, t, tenant=tenant)
        best = scoring.rank(row.cells, 0).leader
        assert row.best.pk == best
    by_assistant = queries.bank_groups(bank, 30, candidates, "assistant")
    assert len(by_assistant.rows) == 3  # make_call gives each call its own assistant
    for row in by_assistant.rows:
        for t, cell in zip(candidates, row.cells, strict=True):
            assert (cell.scored, cell.matches) == _direct(bank, t, assistant_id=row.group.id)
    assert not aggregates.rebuild(fix=False).any  # what the writes kept is what a recount finds


def test_a_filter_recomputes_the_cards_lead_latency_and_volume_on_the_tenants_calls(world):
    bank, cafe = world["bank"], world["cafe"]
    group = queries.groups.group_of(bank.organization, tenant=cafe.pk)
    r = queries.bank_results(bank, group=group)
    for card in r.cards:
        assert (card.summary.scored, card.summary.matches) == _direct(bank, card.transcriber, tenant=cafe)
    t = queries.tradeoff.bank_tradeoff(bank, r)
    slow = t.by_id[world["slow"].pk]
    assert slow.latency.lines == 4
    assert abs(slow.latency.p95_s - max(_latencies(bank, world["slow"], tenant=cafe))) <= 0.023 * 2
    assert t.volume.calls == 1  # the old call is left out
    assert t.volume.minutes == tradeoffs.minutes_of(_caller_seconds([world["calls"][2]]))
    other = queries.groups.group_of(bank.organization, assistant=world["calls"][0].assistant_id)
    assert other.label == "assistant Bookings (Bistro)"


def test_the_monthly_projection_is_the_last_30_days_minutes_times_the_price(world):
    bank = world["bank"]
    r = queries.bank_results(bank)
    t = queries.tradeoff.bank_tradeoff(bank, r)
    minutes = tradeoffs.minutes_of(
        _caller_seconds(world["calls"])
    )  # 12 caller lines of 1.6 s, not the old call
    assert minutes == Decimal("0.320")
    assert t.volume.minutes == minutes and t.volume.calls == 3
    now = (minutes * Decimal("0.002")).quantize(Decimal("0.000001"))
    assert t.volume.now == now
    fast = t.by_id[world["fast"].pk]
    assert fast.projection.cost == minutes * Decimal("0.0043")
    assert fast.projection.difference == minutes * Decimal("0.0043") - now
    assert fast.switch_words == (
        "Switching to Test fast: under $0.01 a month at your last 30 days' volume (0.3 minutes), "
        "under $0.01 more than now."
    )
    local = t.by_id[world["local"].pk]
    assert local.projection.cost == 0 and local.real_time_factor is not None
    assert local.switch_words.startswith(
        "Switching to Test local: free (runs on this server), real-time factor"
    )
    assert fast.cost_per_line == (Decimal("0.000160") * fast.summary.scored / fast.summary.scored)
    assert fast.price_words == "$4.30 per 1,000 min"


def test_the_switch_sentence_says_more_or_less_than_now_at_a_real_volume():
    p = tradeoffs.projection(1, "0.0043", Decimal("12000"), Decimal("24.00"), Decimal(0), local=False)

    class T:
        display_name = "Deepgram Nova-3"

    assert queries.tradeoff.switch_words(T, p) == (
        "Switching to Deepgram Nova-3: about $51.60 a month at your last 30 days' volume (12,000 minutes), "
        "$27.60 more than now."
    )
    cheaper = tradeoffs.projection(1, "0.0015", Decimal("12000"), Decimal("24.00"), Decimal(0), local=False)
    assert queries.tradeoff.switch_words(T, cheaper).endswith("$6.00 less than now.")
    unknown = tradeoffs.projection(
        1, "0.0015", Decimal("12000"), Decimal("24.00"), Decimal("10"), local=False
    )
    assert queries.tradeoff.switch_words(T, unknown) == (
        "Switching to Deepgram Nova-3: about $18.00 a month at your last 30 days' volume (12,000 minutes): on the "
        "11,990 minutes whose cost now is known, $6.02 less than now; the other 10 minutes ran on a live "
        "transcriber that is not in the catalogue (named on the calls only)."
    )
    none_known = tradeoffs.projection(1, "0.0015", Decimal("10"), Decimal(0), Decimal("10"), local=False)
    assert queries.tradeoff.switch_words(T, none_known).endswith(
        "what it costs now is not known: 10 minutes ran on a live transcriber that is not in the catalogue (named "
        "on the calls only)."
    )


def test_the_results_page_shows_latency_cost_the_chart_and_the_tenant_table(admin_client, world):
    bank = world["bank"]
    page = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    r = queries.bank_results(bank)
    t = queries.tradeoff.bank_tradeoff(bank, r)
    fast = t.by_id[world["fast"].pk]
    words = f"{tradeoffs.seconds_words(fast.latency.p50_s)} / {tradeoffs.seconds_words(fast.latency.p95_s)}"
    assert f'{words} <span class="muted">n=12</span>' in page
    assert (
        "Switching to Test fast: under $0.01 a month at your last 30 days&#x27; volume (0.3 minutes)" in page
    )
    assert "Switching to Test local: free (runs on this server), real-time factor" in page
    assert (
        '<svg class="tradeoff-chart"' in page
        and 'aria-labelledby="tradeoff-chart-title tradeoff-chart-desc"' in page
    )
    assert "Test slow: " in page.split('<desc id="tradeoff-chart-desc">')[1].split("</desc>")[0]
    assert "<caption>Each candidate's accuracy, latency and cost (the chart's figures)</caption>" in page
    assert 'id="by-tenant-title"' in page and f"?window=30&amp;tenant={world['cafe'].pk}" in page
    assert "Your volume: 3 calls with 0.3 minutes of caller audio" in page


def test_the_results_page_filters_by_tenant_and_refuses_another_organizations(
    admin_client, world, other_tenant
):
    bank, cafe = world["bank"], world["cafe"]
    url = reverse("tt:bank", args=[bank.pk])
    page = admin_client.get(url, {"tenant": cafe.pk}).content.decode()
    assert "Showing the lines of <strong>tenant Cafe</strong>'s calls only" in page
    assert "on 4 scored lines" in page or "on 3 scored lines" in page
    refused = admin_client.get(url, {"tenant": other_tenant.pk})
    assert refused.status_code == 422
    assert "That filter cannot be applied" in refused.content.decode()
    assert admin_client.get(url, {"tenant": "abc"}).status_code == 422


def test_the_api_carries_every_new_figure_with_its_n(api, world, other_tenant):
    bank = world["bank"]
    body = api.get(f"/banks/{bank.pk}/results").json()
    cards = {c["transcriber"]["id"]: c for c in body["candidates"]}
    fast, local = cards[world["fast"].pk], cards[world["local"].pk]
    assert fast["latency"]["lines"] == 12 and fast["latency"]["real_time_factor"] is None
    assert local["latency"]["real_time_factor"] is not None
    assert fast["price"] == {
        "local": False,
        "per_1000_minutes": "4.300000",
        "source": "",
        "source_date": None,
    }
    assert fast["monthly"]["minutes"] == 0.32 and fast["monthly"]["cost"] == "0.001376"
    assert fast["monthly"]["now"] == "0.000640" and fast["monthly"]["difference"] == "0.000736"
    assert fast["cost_per_scored_line"] == "0.000160"
    assert body["volume"]["calls"] == 3 and body["volume"]["minutes"] == 0.32
    assert {p["transcriber_id"] for p in body["tradeoff"]["points"]} == set(cards)
    assert set(body["tradeoff"]["pareto_front"]) == {k for k, c in cards.items() if c["on_pareto_front"]}
    assert body["filter"] is None
    cafe = api.get(f"/banks/{bank.pk}/results", {"tenant_id": world["cafe"].pk}).json()
    assert cafe["filter"]["name"] == "Cafe" and cafe["volume"]["calls"] == 1
    assert_error(api.get(f"/banks/{bank.pk}/results", {"tenant_id": other_tenant.pk}), 404, "not_found")
    groups = api.get(f"/banks/{bank.pk}/results/groups", {"by": "tenant"}).json()
    assert [(r["name"], r["lines"]) for r in groups["rows"]] == [("Bistro", 8), ("Cafe", 4)]
    first = groups["rows"][0]["cells"][0]
    assert (first["scored"], first["matches"]) == _direct(bank, world["fast"], tenant=world["bistro"])


def test_the_results_csv_carries_latency_cost_and_the_tenant_rows(admin_client, world):
    bank = world["bank"]
    response = admin_client.get(reverse("tt:export_results", args=[bank.pk]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    fast = next(r for r in rows if r["row"] == "candidate" and r["transcriber"] == "Test fast")
    assert fast["latency_lines"] == "12" and fast["price_per_1000_min_usd"] == "4.300000"
    assert fast["monthly_minutes"] == "0.320" and fast["monthly_cost_usd"] == "0.001376"
    tenants = [r for r in rows if r["row"] == "tenant"]
    assert {r["group_name"] for r in tenants} == {"Bistro", "Cafe"}
    cafe_fast = next(r for r in tenants if r["group_name"] == "Cafe" and r["transcriber"] == "Test fast")
    assert (int(cafe_fast["scored"]), int(cafe_fast["matches"])) == _direct(
        bank, world["fast"], tenant=world["cafe"]
    )
    assert {r["row"] for r in rows} >= {"candidate", "live (reference)", "tenant", "assistant"}


def test_the_leaderboard_shows_the_leaders_latency_and_monthly_cost(admin_client, world):
    row = queries.leaderboard(world["bank"].organization, 30)[0]
    assert row.latency is not None and row.latency.lines == 12
    page = admin_client.get(reverse("tt:banks")).content.decode()
    assert "Latency p95" in page and "A month at your volume" in page
    assert tradeoffs.seconds_words(row.latency.p95_s) in page
