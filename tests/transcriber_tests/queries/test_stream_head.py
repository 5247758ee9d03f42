"""Streaming's head latency and its tail (issue 37, item 3), against the rows they come from: a streaming
candidate's time to first partial (p50/p95 with n, p99 only from 100 lines) and partial stability equal a direct
count of its replays, on the card, the CSV and the API; and where a bank holds one model in both modes, the paired
difference in accuracy between them (lines and calls resampled) equals a direct computation from the scores."""

import csv
import io
import random
from collections import Counter, defaultdict
from types import SimpleNamespace

import pytest
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse

from oncore.transcribers.models import Transcriber
from tests.fixtures import make_call
from tests.transcriber_tests.support import read
from transcriber_tests import actions, queries
from transcriber_tests.actions import scores
from transcriber_tests.lib import tradeoff as lib_tradeoff
from transcriber_tests.lib import trust as lib_trust
from transcriber_tests.models import Score, Transcription
from transcriber_tests.queries import trust
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db

WORDS = ["alpha", "bravo", "charlie", "delta"]


@pytest.fixture
def modes(org, tenant, live_transcriber):
    """One model in both modes (and a third candidate) over 8 calls of 4 lines, one or two flags a call with a
    control line each: the streaming candidate mishears every third line of its replays, the batch one every
    fourth. Each streaming replay k (in line order) took 0.10 + 0.01 k s to its first partial after the caller
    started, revised its partials k % 3 times and gave 1 + k % 2 final segments, the first of which differed from
    its last partial when k % 4 == 0."""
    streaming, batch, other = (
        Transcriber.objects.create(
            slug=slug, provider=Transcriber.GENERIC, model=model, mode=mode, display_name=name
        )
        for slug, model, mode, name in (
            ("m-streaming", "m1", Transcriber.STREAMING, "M1 streaming"),
            ("m-batch", "m1", Transcriber.BATCH, "M1 batch"),
            ("other", "m2", Transcriber.BATCH, "Other"),
        )
    )
    bank = actions.do_create_bank(org, name="Modes", controls_per_flag=1)
    for t in (streaming, batch, other):
        actions.do_add_candidate(bank, t, confirmed=True)
    rng = random.Random(37)
    for c in range(8):
        call = make_call(tenant, live_transcriber, caller_texts=[f"call {c} {w} please" for w in WORDS])
        for line in call.lines.filter(speaker="caller").order_by("position")[: 1 + c % 2]:
            actions.do_flag_line(line, line.text, bank=bank, rng=rng, confirm_matches_live=True)
    k = Counter()
    for t in Transcription.objects.filter(status__in=Transcription.ACTIVE).order_by(
        "line_id", "transcriber_id"
    ):
        i = k[t.transcriber_id]
        k[t.transcriber_id] += 1
        wrong = (t.transcriber_id == streaming.pk and i % 3 == 0) or (
            t.transcriber_id == batch.pk and i % 4 == 0
        )
        fields = {"status": Transcription.DONE, "cost": "0", "latency_s": 0.3, "audio_seconds": 0.6}
        fields["text"] = "something else" if wrong else t.line.text
        if t.transcriber_id == streaming.pk:
            fields |= {
                "mode": Transcription.STREAMING,
                "frames_sent": 30,
                "frames_off_schedule": 0,
                "time_to_first_partial_s": round(0.10 + 0.01 * i, 4),
                "partial_revisions": i % 3,
                "final_segments": 1 + i % 2,
                "finals_revised": 1 if i % 4 == 0 else 0,
            }
        Transcription.objects.filter(pk=t.pk).update(**fields)
        t.refresh_from_db()
        with transaction.atomic():  # as the queue's finish does: scoring locks the flags
            scores.score_transcription(t)
    bank.refresh_from_db()
    return SimpleNamespace(bank=bank, streaming=streaming, batch=batch, other=other, replays=k[streaming.pk])


def test_time_to_first_partial_and_stability_equal_a_direct_count_of_the_replays(modes):
    bank = modes.bank
    t = queries.tradeoff.bank_tradeoff(bank, queries.bank_results(bank))
    choice = t.by_id[modes.streaming.pk]
    rows = Transcription.objects.filter(transcriber=modes.streaming)
    heads = sorted(r.time_to_first_partial_s for r in rows)
    n = len(heads)
    assert n == modes.replays > 0
    head = choice.first_partial
    assert head.lines == n and head.p99_s is None  # under 100 lines: no p99
    assert head.p50_s == heads[lib_tradeoff.nearest_rank(n, 50) - 1]
    assert head.p95_s == heads[lib_tradeoff.nearest_rank(n, 95) - 1]
    paced = choice.pacing
    assert paced.revisions == sum(r.partial_revisions for r in rows)
    assert paced.final_segments == sum(r.final_segments for r in rows)
    assert paced.finals_revised == sum(r.finals_revised for r in rows)
    assert paced.stable_lines == n
    # A batch candidate has none of them.
    assert t.by_id[modes.batch.pk].first_partial is None and t.by_id[modes.batch.pk].stability_words == ""


