"""Where a lead comes from (issue 34): beside the accuracy that ranks, each candidate's flagged lines fixed and
control lines kept, each with n, equal to a direct count; the leader line says which part alone carries the lead;
a candidate that runs the live transcriber's own model is marked with the live rows' caution; the same on the
leaderboard, the results CSV and the API."""

import csv
import io
import random

import pytest
from django.urls import reverse

from oncore.transcribers.models import Transcriber
from tests.fixtures import make_call
from transcriber_tests import actions
from transcriber_tests.actions import scores
from transcriber_tests.models import Score, Transcription
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db

SAID = ["table for four", "at eight thirty", "my name is siobhan", "the booking is for tuesday"]
HEARD = ["table for for", "at 830", "my name is shivon", "the booking is for thursday"]  # the live transcript


@pytest.fixture
def demo_like(org, tenant, live_transcriber):
    """The demo's story: one candidate runs the live transcriber's own model (it repeats the live text: keeps every
    control, fixes no flagged line); another hears what was said (fixes every flagged line) but writes the
    control lines its own way (keeps none)."""
    same = Transcriber.objects.create(
        slug="live-again",
        provider=live_transcriber.provider,
        model=live_transcriber.model,
        mode=Transcriber.STREAMING,
        display_name="Live model, streaming",
    )
    better = Transcriber.objects.create(
        slug="better", provider=Transcriber.GENERIC, model="better", display_name="Better"
    )
    bank = actions.do_create_bank(org, name="Demo-like", controls_per_flag=1)
    for t in (same, better):
        actions.do_add_candidate(bank, t, confirmed=True)
    for n in range(3):
        call = make_call(tenant, live_transcriber, caller_texts=HEARD)
        lines = list(call.lines.filter(speaker="caller").order_by("position"))
        actions.do_flag_line(lines[n], SAID[n], bank=bank, rng=random.Random(n))  # the same controls each run
    said = dict(zip(HEARD, SAID, strict=True))
    for t in Transcription.objects.filter(status__in=["queued", "running"]).select_related(
        "line", "transcriber"
    ):
        live = t.line.text
        is_flag = Score.objects.filter(flag__line=t.line).exists()
        if t.transcriber_id == same.pk:
            text = live
        else:
            text = said[live] if is_flag else f"{live} indeed"
        Transcription.objects.filter(pk=t.pk).update(status=Transcription.DONE, text=text, cost="0.000100")
        t.refresh_from_db()
        scores.score_transcription(t)
    tasks.drain()
    return bank, same, better


def test_each_card_says_what_it_fixed_and_kept_and_the_leader_line_where_the_lead_comes_from(
    admin_client, demo_like
):
    bank, same, better = demo_like
    html = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    assert "fixed 0 of 3 flagged lines · kept 3 of 3 controls" in html  # the live model
    assert "fixed 3 of 3 flagged lines · kept 0 of 3 controls" in html  # the better one
    # Both are at 50%: the tie goes to the lower mean WER, the better one; its lead comes from flagged lines.
    lead = html[html.index('id="lead-source"') :]
    lead = lead[: lead.index("</p>")]
    assert "Where the lead comes from: Better fixed 3 of 3 flagged lines" in lead
    assert "Its lead comes from the flagged lines it fixed." in lead
    card = html[html.index('aria-label="Live model, streaming"') :]
    assert "the live transcriber's model" in card[: card.index("</article>")]
    assert "largely repeats it" in card[: card.index("</article>")]


def test_a_lead_from_control_lines_alone_is_said_with_the_live_models_caution(admin_client, demo_like):
    bank, same, better = demo_like
    # The better one fails a flagged line: now the live model leads, on control lines alone.
    flag = bank.flags.order_by("pk").first()
    Score.objects.filter(flag=flag, control__isnull=True, transcriber=better).delete()
    scores.write_score(flag, None, better.pk, Score.CANDIDATE, "something else", flag.expected_text)
    tasks.drain()
    html = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    assert "★ Leader (provisional): Live model, streaming" in html
    assert "Its lead comes from control lines alone" in html
    assert "The leader is the live transcriber's own model." in html
    board = admin_client.get(reverse("tt:banks")).content.decode()
    assert "the live transcriber&#x27;s model" in board or "the live transcriber's model" in board
    assert "from control lines alone" in board
    assert "fixed 0 of 3 flagged lines · kept 3 of 3 controls" in board


