"""The calendar's edge (fourth penetration test, finding 3): a day parameter at the end or the start of the calendar
answered 500 (OverflowError: the day after 9999-12-31, or a midnight east of UTC on 0001-01-01, does not exist).
Every day parameter takes a day from 1970-01-01 to 2999-12-31 and answers 422 naming itself and that range
otherwise; the dashboard's calls filter says the same in words. Windows of days are 1 to 90 everywhere."""

import pytest
from django.urls import reverse

from tests.fixtures import assert_error

pytestmark = pytest.mark.django_db

RANGE = "from 1970-01-01 to 2999-12-31"
EDGES = ["9999-12-31", "0001-01-01", "1969-12-31", "3000-01-01"]


def _path(path, bank):
    return path.format(bank=bank.pk)


@pytest.mark.parametrize("day", EDGES)
@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/banks/{bank}/results", "date_to"),
        ("/banks/{bank}/results", "date_from"),
        ("/calls", "date_to"),
        ("/calls", "date_from"),
        ("/flags", "date_to"),
        ("/flags", "date_from"),
    ],
)
def test_it_answers_422_naming_a_day_parameter_and_its_range(api, bank, org, path, name, day):
    org.timezone = "Pacific/Kiritimati"  # UTC+14: its first midnight of year 1 is before year 1 in UTC
    org.save(update_fields=["timezone"])
    error = assert_error(api.get(_path(path, bank), {name: day}), 422, "validation_error")
    assert f"query.{name}: " in error["message"] and f"must be a day {RANGE}" in error["message"]
    assert error["detail"]["errors"][0]["loc"] == ["query", name]


@pytest.mark.parametrize("path", ["/banks/{bank}/results", "/calls", "/flags"])
def test_it_still_reads_the_first_and_last_days_of_the_range(api, bank, path):
    for day in ("1970-01-01", "2999-12-31"):
        assert api.get(_path(path, bank), {"date_from": day}).status_code == 200
        assert api.get(_path(path, bank), {"date_to": day}).status_code == 200
    answer = api.get(_path(path, bank), {"date_from": "1970-01-01", "date_to": "2999-12-31"})
    assert answer.status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/banks/{bank}/results",
        "/banks/{bank}/results.csv",
        "/banks/{bank}/results/groups",
        "/banks/{bank}/turns",
        "/banks/{bank}/turns.csv",
        "/banks/{bank}/trends",
        "/banks/{bank}/tags",
        "/banks/{bank}/languages",
        "/banks/{bank}/confusions",
        "/banks/{bank}/confusions.csv",
        "/banks/{bank}/expected-checks",
        "/banks/{bank}/uncertainty",
        "/leaderboard",
    ],
)
@pytest.mark.parametrize("window", ["0", "91", "99999999999999999999999", "-1"])
def test_it_answers_422_naming_a_window_out_of_its_range(api, bank, path, window):
    error = assert_error(api.get(_path(path, bank), {"window": window}), 422, "validation_error")
    assert "query.window" in error["message"]
    assert error["detail"]["errors"][0]["loc"] == ["query", "window"]


@pytest.mark.parametrize("day", EDGES)
@pytest.mark.parametrize("name", ["date_from", "date_to"])
def test_the_calls_page_says_which_days_it_takes(admin_client, org, name, day):
    org.timezone = "Pacific/Kiritimati"
    org.save(update_fields=["timezone"])
    response = admin_client.get(reverse("tt:calls"), {name: day})
    assert response.status_code == 422
    assert f"Choose a day {RANGE}." in response.content.decode()


@pytest.mark.parametrize("name", ["tt:bank", "tt:turn_table", "tt:bank_trust", "tt:export_results"])
@pytest.mark.parametrize("window", ["99999999999999999999999", "-5", "9999-12-31"])
def test_dashboard_windows_are_read_within_their_range(admin_client, bank, name, window):
    response = admin_client.get(reverse(name, args=[bank.pk]), {"window": window})
    assert response.status_code == 200
