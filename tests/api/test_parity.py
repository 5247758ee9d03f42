"""Every dashboard screen over the API: each URL of the dashboard (the transcriber testing pages, the full-call run
pages and the organization's settings) is mapped to the operations that serve its data, or said to carry none
(a redirect, a log-in page), and the new operations answer what their pages show, read through the same query.

A page added to the dashboard fails here until it is mapped: give it an operation (reading the query its view
reads), then add its URL name to SCREENS; the map is the list of "the requests behind each screen" that
docs/api.md's screen-by-screen guide walks through."""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.api_schema import api_schema
from transcriber_tests import queries

pytestmark = pytest.mark.django_db

# URL name -> the operations (operationId) that serve its data: what a screen shows, and what its forms do.
SCREENS = {
    # Calls and flags.
    "tt:calls": ["list_calls", "get_organization", "list_assistants"],
    "tt:call": ["get_call", "flag_results", "start_run"],
    "tt:line_audio": ["line_audio"],
    "tt:flag_line": ["create_flag", "list_banks"],
    "tt:edit_flag": ["get_flag", "edit_flag"],
    "tt:flag_results": ["flag_results"],
    "tt:flag_history": ["flag_history"],
    "tt:move_flag": ["move_flag"],
    "tt:delete_flag": ["delete_flag"],
    "tt:unbanked_flags": ["list_flags", "list_banks"],
    # Banks, candidates and results.
    "tt:banks": ["leaderboard"],
    "tt:bank_new": ["create_bank"],
    "tt:bank": [
        "bank_results",
        "bank_groups",
        "bank_trends",
        "bank_tags",
        "bank_languages",
        "expected_checks",
        "queue_status",
    ],
    "tt:bank_edit": ["get_bank", "edit_bank", "estimate_controls"],
    "tt:bank_delete": ["delete_bank"],
    "tt:vocabularies": ["list_vocabularies", "list_changes"],
    "tt:vocabulary_new": ["create_vocabulary", "list_assistants"],
    "tt:vocabulary_edit": ["get_vocabulary", "edit_vocabulary"],
    "tt:vocabulary_delete": ["delete_vocabulary"],
    "tt:bank_redraw_controls": ["estimate_controls", "redraw_controls"],
    "tt:bank_candidates": ["list_candidates", "list_transcribers", "estimate_candidate", "add_candidate"],
    "tt:candidate_move": ["reorder_candidates"],
    "tt:candidate_remove": ["remove_candidate"],
    "tt:turn_table": ["turn_table"],
    "tt:export_results": ["export_results"],
    "tt:export_turns": ["export_turns"],
    "tt:bank_trust": ["bank_uncertainty", "confusions"],
    "tt:export_confusions": ["export_confusions"],
    # Full-call runs.
    "runs:bank_runs": ["list_runs"],
    "runs:new": ["estimate_run", "start_run"],
    "runs:from_call": ["estimate_run", "start_run"],
    "runs:detail": ["get_run", "run_lines"],
    "runs:cancel": ["cancel_run"],
    "runs:retry_judge": ["retry_judge"],
    "runs:review": ["review_sample"],
    "runs:review_line": ["review_line"],
    "runs:export": ["export_run"],
    # The organization's settings.
    "webhooks": ["list_webhooks", "create_webhook"],
    "webhook": ["get_webhook", "edit_webhook", "list_deliveries", "get_delivery"],
    "webhook_delete": ["delete_webhook"],
    "webhook_send_again": ["send_again"],
}

# URL names that are no screen of the organization's data, and why.
NOT_DATA = {
    "tt:home": "sends an admin to the calls page, a member to a page that says who to ask",
    "login": "signing in to the dashboard; the API authenticates with a key",
    "logout": "signing out of the dashboard",
    "password_change": "a person's own password",
    "password_change_done": "a person's own password",
    "switch_org": "which organization a person's dashboard shows; a key belongs to one",
    "api_keys": "keys are made and revoked by an admin in the dashboard (or manage.py create_api_key), never "
    "by a key: a leaked key cannot mint others",
    "api_key_revoke": "as api_keys",
    "api_errors": "the error guide: documentation, generated from the same registry as the schema",
    "healthz": "the server's health, for its operator",
    "favicon": "an icon",
}
# Namespaces that are not the organization's dashboard, and why.
OUTSIDE = {
    "admin": "Django's admin, for the operator",
    "api": "the API itself",
    "bench": "the public entity benchmark: staff pages over public datasets, not an organization's data (its "
    "figure is on each candidate's results card: entity_benchmark)",
    "cs": "the code-switching benchmark: staff pages over public datasets",
}


