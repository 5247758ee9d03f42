"""The window is as long as it says and starts where a flag joined the bank: "the last N days" are today and the
N-1 days before it, in whole days of the organization's timezone (UTC unless it sets another); a flag counts from
the day it joined its bank (made in it, or moved in), and the per-day totals stay exact under moves."""

from datetime import UTC, datetime, time, timedelta
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from tests.transcriber_tests.support import read
from transcriber_tests import actions, aggregates, queries
from transcriber_tests.actions import scores
from transcriber_tests.models import Flag
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


def test_a_flag_made_long_ago_and_moved_in_today_counts_from_today(admin_client, bank, recorded_call):
    line = recorded_call.lines.get(position=0)
    flag = actions.do_flag_line(line, "Siobhan, table for four at eight thirty")  # in no bank
    forty_days_ago = timezone.now() - timedelta(days=40)
    Flag.objects.filter(pk=flag.pk).update(created_at=forty_days_ago, joined_at=forty_days_ago)
    assert queries.bank_results(bank, 30).cards[0].summary.scored == 0

    actions.do_move_flag(flag, bank)
    tasks.drain()
    bank.refresh_from_db()  # results are cached until the bank's results change
    results = queries.bank_results(bank, 30)
    assert results.cards[0].summary.scored == 2  # the flag and its control, in today's totals
    assert not aggregates.rebuild(fix=False).any
    page = read(admin_client.get(reverse("tt:turn_table", args=[bank.pk])).content)
    joined = timezone.now().astimezone(UTC)
    assert f"flagged {forty_days_ago.astimezone(UTC):%-d %b}, in this bank since {joined:%-d %b}" in page

    actions.do_move_flag(flag, None)  # and out again: nothing of it is left in the totals
    bank.refresh_from_db()
    assert queries.bank_results(bank, 30).cards[0].summary.scored == 0
    assert not aggregates.rebuild(fix=False).any


def test_the_last_n_days_are_today_and_the_n_minus_1_days_before_it(bank, flag):
    today = timezone.now().astimezone(UTC).date()
    assert queries.window_start(1) == datetime.combine(today, time.min, UTC)  # one day: today
    assert queries.window_start(30) == datetime.combine(today - timedelta(days=29), time.min, UTC)
    assert queries.window_days_covered(30) == (today - timedelta(days=29), today)

    for joined, in_window in ((today - timedelta(days=29), True), (today - timedelta(days=30), False)):
        moment = datetime.combine(joined, time(0, 1), UTC)
        Flag.objects.filter(pk=flag.pk).update(joined_at=moment)
        aggregates.rebuild([bank.pk])
        scores.results_changed(bank.pk)
        bank.refresh_from_db()
        counted = queries.bank_results(bank, 30).cards[0].summary.scored
        assert (counted > 0) == in_window, (joined, counted)
        assert (queries.turn_items(bank, 30).count() > 0) == in_window


def test_the_days_are_counted_in_the_organizations_timezone(admin_client, org, bank, flag):
    auckland = ZoneInfo("Pacific/Auckland")  # UTC+13 in December: its today starts the evening before in UTC
    local_today = timezone.now().astimezone(auckland).date()
    # The flag joined at 00:30 of today in Auckland: yesterday, in UTC.
    moment = datetime.combine(local_today, time(0, 30), auckland)
    Flag.objects.filter(pk=flag.pk).update(joined_at=moment)
    aggregates.rebuild([bank.pk])
    out = StringIO()
    call_command("set_timezone", "Pacific/Auckland", "--org", org.slug, stdout=out)
    assert "counts its days in Pacific/Auckland now; recounted 1 bank" in out.getvalue()
    org.refresh_from_db()
    bank.refresh_from_db()

    assert not aggregates.rebuild(fix=False).any  # the totals were recounted in Auckland's days
    assert queries.bank_results(bank, 1).cards[0].summary.scored == 2  # today there
    page = read(admin_client.get(reverse("tt:bank", args=[bank.pk]) + "?window=1").content)
    assert (
        f"from {local_today:%-d %b %Y} to {local_today:%-d %b %Y}, today included, in whole days of "
        "Pacific/Auckland" in page
    )
    assert "in days of Pacific/Auckland" in read(admin_client.get(reverse("tt:banks")).content)


def test_it_refuses_a_timezone_that_is_not_one(org):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="is not a timezone"):
        call_command("set_timezone", "Mars/Olympus", "--org", org.slug)
