"""A flag's edit history is bounded where the flag is shown (fourth penetration test, finding 2: a flag edited 5,020
times answered every edit in GET /flags/{id}, 493 KiB): the flag carries its latest edits and their count, and the
whole history is a cursor list of its own (GET /flags/{id}/history) and a page of its own on the dashboard (the
call page's "show all")."""

import pytest
from django.urls import reverse

from tests.fixtures import assert_error
from transcriber_tests import actions
from transcriber_tests.queries.people import RECENT_EDITS

pytestmark = pytest.mark.django_db


@pytest.fixture
def edited(flag, admin_user, org):
    """The flag's expected text typed again by the admin, then its note changed eleven times by an API key."""
    from oncore.accounts.models import ApiKey

    key = ApiKey.generate(org, name="ci")[0]
    actions.do_edit_flag(flag, expected_text="Siobhan, a table for four at eight thirty", user=admin_user)
    for i in range(11):
        actions.do_edit_flag(flag, note=f"note {i}", key=key)
    return flag


def test_a_flag_carries_its_latest_edits_and_their_count(api, edited, admin_user):
    body = api.get(f"/flags/{edited.pk}").json()
    assert body["history_count"] == 12
    assert [e["new"] for e in body["history"]] == [
        f"note {i}" for i in range(6, 11)
    ]  # the latest, oldest first
    assert len(body["history"]) == RECENT_EDITS == 5
    # Who typed the expected text is still read from the whole history, not from the latest edits alone.
    assert body["typed_by"] == admin_user.username
    assert body["history"][-1]["by"].startswith("API key ci (")


def test_the_list_of_flags_carries_the_same_in_a_fixed_number_of_queries(
    api, edited, recorded_call, django_assert_max_num_queries
):
    actions.do_flag_line(recorded_call.lines.get(position=2), "yes that is right")
    # the key, its last use, the count, the flags, their controls, their edits' counts, the latest edits' ids, them
    with django_assert_max_num_queries(8):
        items = api.get("/flags", {"limit": 200}).json()["items"]
    by_id = {f["id"]: f for f in items}
    assert by_id[edited.pk]["history_count"] == 12 and len(by_id[edited.pk]["history"]) == 5
    other = next(f for f in items if f["id"] != edited.pk)
    assert other["history_count"] == 0 and other["history"] == []


def test_the_whole_history_pages_newest_first_with_the_lists_cursor(api, edited):
    seen, after = [], None
    while True:
        page = api.get(
            f"/flags/{edited.pk}/history", {"limit": 5, **({"after": after} if after else {})}
        ).json()
        assert page["count"] == 12
        seen += page["items"]
        after = page["next_after"]
        if not after:
            break
    assert [e["new"] for e in seen] == [f"note {i}" for i in range(10, -1, -1)] + [
        "Siobhan, a table for four at eight thirty"
    ]
    assert (
        seen[-1]["field"] == "expected_text" and seen[-1]["old"] == "Siobhan, table for four at eight thirty"
    )


def test_the_history_is_the_organizations_own(api, other_api, edited):
    assert_error(other_api.get(f"/flags/{edited.pk}/history"), 404, "not_found")
    assert_error(api.get(f"/flags/{edited.pk}/history", {"after": "bogus"}), 422, "validation_error")


def test_the_call_page_shows_the_latest_edits_and_links_to_all_of_them(admin_client, edited):
    page = admin_client.get(reverse("tt:call", args=[edited.line.call_id])).content.decode()
    assert "12 edits of this flag" in page
    assert "“note 9” → “note 10”" in page and "“note 4”" not in page  # the latest five only
    link = reverse("tt:flag_history", args=[edited.pk])
    assert f'<a href="{link}">show all 12 edits</a>' in page
    history = admin_client.get(link).content.decode()
    assert "12 edits, newest first" in history
    rows = history[history.index("<tbody>") :]
    assert rows.index("note 10") < rows.index("note 0") < rows.index("a table for four")


def test_the_history_page_escapes_what_was_typed(admin_client, flag, admin_user):
    actions.do_edit_flag(flag, note="<script>alert(1)</script>", user=admin_user)
    page = admin_client.get(reverse("tt:flag_history", args=[flag.pk])).content.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
