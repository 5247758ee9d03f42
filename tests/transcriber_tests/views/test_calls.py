"""The calls list at call-centre scale: line and flag counters stored on each call and kept by the writes that
change them, keyset pages (?after=) on the dashboard and in GET /calls, and "about N calls" past an exact count."""

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from oncore.calls.models import Call
from tests.fixtures import assert_error, make_call
from transcriber_tests import actions, aggregates, queries


@pytest.fixture
def many_calls(tenant, live_transcriber):
    """Seven calls an hour apart, newest last made; two with a tie on started_at (the id breaks it)."""
    calls = [
        make_call(tenant, live_transcriber, caller_texts=["hello", "bye"], recorded=False) for _ in range(7)
    ]
    start = datetime(2026, 3, 1, 12, tzinfo=UTC)
    for i, call in enumerate(calls):
        call.started_at = start + timedelta(hours=min(i, 5))  # the last two share a start
        call.save(update_fields=["started_at"])
    return calls


def test_it_keeps_each_calls_line_and_flag_counters(org, bank, recorded_call):
    assert (recorded_call.n_lines, recorded_call.n_flags) == (8, 0)
    line = recorded_call.lines.get(position=0)
    flag = actions.do_flag_line(line, "Siobhan, table for four at eight thirty", bank=bank)
    actions.do_flag_line(recorded_call.lines.get(position=2), "yes that is right")
    recorded_call.refresh_from_db()
    assert recorded_call.n_flags == 2
    actions.do_move_flag(flag, None)
    actions.do_delete_flag(flag)
    recorded_call.refresh_from_db()
    assert recorded_call.n_flags == 1
    assert not aggregates.rebuild(fix=False).any


def test_the_import_sets_the_line_counter(api, org, tenant, tmp_path):
    from tests.api.test_calls import _calls_file, _flac

    api.upload("/calls/import", {"file": _calls_file(), "recordings": [_flac(tmp_path)]})
    assert Call.objects.get(external_id="ext-1").n_lines == 2


def test_the_dashboard_pages_through_calls_by_cursor(admin_client, org, many_calls, monkeypatch):
    monkeypatch.setattr("transcriber_tests.views.calls.PAGE_SIZE", 3)
    seen, url = [], reverse("tt:calls")
    for _ in range(4):
        response = admin_client.get(url)
        assert response.status_code == 200
        page = response.context["calls"]
        seen += [c.pk for c in page.calls]
        assert page.total == 7 and page.exact and "7 calls" in response.content.decode()
        if page.next_after is None:
            break
        url = reverse("tt:calls") + f"?after={page.next_after}"
        assert 'rel="next"' in response.content.decode()
    assert seen == [c.pk for c in sorted(many_calls, key=lambda c: (c.started_at, c.pk), reverse=True)]


def test_the_dashboard_says_a_broken_cursor_is_broken(admin_client, org, many_calls):
    for broken in ("nonsense", "999999999999999999_1", "1_"):
        response = admin_client.get(reverse("tt:calls"), {"after": broken})
        assert (
            response.status_code == 422 and "link to a page of calls is broken" in response.content.decode()
        )


def test_the_api_pages_through_calls_by_cursor_with_filters(api, org, tenant, many_calls):
    seen, params = [], {"limit": 3, "tenant": tenant.slug}
    while True:
        body = api.get("/calls", params).json()
        assert body["count"] == 7
        seen += [c["id"] for c in body["items"]]
        assert body["has_more"] == (body["next_after"] is not None)
        if not body["has_more"]:
            break
        params["after"] = body["next_after"]
    assert seen == [c.pk for c in sorted(many_calls, key=lambda c: (c.started_at, c.pk), reverse=True)]
    dated = api.get("/calls", {"date_from": "2026-03-01", "date_to": "2026-03-01"}).json()
    assert dated["count"] == 7
    assert api.get("/calls", {"date_from": "2026-03-02"}).json()["count"] == 0
    assert_error(api.get("/calls", {"after": "not-a-cursor"}), 422, "validation_error")
    assert_error(api.get("/calls", {"after": "1" * 50}), 422, "validation_error")


def test_a_cursor_reads_back_to_the_same_call(many_calls):
    cursor = queries.CallCursor.of(many_calls[3])
    assert queries.CallCursor.parse(str(cursor)) == cursor
    with pytest.raises(ValueError):
        queries.CallCursor.parse("12_")


def test_it_counts_exactly_up_to_a_bound_and_estimates_beyond(org, many_calls, monkeypatch):
    from django.db import connection

    monkeypatch.setattr(queries.calls, "EXACT_COUNT_UP_TO", 5)
    total, exact = queries.count_about(queries.calls_list(org))
    if connection.vendor == "postgresql":
        assert not exact and total >= 6  # the planner's estimate, never below what was counted
    else:
        assert (total, exact) == (7, True)  # SQLite (local only) counts
    monkeypatch.setattr(queries.calls, "EXACT_COUNT_UP_TO", 10)
    assert queries.count_about(queries.calls_list(org)) == (7, True)


def test_the_calls_filter_lists_each_tenant_and_each_assistant_with_its_tenant_by_name(admin_client, org):
    import re

    from oncore.accounts.models import Tenant
    from oncore.calls.models import Assistant

    zeta = Tenant.objects.create(organization=org, name="Zeta Dental", slug="zeta")
    alpha = Tenant.objects.create(organization=org, name="Alpha Bistro", slug="alpha")
    Assistant.objects.create(tenant=zeta, name="Bookings")
    Assistant.objects.create(tenant=alpha, name="Orders")
    Assistant.objects.create(tenant=alpha, name="Bookings")
    page = admin_client.get(reverse("tt:calls")).content.decode()

    def options(name):
        select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', page, re.S).group(1)
        return re.findall(r"<option[^>]*>([^<]*)</option>", select)

    tenants = [t.name for t in Tenant.objects.filter(organization=org).order_by("name")]
    assert options("tenant") == ["All tenants", *tenants] and tenants.index("Alpha Bistro") < tenants.index(
        "Zeta Dental"
    )
    assistants = options("assistant")
    assert assistants[0] == "All assistants"
    assert sorted(assistants[1:]) == sorted(
        ["Bookings (Zeta Dental)", "Orders (Alpha Bistro)", "Bookings (Alpha Bistro)"]
        + [f"{a.name} ({a.tenant.name})" for a in Assistant.objects.exclude(name__in=["Bookings", "Orders"])]
    )
    assert [a.split(" (")[0] for a in assistants[1:]] == sorted(a.split(" (")[0] for a in assistants[1:])