def test_the_csv_and_the_api_give_the_same_parts(admin_client, api, demo_like):
    bank, same, better = demo_like
    body = b"".join(admin_client.get(reverse("tt:export_results", args=[bank.pk])).streaming_content)
    rows = {
        r["transcriber"]: r
        for r in csv.DictReader(io.StringIO(body.decode("utf-8-sig")))
        if r["row"] == "candidate"
    }
    assert [
        rows["Better"][k] for k in ("flags_scored", "flags_fixed", "controls_scored", "controls_kept")
    ] == [
        "3",
        "3",
        "3",
        "0",
    ]
    assert rows["Live model, streaming"]["live_model"] == "yes" and rows["Better"]["live_model"] == "no"
    found = api.get(f"/banks/{bank.pk}/results").json()
    cards = {c["transcriber"]["display_name"]: c for c in found["candidates"]}
    assert (
        cards["Live model, streaming"]["flags_fixed"],
        cards["Live model, streaming"]["controls_kept"],
    ) == (0, 3)
    assert cards["Live model, streaming"]["production_model"] is True
    assert found["leader"]["lead_from"] == "flags" and found["leader"]["production_model"] is False
    board = api.get("/leaderboard").json()["items"][0]["leader_summary"]
    assert (board["flags_fixed"], board["controls_kept"], board["lead_from"]) == (3, 0, "flags")


def test_the_results_api_gives_each_cards_failure_reasons(api, flag, bank, stt_server):
    bad = bank.candidates.get(position=1).transcriber
    Transcription.objects.filter(transcriber=bad, line=flag.line).update(
        status="failed", error="The vendor said no."
    )
    scores.write_score(flag, None, bad.pk, Score.CANDIDATE, None, flag.expected_text)  # no text came back
    tasks.drain()
    cards = {c["transcriber"]["id"]: c for c in api.get(f"/banks/{bank.pk}/results").json()["candidates"]}
    assert {"reason": "The vendor said no.", "lines": 1} in cards[bad.pk]["failures"]


def test_the_waiting_count_is_the_banks_candidates_queued_or_running_lines_of_its_items(
    org, bank, recorded_call, make_transcriber
):
    """What the results page says is still waiting: the bank's candidates' transcriptions, queued or running, of its
    flags' and controls' lines; another bank's lines and another transcriber's rows are not counted."""
    from transcriber_tests.queries.results import pending_for_bank

    other = actions.do_create_bank(org, name="Other", controls_per_flag=0)
    outsider = make_transcriber("outsider", "hello")
    actions.do_add_candidate(other, outsider, confirmed=True)
    flag = actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan, table for four", bank=bank)
    actions.do_flag_line(recorded_call.lines.get(position=2), "my number is oh eight seven", bank=other)
    lines = [flag.line_id, *flag.controls.values_list("line_id", flat=True)]
    candidates = list(bank.candidates.values_list("transcriber_id", flat=True))
    waiting = Transcription.objects.filter(status__in=Transcription.ACTIVE, line_id__in=lines)
    assert pending_for_bank(bank) == waiting.filter(transcriber_id__in=candidates).count() == 2 * len(lines)
    Transcription.objects.filter(transcriber_id=candidates[0], line_id=flag.line_id).update(status="running")
    assert pending_for_bank(bank, [candidates[0]]) == len(lines)  # running rows wait too
    assert pending_for_bank(bank, []) == 0 and pending_for_bank(other) == 1
    tasks.drain()
    assert pending_for_bank(bank) == 0
