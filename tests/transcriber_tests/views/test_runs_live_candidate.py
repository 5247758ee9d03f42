"""A full-call run whose candidate is the live transcriber of its calls says so before it starts (and on its page):
it replays the transcriber the calls already ran on, so it measures only the recording path, not a switch."""

import pytest
from django.urls import reverse

from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run

from ..support import Say

pytestmark = pytest.mark.django_db

WARNING = "can only measure the recording path"


def test_it_warns_on_the_estimate_when_the_candidate_is_the_live_transcriber(
    admin_client, run_setup, world, no_judge
):
    bank, cand, call_a, call_b = run_setup
    actions.do_add_candidate(bank, world.live, confirmed=True)
    url = reverse("runs:new", args=[bank.pk])

    other = admin_client.post(url, {"calls": [call_a.pk, call_b.pk], "candidate": cand.pk}).content.decode()
    assert "Confirm and start" in other and WARNING not in other

    live = admin_client.post(
        url, {"calls": [call_a.pk, call_b.pk], "candidate": world.live.pk}
    ).content.decode()
    assert "Confirm and start" in live and WARNING in live
    assert f"{world.live} is the live transcriber of all 2 of these calls" in live
    assert not Run.objects.exists()

    estimate = run_actions.estimate_run(bank, [call_a.pk, call_b.pk], world.live)
    assert estimate.calls_already_on_candidate == 2 and estimate.as_dict()["calls_already_on_candidate"] == 2


def test_it_counts_only_the_calls_that_ran_on_the_candidate_and_says_so_on_the_runs_page(
    admin_client, run_setup, world, no_judge
):
    bank, cand, call_a, call_b = run_setup
    call_c = world.call([Say("hello there")], live=cand)  # this call ran on the bank's candidate
    actions.do_add_candidate(bank, world.live, confirmed=True)
    run = run_actions.do_start_run(bank, [call_a.pk, call_c.pk], candidate=world.live, confirmed=True)
    assert run.estimate["calls_already_on_candidate"] == 1
    content = admin_client.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert WARNING in content and "is the live transcriber of 1 of these 2 calls" in content


def test_the_api_estimate_says_how_many_calls_already_run_on_the_candidate(api, run_setup, world, no_judge):
    bank, cand, call_a, call_b = run_setup
    actions.do_add_candidate(bank, world.live, confirmed=True)
    body = api.post(
        f"/banks/{bank.pk}/runs/estimate", {"call_ids": [call_a.pk], "candidate_id": world.live.pk}
    ).json()
    assert body["calls_already_on_candidate"] == 1
