"""The isolation matrix: every dashboard URL (from the URL resolver) and every API operation (from the OpenAPI
schema) is tried as an anonymous user, a member, an admin of another organization and with a tenant key; each
must be refused as designed while the owning admin succeeds. A new URL or endpoint that this file does not know
fails the test, so it cannot be missed."""

import re

import pytest
from django.urls import URLResolver, get_resolver, reverse

from oncore.accounts.models import ApiKey
from transcriber_tests.models import Bank
from transcriber_tests.queries import snapshots

pytestmark = pytest.mark.django_db


# Public pages, and pages that are global by design (the benchmark datasets belong to no organization: any
# organization's admin may read them; members and anonymous users are still refused).
PUBLIC = {
    "login",
    "logout",
    "switch_org",
    "api_errors",
    "healthz",
    "favicon",
    "tt:home",
    "password_change",  # a user's own, whatever their organization
    "password_change_done",
}  # home only redirects to the calls page
GLOBAL_ADMIN = {
    "bench:runs",
    "bench:run_start",
    "bench:run",
    "bench:run_score",
    "bench:run_hits",
    "bench:run_summary",
    "bench:run_manifest",
    "bench:compare",
    "bench:compare_csv",
    "cs:datasets",
    "cs:report",
    "cs:report_csv",
    "cs:report_json",
}
# Pages without an object in the URL: another organization's admin gets their own (empty) page, not ours.
ORG_LISTS = {
    "tt:calls",
    "tt:unbanked_flags",
    "tt:banks",
    "tt:bank_new",
    "tt:vocabularies",
    "tt:vocabulary_new",
    "api_keys",
    "webhooks",
}

# name -> (method, kwargs from the owner's objects)
DASHBOARD = {
    "tt:calls": ("get", lambda o: {}),
    "tt:call": ("get", lambda o: {"pk": o["call"].pk}),
    "tt:line_audio": ("get", lambda o: {"pk": o["line"].pk}),
    "tt:flag_line": ("get", lambda o: {"pk": o["free_line"].pk}),
    "tt:unbanked_flags": ("get", lambda o: {}),
    "tt:edit_flag": ("get", lambda o: {"pk": o["flag"].pk}),
    "tt:flag_results": ("get", lambda o: {"pk": o["flag"].pk}),
    "tt:flag_history": ("get", lambda o: {"pk": o["flag"].pk}),
    "tt:move_flag": ("post", lambda o: {"pk": o["flag"].pk}),
    "tt:delete_flag": ("post", lambda o: {"pk": o["flag"].pk}),
    "tt:banks": ("get", lambda o: {}),
    "tt:bank_new": ("get", lambda o: {}),
    "tt:bank": ("get", lambda o: {"pk": o["bank"].pk}),
    "tt:bank_edit": ("get", lambda o: {"pk": o["bank"].pk}),
    "tt:bank_delete": ("post", lambda o: {"pk": o["bank"].pk}),
    "tt:bank_redraw_controls": ("post", lambda o: {"pk": o["bank"].pk}),
    "tt:bank_candidates": ("get", lambda o: {"pk": o["bank"].pk}),
    "tt:candidate_move": ("post", lambda o: {"pk": o["bank"].pk, "transcriber_pk": o["candidate"].pk}),
    "tt:candidate_remove": ("post", lambda o: {"pk": o["bank"].pk, "transcriber_pk": o["candidate"].pk}),
    "tt:turn_table": ("get", lambda o: {"pk": o["bank"].pk}),
    "tt:export_results": ("get", lambda o: {"pk": o["bank"].pk}),
    "tt:export_turns": ("get", lambda o: {"pk": o["bank"].pk}),
    "tt:bank_trust": ("get", lambda o: {"pk": o["bank"].pk}),
    "tt:export_confusions": ("get", lambda o: {"pk": o["bank"].pk}),
    "runs:bank_runs": ("get", lambda o: {"pk": o["bank"].pk}),
    "runs:new": ("get", lambda o: {"pk": o["bank"].pk}),
    "runs:from_call": ("get", lambda o: {"pk": o["call"].pk}),
    "runs:detail": ("get", lambda o: {"pk": o["run"].pk}),
    "runs:cancel": ("post", lambda o: {"pk": o["run"].pk}),
    "runs:retry_judge": ("post", lambda o: {"pk": o["run"].pk}),
    "runs:review": ("get", lambda o: {"pk": o["run"].pk}),
    "runs:review_line": ("post", lambda o: {"pk": o["run"].pk, "line_pk": o["run_line"].pk}),
    "runs:export": ("get", lambda o: {"pk": o["run"].pk}),
    "tt:vocabularies": ("get", lambda o: {}),
    "tt:vocabulary_new": ("get", lambda o: {}),
    "tt:vocabulary_edit": ("get", lambda o: {"pk": o["vocabulary"].pk}),
    "tt:vocabulary_delete": ("post", lambda o: {"pk": o["vocabulary"].pk}),
    "api_keys": ("get", lambda o: {}),
    "api_key_revoke": ("post", lambda o: {"pk": o["key"].pk}),
    "webhooks": ("get", lambda o: {}),
    "webhook": ("get", lambda o: {"pk": o["webhook"].pk}),
    "webhook_delete": ("post", lambda o: {"pk": o["webhook"].pk}),
    "webhook_send_again": ("post", lambda o: {"pk": o["webhook"].pk, "delivery_pk": o["delivery"].pk}),
}