def test_the_card_the_csv_and_the_api_give_the_head_latency_and_the_stability(modes, admin_client, api):
    bank = modes.bank
    choice = queries.tradeoff.bank_tradeoff(bank, queries.bank_results(bank)).by_id[modes.streaming.pk]
    head, paced = choice.first_partial, choice.pacing
    words = lib_tradeoff.seconds_words
    page = read(admin_client.get(reverse("tt:bank", args=[bank.pk])).content)
    assert f"Time to first partial p50 / p95 {words(head.p50_s)} / {words(head.p95_s)} n={head.lines}" in page
    per_line = paced.revisions / paced.stable_lines
    share = paced.finals_revised / paced.final_segments
    assert (
        f"Partial stability {per_line:.1f} revisions per line; {paced.finals_revised} of {paced.final_segments} "
        f"finals ({share:.1%}) differ from the last partial shown n={paced.stable_lines}"
    ) in page
    assert "p99" not in page  # no latency here has 100 lines

    response = admin_client.get(reverse("tt:export_results", args=[bank.pk]))
    body = b"".join(response.streaming_content).decode("utf-8-sig")
    rows = {r["transcriber"]: r for r in csv.DictReader(io.StringIO(body)) if r["row"] == "candidate"}
    streamed = rows["M1 streaming"]
    assert streamed["first_partial_lines"] == str(head.lines)
    assert float(streamed["first_partial_p50_s"]) == head.p50_s
    assert float(streamed["first_partial_p95_s"]) == head.p95_s
    assert streamed["first_partial_p99_s"] == "" and streamed["latency_p99_s"] == ""
    assert float(streamed["partial_revisions_per_line"]) == round(per_line, 4)
    assert (streamed["final_segments"], streamed["finals_revised"]) == (
        str(paced.final_segments),
        str(paced.finals_revised),
    )
    assert rows["M1 batch"]["first_partial_lines"] == "" and rows["M1 batch"]["final_segments"] == ""

    cards = {c["transcriber"]["id"]: c for c in api.get(f"/banks/{bank.pk}/results").json()["candidates"]}
    latency = cards[modes.streaming.pk]["latency"]
    assert latency["p99_s"] is None
    assert latency["time_to_first_partial"] == {
        "lines": head.lines,
        "p50_s": head.p50_s,
        "p95_s": head.p95_s,
        "p99_s": None,
        "mean_s": round(head.mean_s, 6),
    }
    assert latency["stability"] == {
        "lines": paced.stable_lines,
        "revisions": paced.revisions,
        "revisions_per_line": round(per_line, 4),
        "final_segments": paced.final_segments,
        "finals_revised": paced.finals_revised,
        "finals_revised_share": round(share, 4),
    }
    batch = cards[modes.batch.pk]["latency"]
    assert batch.get("time_to_first_partial") is None and batch.get("stability") is None


@pytest.mark.parametrize("n", [99, 100])
def test_a_p99_is_given_only_from_100_lines(n):
    values = [0.1 + 0.001 * i for i in range(n)]
    exact = lib_tradeoff.exact_latency(values)
    bucketed = lib_tradeoff.latency(
        [(lib_tradeoff.bucket_of(lib_tradeoff.micros(v)), 1, lib_tradeoff.micros(v), 0) for v in values]
    )
    if n < 100:
        assert exact.p99_s is None and bucketed.p99_s is None
    else:
        assert exact.p99_s == pytest.approx(values[98])  # nearest rank: the 99th of 100
        assert bucketed.p99_s == pytest.approx(values[98], rel=lib_tradeoff.RESOLUTION)
    card = render_to_string(
        "transcriber_tests/_card_tradeoff.html",
        {
            "c": SimpleNamespace(
                heading="Time to final",
                latency=bucketed,
                streaming=True,
                first_partial=exact,
                stability_words="",
                local=True,
                real_time_factor=None,
                price_words="free",
                summary=SimpleNamespace(scored=n),
                transcriber=SimpleNamespace(price_source=""),
                switch_words="",
                off_schedule="",
            )
        },
    )
    text = read(card)
    words = lib_tradeoff.seconds_words
    if n < 100:
        assert "p99" not in text
        assert f"Time to first partial p50 / p95 {words(exact.p50_s)} / {words(exact.p95_s)} n=99" in text
    else:
        assert (
            f"Time to final p50 / p95 / p99 {words(bucketed.p50_s)} / {words(bucketed.p95_s)} / "
            f"{words(bucketed.p99_s)} n=100"
        ) in text
        assert (
            f"Time to first partial p50 / p95 / p99 {words(exact.p50_s)} / {words(exact.p95_s)} / "
            f"{words(exact.p99_s)} n=100"
        ) in text


