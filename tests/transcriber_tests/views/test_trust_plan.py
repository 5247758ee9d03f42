"""The flags planner as a person reads it (issue 34, 5.2): its rates are over the lines both the leader and the
runner-up scored (those McNemar counts), not over every line of the window, and it says it is provisional while
the bank's transcriptions are still waiting."""

import pytest
from django.urls import reverse

from tests.transcriber_tests.support import read
from transcriber_tests import actions
from transcriber_tests.queries import snapshots
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


def trust_text(client, bank) -> str:
    return read(client.get(reverse("tt:bank_trust", args=[bank.pk])).content)


def test_the_plan_takes_its_rates_over_the_lines_both_scored_and_says_when_it_is_provisional(
    admin_client, api, flag, bank, recorded_call
):
    # One flag scored: Good right on it, Bad wrong; both wrong on its control. Two lines both scored.
    assert "Resampling calls" in trust_text(
        admin_client, bank
    )  # the trust key is read once: the queue keeps it
    snapshots.drain()
    done = trust_text(admin_client, bank)
    assert "Test good alone right on 50.0% of them, Test bad alone on 0.0%" in done
    assert "on the 2 lines both scored" in done
    assert "from the 2 lines both candidates scored:" in done
    assert "Provisional" not in done

    # A second flag, its transcriptions waiting: the window has 4 lines, 2 of them scored by both.
    later = recorded_call.lines.get(position=4)
    actions.do_flag_line(later, "my number is oh eight seven", bank=bank)
    snapshots.drain()  # the figures again, the transcriptions still waiting
    waiting = trust_text(admin_client, bank)
    assert "Test good alone right on 50.0% of them" in waiting  # not 25.0%: 1 of 2, not 1 of 4
    assert "from the 2 lines both candidates scored (of the window's 4)" in waiting
    assert (
        "Provisional: 4 line transcriptions of this bank were still waiting when these figures were computed; "
        "the rates, and so the plan, will move as they are scored." in waiting
    )
    body = api.get(f"/banks/{bank.pk}/uncertainty").json()
    assert (body["lines"], body["lines_both_scored"], body["pending"]) == (4, 2, 4)
    assert body["more_flags"]["leader_only_rate"] == 0.5

    tasks.drain()
    scored = trust_text(admin_client, bank)
    assert "Provisional" not in scored and "lines both candidates scored:" in scored
