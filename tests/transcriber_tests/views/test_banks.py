"""What supervisors read: the banks as a leaderboard, each candidate's accuracy week by week with its interval,
and its accuracy per error tag, each in a fixed number of queries."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from tests.fixtures import make_call
from transcriber_tests import actions, aggregates, queries
from transcriber_tests.actions import scores
from transcriber_tests.models import Flag
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db

TRUTH = "Siobhan, table for four at eight thirty"


def flag_lines(bank, call, *, days_ago=0, tags=()):
    """Flag every other caller line of the call (the others are left for controls), made into the bank `days_ago`
    days ago."""
    flags = []
    for line in call.lines.filter(speaker="caller", flag__isnull=True).order_by("position")[::2]:
        flags.append(actions.do_flag_line(line, TRUTH, bank=bank, tags=tags))
    then = timezone.now() - timedelta(days=days_ago)
    Flag.objects.filter(pk__in=[f.pk for f in flags]).update(created_at=then, joined_at=then)
    aggregates.rebuild([bank.pk])  # the per-day totals count each flag on the day it joined the bank
    scores.results_changed(bank.pk)
    return flags


def candidates(bank):
    return [c.transcriber for c in bank.candidates.order_by("position")]


def test_it_ranks_each_bank_with_its_leader_threshold_lead_waiting_work_and_window_flags(
    admin_client, org, bank, tenant, live_transcriber, make_transcriber
):
    empty = actions.do_create_bank(org, name="Empty")
    for days in (1, 2, 3, 45):
        flag_lines(
            bank,
            make_call(tenant, live_transcriber, caller_texts=["Shivon table for for at 830"] * 4),
            days_ago=days,
        )
    tasks.drain()
    pending_call = make_call(tenant, live_transcriber, caller_texts=["hello"] * 2)
    flag_lines(bank, pending_call)  # queued, not transcribed

    board = {row.bank.name: row for row in queries.leaderboard(org, 30)}
    row = board["English"]
    assert row.leader.display_name == "Test good" and row.runner_up.display_name == "Test bad"
    assert (
        row.summary.scored == 12 and row.summary.matches == 6
    )  # 6 flags right; 6 controls are the live text
    assert not row.clears_threshold  # 50% is below the bank's 60%
    assert row.lead.leader_only_right == 6 and row.lead.runner_up_only_right == 0 and row.lead.clear
    assert row.bank.n_window == 7 and row.bank.n_flags == 9  # two flags are 45 days old
    assert row.pending == 4  # two candidates on the new flag and its control
    assert (
        board["Empty"].leader is None and board["Empty"].pending == 0 and empty.pk == board["Empty"].bank.pk
    )

    content = admin_client.get(reverse("tt:banks")).content.decode()
    assert (
        "★ Test good" in content and "n=12" in content and "✗ below 60%" in content and "4 waiting" in content
    )
    assert "clear" in content and "7 <span" in content
    assert "n=16" in admin_client.get(reverse("tt:banks") + "?window=90").content.decode()


def test_the_leaderboard_asks_a_fixed_number_of_queries_however_many_banks(
    admin_client, org, make_transcriber
):
    def queries_for(n_banks):
        for i in range(n_banks):
            b = actions.do_create_bank(org, name=f"Bank {n_banks}-{i}")
            actions.do_add_candidate(b, make_transcriber(f"t{n_banks}-{i}", "hello"), confirmed=True)
        with CaptureQueriesContext(connection) as ctx:
            assert admin_client.get(reverse("tt:banks")).status_code == 200
        return len(ctx.captured_queries)

    assert queries_for(1) == queries_for(6)


def test_it_draws_each_candidates_accuracy_week_by_week_with_its_interval(
    admin_client, bank, tenant, live_transcriber
):
    for days in (0, 1, 15):
        flag_lines(bank, make_call(tenant, live_transcriber, caller_texts=["Shivon"] * 4), days_ago=days)
    tasks.drain()

    trends = queries.bank_trends(bank, 30, candidates(bank))
    good = trends[0]
    assert [w.scored for w in good.weeks] == [0, 0, 4, 0, 8]  # five weeks ending today, oldest first
    assert [w.matches for w in good.weeks] == [0, 0, 2, 0, 4]
    assert len(good.chart.points) == 2 and good.chart.line.count("M") == 2  # a gap: two runs of points
    assert len(good.chart.bands) == 2  # each run of weeks has its band (a lone week: a narrow bar)
    assert good.weeks[-1].last_day == timezone.localdate()

    content = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    assert "Accuracy week by week" in content and 'class="trend-chart"' in content and "<desc" in content
    assert "50% of 8 lines" in content  # the text alternative of the newest week
    assert content.count('class="band"') == 4 and "style=" not in content  # no inline style: the CSP holds


def test_it_breaks_accuracy_down_by_error_tag(admin_client, bank, tenant, live_transcriber):
    flag_lines(
        bank, make_call(tenant, live_transcriber, caller_texts=["Shivon"] * 4), tags=["name", "accent"]
    )
    flag_lines(bank, make_call(tenant, live_transcriber, caller_texts=["Shivon"] * 4), tags=["time"])
    tasks.drain()

    table = queries.bank_tags(bank, 30, candidates(bank))
    assert [row.tag for row in table.rows] == ["name", "time", "accent"]  # the standard tags first
    name = table.rows[0]
    assert name.flags == 2 and [(c.matches, c.scored) for c in name.cells] == [(2, 2), (0, 2)]
    assert name.best.display_name == "Test good"

    content = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    assert "By error tag" in content and "tag=accent" in content and "n=2" in content