def all_dashboard_names() -> set[str]:
    """Every named URL outside the admin and the API, from the URL resolver (namespace:name)."""

    def walk(patterns, namespace=""):
        for p in patterns:
            if isinstance(p, URLResolver):
                if not str(p.pattern).startswith(("admin/", "api/v1/")):
                    yield from walk(p.url_patterns, f"{p.namespace}:" if p.namespace else namespace)
            elif p.name:
                yield namespace + p.name

    return set(walk(get_resolver().url_patterns))


def dashboard_names():
    return all_dashboard_names() - PUBLIC - GLOBAL_ADMIN


def test_it_knows_every_dashboard_url():
    unknown = dashboard_names() - set(DASHBOARD)
    assert not unknown, f"add these URLs to the isolation matrix: {sorted(unknown)}"


def _call(client, name, owned):
    method, kwargs = DASHBOARD[name]
    return getattr(client, method)(reverse(name, kwargs=kwargs(owned)))


def test_it_refuses_every_dashboard_url_to_anyone_but_the_owning_admin(
    client, owned, member_user, other_admin, admin_user
):
    names = sorted(dashboard_names())
    for name in names:
        response = _call(client, name, owned)
        assert response.status_code == 302 and "/login/" in response["Location"], f"anonymous {name}"
    client.force_login(member_user)
    for name in names:
        assert _call(client, name, owned).status_code == 403, f"member {name}"
    client.force_login(other_admin)
    for name in names:
        response = _call(client, name, owned)
        if name in ORG_LISTS:
            assert response.status_code in (200, 302), f"other admin {name}"
            assert b"Secret bank" not in response.content and b"Shivon" not in response.content, name
        else:
            assert response.status_code == 404, f"other admin {name}: {response.status_code}"
    # Nothing the refused requests tried changed anything.
    owned["bank"].refresh_from_db()
    owned["flag"].refresh_from_db()
    assert owned["bank"].candidates.count() == 1 and owned["flag"].bank == owned["bank"]
    owned["delivery"].refresh_from_db()
    assert owned["webhook"].deliveries.count() == 1 and owned["delivery"].status == "delivered"
    client.force_login(admin_user)
    for name in names:
        if DASHBOARD[name][0] == "get":
            response = _call(client, name, owned)
            assert response.status_code in (200, 302), f"owner {name}: {response.status_code}"


def test_it_refuses_the_global_benchmark_pages_to_members_and_anonymous_users(client, member_user):
    for name in ("bench:runs", "bench:compare", "cs:datasets"):
        response = client.get(reverse(name))
        assert response.status_code == 302 and "/login/" in response["Location"]
    client.force_login(member_user)
    for name in ("bench:runs", "bench:compare", "cs:datasets"):
        assert client.get(reverse(name)).status_code == 403


def api_operations(client):
    """(method, path, required query parameter names) of every operation in the OpenAPI schema."""
    schema = client.get("/api/v1/openapi.json").json()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                required = [
                    p["name"]
                    for p in operation.get("parameters", [])
                    if p["in"] == "query" and p.get("required")
                ]
                yield method, path, required


def owner_values(owned):
    return {
        "transcriber_id": owned["candidate"].pk,
        "call_id": owned["call"].pk,
        "line_id": owned["line"].pk,
        "flag_id": owned["flag"].pk,
        "bank_id": owned["bank"].pk,
        "run_id": owned["run"].pk,
        "run_line_id": owned["run_line"].pk,
        "call_ids": owned["call"].pk,
        "webhook_id": owned["webhook"].pk,
        "delivery_id": owned["delivery"].pk,
        "vocabulary_id": owned["vocabulary"].pk,
    }


def fill(path, required, owned):
    values = owner_values(owned)
    url = re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), path)
    return url + ("?" + "&".join(f"{name}={values[name]}" for name in required) if required else "")


def test_it_refuses_every_api_operation_without_an_organization_key_of_the_owner(client, owned, other_org):
    other_key = ApiKey.generate(other_org, name="other")[1]
    revoked, revoked_raw = ApiKey.generate(owned["bank"].organization, name="revoked")
    revoked.revoked_at = revoked.created_at
    revoked.save()
    operations = list(api_operations(client))
    assert len(operations) > 30
    # The bank's trust figures computed by the queue, as they are once it has been asked for them once.
    snapshots.trust_of(Bank.objects.select_related("organization").get(pk=owned["bank"].pk), 30)
    snapshots.drain()
    for method, path, required in operations:
        url = fill(path, required, owned)

        def send(key, method=method, url=url):
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            return getattr(client, method)(url, content_type="application/json", headers=headers)

        assert send(None).status_code == 401, f"no key {method} {path}"
        assert send(revoked_raw).status_code == 401, f"revoked key {method} {path}"
        refused = send(owned["tenant_key"])
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "tenant_key_not_allowed", (
            path
        )
        other = send(other_key)
        if "{" in path and not path.startswith("/api/v1/transcribers"):
            assert other.status_code in (404, 422), f"other org {method} {path}: {other.status_code}"
        else:
            assert other.status_code < 500, f"other org {method} {path}"
            assert b"Secret bank" not in other.content, f"other org sees our data: {method} {path}"
        if method == "get":
            ok = send(owned["raw_key"])
            assert ok.status_code == 200, f"owner {method} {path}: {ok.status_code} {ok.content[:200]}"