def _names(patterns, namespace=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            inner = p.namespace or ""
            yield from _names(p.url_patterns, f"{namespace}:{inner}".strip(":") if inner else namespace)
        elif isinstance(p, URLPattern) and p.name:
            yield f"{namespace}:{p.name}" if namespace else p.name


def test_it_maps_every_dashboard_url_to_the_operation_that_serves_its_data():
    names = set(_names(get_resolver().url_patterns))
    dashboard = {n for n in names if n.split(":")[0] not in OUTSIDE}
    unmapped = sorted(dashboard - set(SCREENS) - set(NOT_DATA))
    assert not unmapped, (
        "These dashboard URLs have no operation serving their data: give each an API operation that reads the "
        f"same query as its view, and map it in SCREENS: {unmapped}"
    )
    assert not (set(SCREENS) | set(NOT_DATA)) - names, "the map names URLs that no longer exist"
    operations = {op["operationId"] for item in api_schema()["paths"].values() for op in item.values()}
    missing = {name: sorted(set(ops) - operations) for name, ops in SCREENS.items() if set(ops) - operations}
    assert not missing, f"the map names operations the API does not have: {missing}"


def test_it_answers_the_leaderboard_the_banks_page_shows(api, admin_client, flag):
    page = admin_client.get("/banks/?window=30").context
    answer = api.get("/leaderboard", {"window": 30}).json()
    assert answer["window_days"] == 30
    assert (answer["first_day"], answer["last_day"]) == tuple(d.isoformat() for d in page["days"])
    (row,) = page["board"]
    (item,) = answer["items"]
    assert item["bank_id"] == row.bank.pk and item["leader"]["id"] == row.leader.pk
    summary = item["leader_summary"]
    assert (summary["scored"], summary["matches"], summary["accuracy"]) == (
        row.summary.scored,
        row.summary.matches,
        row.summary.accuracy,
    )
    assert summary["scored"] == 2  # the flagged line and its control line
    assert [summary["interval"]["low"], summary["interval"]["high"]] == list(row.interval)
    assert summary["provisional"] is row.provisional is True
    assert item["runner_up"]["id"] == row.runner_up.pk and item["lead_test"]["p_value"] == row.lead.p_value
    assert item["pending"] == row.pending == 0 and item["window_flags"] == row.bank.n_window == 1


def test_it_answers_the_trend_tags_and_languages_the_results_page_shows(api, admin_client, flag):
    context = admin_client.get(f"/banks/{flag.bank_id}/?window=14").context
    trends = api.get(f"/banks/{flag.bank_id}/trends", {"window": 14}).json()
    assert [c["transcriber"]["id"] for c in trends["candidates"]] == [
        t.transcriber.pk for t in context["trends"]
    ]
    for shown, trend in zip(trends["candidates"], context["trends"], strict=True):
        assert (
            len(shown["weeks"]) == len(trend.weeks) == 2
        )  # 14 days: two weeks of seven, the last ending today
        assert [(w["scored"], w["matches"]) for w in shown["weeks"]] == [
            (w.scored, w.matches) for w in trend.weeks
        ]
        assert shown["scored"] == trend.scored == 2
    tags = api.get(f"/banks/{flag.bank_id}/tags", {"window": 14}).json()
    assert [row["tag"] for row in tags["tags"]] == [row.tag for row in context["tags"].rows] == ["name"]
    (row,) = tags["tags"]
    assert row["flags"] == 1
    assert [(c["scored"], c["matches"]) for c in row["cells"]] == [
        (c.scored, c.matches) for c in context["tags"].rows[0].cells
    ]
    languages = api.get(f"/banks/{flag.bank_id}/languages", {"window": 14}).json()
    # One language in the fixture's lines: no breakdown, as the results page shows none.
    assert context["language_wer"] is None
    assert languages["applies"] is False and languages["items"] == [] and languages["languages"] == ["en"]
    assert languages["transcriber"]["id"] == context["r"].leader.transcriber.pk


def test_it_answers_a_flags_results_as_the_call_page_polls_them(api, admin_client, flag):
    polled = admin_client.get(f"/flags/{flag.pk}/results/").content.decode()
    page = queries.flag_results([flag])[flag.pk]  # what the polled fragment shows
    assert all(c.transcriber.display_name in polled for c in page.items[0].cells)
    answer = api.get(f"/flags/{flag.pk}/results").json()
    assert answer["pending"] is False and answer["bank_id"] == flag.bank_id
    assert [i["control_id"] for i in answer["items"]] == [None, *[c.control.pk for c in page.controls]]
    first = answer["items"][0]
    assert first["expected_text"] == "Siobhan, table for four at eight thirty"
    assert [(c["transcriber_id"], c["state"], c["match"]) for c in first["cells"]] == [
        (c.transcriber.pk, c.state, None if c.score.failed else c.score.match) for c in page.items[0].cells
    ]
    # Out of every bank: nothing to show, nothing pending.
    api.post(f"/flags/{flag.pk}/move", {"bank_id": None})
    assert api.get(f"/flags/{flag.pk}/results").json() == {
        "flag_id": flag.pk,
        "bank_id": None,
        "pending": False,
        "items": [],
    }


def test_it_refuses_a_language_breakdown_for_a_transcriber_that_is_no_candidate(api, flag, make_transcriber):
    other = make_transcriber("not-a-candidate")
    response = api.get(f"/banks/{flag.bank_id}/languages", {"transcriber_id": other.pk})
    assert response.status_code == 404 and "candidate" in response.json()["error"]["message"]
    assert queries.bank_languages(flag.bank, 30) == ["en"]