def _direct(bank, first, second):
    """(per-line kinds, per-call histogram) of the two candidates' scores on the items both scored, straight from
    the Score rows: a line is (1, first right and not second, second right and not first); a call is its flags
    that joined the bank on one day, with their controls."""
    outcome = defaultdict(dict)
    for s in Score.objects.filter(flag__bank=bank, source="candidate", failed=False).select_related(
        "flag__line"
    ):
        item = (s.flag_id, s.control_id)
        outcome[item][s.transcriber_id] = (s.match, s.flag.line.call_id, s.flag.joined_at.date())
    lines, calls = Counter(), defaultdict(lambda: [0, 0, 0])
    for by in outcome.values():
        if first.pk in by and second.pk in by:
            a, b = by[first.pk][0], by[second.pk][0]
            kind = (1, int(a and not b), int(b and not a))
            lines[kind] += 1
            tally = calls[by[first.pk][1:]]
            for j in range(3):
                tally[j] += kind[j]
    call_histogram = Counter(tuple(v) for v in calls.values())
    return lines, call_histogram


def test_the_batch_and_streaming_difference_equals_a_direct_computation(modes):
    found = trust.bank_trust(modes.bank, 30)
    assert [(m.streaming, m.batch) for m in found.modes] == [(modes.streaming, modes.batch)]
    d = found.modes[0].difference
    lines, calls = _direct(modes.bank, modes.streaming, modes.batch)
    both = sum(lines.values())
    s_only = sum(n for (_, a, _), n in lines.items() if a)
    b_only = sum(n for (_, _, b), n in lines.items() if b)
    assert (d.both, d.first_only, d.second_only) == (both, s_only, b_only)
    assert d.estimate == (s_only - b_only) / both
    assert s_only < b_only  # streaming misses every third line, batch every fourth: streaming is behind
    by_lines = lib_trust.ratio_bootstrap([(a - b, one, n) for (one, a, b), n in lines.items()])
    by_calls = lib_trust.ratio_bootstrap([(a - b, one, n) for (one, a, b), n in calls.items()])
    assert (d.lines.low, d.lines.high, d.lines.calls) == (by_lines.low, by_lines.high, both)
    assert (d.calls.low, d.calls.high, d.calls.calls) == (by_calls.low, by_calls.high, 8)
    assert d.p_value == lib_trust.scoring.mcnemar_exact(s_only, b_only)


def test_the_trust_section_and_the_api_give_the_difference_between_the_modes(modes, admin_client, api):
    bank = modes.bank
    d = trust.bank_trust(bank, 30).modes[0].difference
    url = reverse("tt:bank_trust", args=[bank.pk])
    admin_client.get(url, headers={"HX-Request": "true"})  # asks the queue for the figures
    tasks.drain()
    html = admin_client.get(url, headers={"HX-Request": "true"})
    text = read(html.content)
    points = lambda x: f"{x * 100:+.1f}"  # noqa: E731
    assert "m1 streamed against the same model in batch" in text
    assert (
        f"M1 streaming (streaming) less M1 batch (batch) on the {d.both} lines both scored: "
        f"{points(d.estimate)} points; 95% interval {points(d.lines.low)} to {points(d.lines.high)} points "
        f"resampling lines, {points(d.calls.low)} to {points(d.calls.high)} resampling the 8 calls."
    ) in text
    body = api.get(f"/banks/{bank.pk}/uncertainty").json()
    assert body["modes"] == [
        {
            "streaming": {"id": modes.streaming.pk, "display_name": "M1 streaming"}
            | {k: v for k, v in body["modes"][0]["streaming"].items() if k not in ("id", "display_name")},
            "batch": body["modes"][0]["batch"],
            "lines_both_scored": d.both,
            "streaming_only_right": d.first_only,
            "batch_only_right": d.second_only,
            "difference": d.estimate,
            "lines_low": d.lines.low,
            "lines_high": d.lines.high,
            "calls": {"estimate": d.calls.estimate, "low": d.calls.low, "high": d.calls.high, "calls": 8},
            "mcnemar_p": d.p_value,
        }
    ]
    assert body["modes"][0]["batch"]["id"] == modes.batch.pk
