"""A streaming candidate's latency reads as its time to final wherever a person or a program reads it (the results
card, the trade-off table and chart, the leaderboard, the results CSV, the API), a batch candidate's as latency;
the CSV and the API carry each candidate's mode. Every latency here is constructed, none measured."""

import csv
import io

import pytest
from django.urls import reverse

from oncore.transcribers.models import Transcriber
from tests.fixtures import make_call
from transcriber_tests import actions, queries
from transcriber_tests.actions import scores
from transcriber_tests.lib import tradeoff as tradeoffs
from transcriber_tests.models import Transcription

pytestmark = pytest.mark.django_db

TEXTS = ["table for four", "eight thirty", "my name is niamh", "tuesday please"]


def _finish(transcription, text, latency_s):
    Transcription.objects.filter(pk=transcription.pk).update(
        status=Transcription.DONE, text=text, cost="0", latency_s=latency_s, audio_seconds=1.6
    )
    transcription.refresh_from_db()
    scores.score_transcription(transcription)


@pytest.fixture
def world(org, tenant, live_transcriber, make_transcriber):
    """A bank of a batch vendor (wrong on one line of four, 0.5 s + 0.1 s per line) and the local streaming
    engine (right on every line, time to final 0.2 s + 0.01 s per line): the streaming one leads."""
    batch = make_transcriber("batch", price="0.0043")
    streaming = Transcriber.objects.create(
        slug="test-local-streaming",
        provider=Transcriber.FASTER_WHISPER,
        model="tiny.en",
        mode=Transcriber.STREAMING,
        display_name="Test streaming",
    )
    call = make_call(tenant, live_transcriber, caller_texts=TEXTS)
    bank = actions.do_create_bank(org, name="English", controls_per_flag=0)
    actions.do_add_candidate(bank, batch, confirmed=True)
    actions.do_add_candidate(bank, streaming, confirmed=True)
    lines = list(call.lines.filter(speaker="caller").order_by("position"))
    for line in lines:
        actions.do_flag_line(line, line.text, bank=bank, confirm_matches_live=True)
    for t in Transcription.objects.order_by("line_id", "transcriber_id"):
        i = lines.index(t.line)
        if t.transcriber_id == batch.pk:
            _finish(t, "something else" if i == 0 else t.line.text, round(0.5 + 0.1 * i, 6))
        else:
            _finish(t, t.line.text, round(0.2 + 0.01 * i, 6))
    bank.refresh_from_db()
    return {"bank": bank, "batch": batch, "streaming": streaming}


def _choices(world):
    bank = world["bank"]
    t = queries.tradeoff.bank_tradeoff(bank, queries.bank_results(bank))
    return t, t.by_id[world["batch"].pk], t.by_id[world["streaming"].pk]


def test_the_latency_figures_carry_the_candidates_mode(world):
    _, batch, streaming = _choices(world)
    assert (batch.latency.mode, batch.measure) == ("batch", "latency")
    assert (streaming.latency.mode, streaming.measure) == ("streaming", "time to final")
    assert streaming.latency.lines == 4 and 0.19 < streaming.latency.p50_s < 0.24
    # a streaming session lasts as long as its audio: no real-time factor, even for a local engine
    assert streaming.latency.real_time_factor is None and streaming.real_time_factor is None


def test_the_results_page_says_time_to_final_for_the_streaming_candidate_and_latency_for_the_batch_one(
    admin_client, world
):
    _, batch, streaming = _choices(world)
    page = admin_client.get(reverse("tt:bank", args=[world["bank"].pk])).content.decode()
    ttf = f"{tradeoffs.seconds_words(streaming.latency.p50_s)} / {tradeoffs.seconds_words(streaming.latency.p95_s)}"
    lat = f"{tradeoffs.seconds_words(batch.latency.p50_s)} / {tradeoffs.seconds_words(batch.latency.p95_s)}"
    # the cards
    assert f'<dt>Time to final p50 / p95</dt><dd>{ttf} <span class="muted">n=4</span>' in page
    assert f'<dt>Latency p50 / p95</dt><dd>{lat} <span class="muted">n=4</span>' in page
    assert (
        'a live call <span class="muted">(streaming: time to first partial counts from the start of the caller'
        in page
    )
    assert (
        "Switching to Test streaming: free (runs on this server), streaming: it listens for as long" in page
    )
    # the chart: its description, its points and its axis
    desc = page.split('<desc id="tradeoff-chart-desc">')[1].split("</desc>")[0]
    assert (
        f"Test streaming: 100.0% accurate on 4 lines, p95 time to final {ttf.split(' / ')[1]} (n=4)" in desc
    )
    assert f"Test batch: 75.0% accurate on 4 lines, p95 latency {lat.split(' / ')[1]} (n=4)" in desc
    assert "p95 latency or time to final (streaming) (log scale)" in page
    # the table: the streaming row says what its figures are, and has no real-time factor
    table = page.split('<table class="data tradeoff-table">')[1].split("</table>")[0]
    row = table.split("Test streaming</th>")[1].split("</tr>")[0]
    assert (
        f'{tradeoffs.seconds_words(streaming.latency.p50_s)} <span class="small muted">time to final</span>'
        in row
    )
    assert '<span class="muted">streaming</span>' in row
    assert "time to final" not in table.split("Test batch</th>")[1].split("</tr>")[0]
    assert "time to final (streaming" in page and "from the end of the caller&#x27;s speech" in page


def test_the_leaderboard_labels_a_streaming_leaders_p95_as_time_to_final(admin_client, world):
    row = queries.leaderboard(world["bank"].organization, 30)[0]
    assert row.leader == world["streaming"] and row.latency.streaming
    page = admin_client.get(reverse("tt:banks")).content.decode()
    cell = f'{tradeoffs.seconds_words(row.latency.p95_s)} <span class="muted">n=4</span><br><span class="muted small">time to final</span>'
    assert cell in page


def test_the_results_csv_carries_the_mode_and_what_the_latency_columns_measure(admin_client, world):
    response = admin_client.get(reverse("tt:export_results", args=[world["bank"].pk]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    got = {
        r["transcriber"]: (r["mode"], r["latency_measure"], r["latency_lines"], r["real_time_factor"])
        for r in rows
        if r["row"] == "candidate"
    }
    assert got == {
        "Test batch": ("batch", "latency", "4", ""),
        "Test streaming": ("streaming", "time to final", "4", ""),
    }


def test_the_api_carries_the_mode_and_the_measure(api, world):
    body = api.get(f"/banks/{world['bank'].pk}/results").json()
    cards = {c["transcriber"]["id"]: c for c in body["candidates"]}
    batch, streaming = cards[world["batch"].pk], cards[world["streaming"].pk]
    assert (batch["mode"], batch["latency"]["mode"], batch["latency"]["measure"]) == (
        "batch",
        "batch",
        "latency",
    )
    assert (streaming["mode"], streaming["latency"]["measure"]) == ("streaming", "time to final")
    assert streaming["latency"]["lines"] == 4 and streaming["latency"]["real_time_factor"] is None
    points = {p["transcriber_id"]: p["mode"] for p in body["tradeoff"]["points"]}
    assert points == {world["batch"].pk: "batch", world["streaming"].pk: "streaming"}
    (row,) = api.get("/leaderboard").json()["items"]
    assert (row["leader_latency"]["mode"], row["leader_latency"]["measure"]) == ("streaming", "time to final")
