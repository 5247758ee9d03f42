"""What the run page, the runs list and the estimate show as text: the calibration replay beside the live text,
and money as a person reads it (never six zeros)."""

# ruff: noqa: F811 (tests take the imported fixtures as parameters)

import re

import pytest
from django.urls import reverse

from oncore.templatetags.oncore_tags import dollars, price
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run
from transcriber_tests.work import tasks as run_tasks

from ..support import Say, add_lines_a_run_leaves_out, read, scripted_judge

pytestmark = pytest.mark.django_db

# Money past the cent ("$0.000000", "$0.0043"); a catalogue price a minute ("$0.006/min") may be that fine.
SIX_ZEROS = re.compile(r"\$0\.0000|\$\d+\.\d{3,}(?!\d*/min)")


def _row(page: str, live_text: str) -> str:
    """What a person reads on the run page's line whose live text is `live_text`."""
    rows = re.findall(r'<tr id="rl-\d+">.*?</tr>', page, re.S)
    return next(read(row) for row in rows if live_text in row)


def test_it_shows_the_calibration_replay_beside_the_live_text(admin_client, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run = run_actions.do_start_run(bank, [call_a.pk, call_b.pk], confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert "under Fitzgerald Replay through the live transcriber: “under fits gerald” ≠ differs" in _row(
        page, "under Fitzgerald"
    )
    assert "four people Replay through the live transcriber: “four people” ✓ matches" in _row(
        page, "four people"
    )
    assert "title=" not in re.search(r"<span class=\"tag\"[^>]*>calibration", page).group(
        0
    )  # no tooltip to find


@pytest.fixture
def local_world(org, world):
    """Every engine free: a candidate and a live transcriber that cost nothing a minute."""
    world.live.price_per_minute = 0
    world.live.save(update_fields=["price_per_minute"])
    cand = world.candidate("local", price="0")
    bank = actions.do_create_bank(org, name="Local", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call([Say("under Fitzgerald", candidate="under fitz gerald"), Say("yes")])
    return bank, cand, call


def test_it_shows_a_local_engines_estimate_as_free_not_six_zeros(admin_client, local_world, no_judge):
    bank, cand, call = local_world
    estimate = admin_client.post(
        reverse("runs:new", args=[bank.pk]), {"more_calls": f"{call.pk}", "candidate": cand.pk}
    ).content.decode()
    text = read(estimate)
    assert "Confirm and start" in text and not SIX_ZEROS.search(text)
    assert re.search(r"Candidate audio [\d.]+ min: free \(runs on this server\)", text)
    assert "Calibration 2 lines through the live transcriber: $0.00" in text
    assert "Total $0.00" in text

    run = run_actions.do_start_run(bank, [call.pk], candidate=cand, confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    page = read(admin_client.get(reverse("runs:detail", args=[run.pk])).content)
    assert "Candidate Run local · free (runs on this server)" in page
    assert "Estimate free (nothing to pay" in page and not SIX_ZEROS.search(page)


def test_it_shows_a_vendors_estimate_and_the_judges_cost_to_the_cent(admin_client, run_setup, llm_server):
    bank, cand, call_a, call_b = run_setup
    llm_server.responder = scripted_judge
    estimate = read(
        admin_client.post(
            reverse("runs:new", args=[bank.pk]), {"more_calls": f"{call_a.pk},{call_b.pk}"}
        ).content
    )
    assert not SIX_ZEROS.search(estimate)
    assert re.search(rf"Candidate audio [\d.]+ min × {re.escape(price(cand))} = under \$0\.01", estimate)
    assert re.search(r"Judge about \d+ tokens \((under \$0\.01|\$\d+\.\d\d)\)", estimate)

    run = run_actions.do_start_run(bank, [call_a.pk, call_b.pk], confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    run.refresh_from_db()
    page = read(admin_client.get(reverse("runs:detail", args=[run.pk])).content)
    assert not SIX_ZEROS.search(page)
    assert f"output tokens, {dollars(run.judge_cost)} (" in page
    assert f"Estimate {dollars(run.estimate['total_cost'])}" in page


def test_it_lists_the_caller_lines_a_run_leaves_out_on_the_estimate_and_the_run_page(
    admin_client, org, world, no_judge
):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Left out", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call([Say("a table for two"), Say("at eight")])
    add_lines_a_run_leaves_out(call)
    summary = (
        "3 caller lines left out: 1 with no audio timing, 1 longer than the line limit, 1 past the end of the "
        "recording. The run does not replay them"
    )

    body = admin_client.post(
        reverse("runs:new", args=[bank.pk]), {"calls": [call.pk], "candidate": cand.pk}
    ).content
    assert "Lines to transcribe 2 Left out 3 caller lines" in read(body, "Estimate")
    left_out = read(body, "Left out")
    assert summary in left_out
    assert f"call {call.pk} line 5 No audio timing, so its audio cannot be cut" in left_out
    assert f"call {call.pk} line 6 130 s long: lines longer than 120 s are not replayed" in left_out
    assert f"call {call.pk} line 7 Starts at 500.0 s, after the end of its recording (" in left_out

    run = run_actions.do_start_run(bank, [call.pk], candidate=cand, confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    page = admin_client.get(reverse("runs:detail", args=[run.pk])).content
    assert "Left out 3 caller lines" in read(page)
    assert summary in read(page, "Left out")
    assert f"call {call.pk} line 6 130 s long: lines longer than 120 s are not replayed" in read(
        page, "Left out"
    )


def test_it_says_an_older_run_did_not_record_the_lines_it_left_out(admin_client, api, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run = run_actions.do_start_run(bank, [call_a.pk, call_b.pk], confirmed=True)
    # As a run started before December 2026 stored it: no left_out, and lines counting the transcribed one.
    old = {k: v for k, v in run.estimate.items() if k not in ("left_out", "left_out_lines")}
    Run.objects.filter(pk=run.pk).update(estimate={**old, "lines": 7})
    page = read(admin_client.get(reverse("runs:detail", args=[run.pk])).content)
    assert "Left out not recorded (the run started before runs listed the lines they left out)" in page
    estimate = api.get(f"/runs/{run.pk}").json()["estimate"]
    assert (estimate["lines"], estimate["already_transcribed"]) == (6, 1)
    assert estimate["left_out"] is None and estimate["left_out_lines"] is None
