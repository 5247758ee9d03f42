"""Authentication by organization key, the one error shape everywhere, and the documentation pages."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from oncore.accounts.models import ApiKey
from tests.fixtures import ApiClient, assert_error
from transcriber_tests import errors
from transcriber_tests.api.errors import ERRORS

pytestmark = pytest.mark.django_db


def test_it_refuses_a_request_without_a_key(client, org):
    error = assert_error(ApiClient(client, None).get("/banks"), 401, "unauthorized")
    assert "Bearer" in error["message"]


def test_it_refuses_a_malformed_header_and_an_unknown_key(client, org):
    assert_error(client.get("/api/v1/banks", headers={"Authorization": "Basic abc"}), 401, "unauthorized")
    assert_error(ApiClient(client, "onc_not-a-real-key").get("/banks"), 401, "unauthorized")


def test_it_refuses_a_revoked_key(client, org):
    key, raw = ApiKey.generate(org)
    key.revoked_at = timezone.now()
    key.save(update_fields=["revoked_at"])
    error = assert_error(ApiClient(client, raw).get("/banks"), 401, "unauthorized")
    assert "revoked" in error["message"]


def test_it_refuses_a_tenant_key_and_says_an_organization_key_is_needed(client, org, tenant):
    raw = ApiKey.generate(org, tenant=tenant)[1]
    error = assert_error(ApiClient(client, raw).get("/banks"), 403, "tenant_key_not_allowed")
    assert "organization key" in error["message"]


def test_it_records_last_use_at_most_once_a_minute(api, org, django_assert_num_queries):
    key = ApiKey.objects.get(organization=org)
    assert key.last_used_at is None
    assert api.get("/queue").status_code == 200
    key.refresh_from_db()
    first = key.last_used_at
    assert first is not None
    with django_assert_num_queries(2):  # the key, the queue counts: no write
        assert api.get("/queue").status_code == 200
    key.refresh_from_db()
    assert key.last_used_at == first
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=first - timedelta(minutes=2))
    api.get("/queue")
    key.refresh_from_db()
    assert key.last_used_at > first - timedelta(minutes=1)


def test_it_answers_json_for_unknown_paths_and_wrong_methods(api):
    assert_error(api.get("/no-such-thing"), 404, "not_found")
    assert_error(api.get("/"), 404, "not_found")
    error = assert_error(api.delete("/banks"), 405, "method_not_allowed")
    assert "POST" in error["detail"]["allowed"]


def test_it_answers_validation_errors_with_the_fields(api):
    error = assert_error(api.post("/banks", {"threshold": 2}), 422, "validation_error")
    assert [e["loc"] for e in error["detail"]["errors"]] == [["body", "name"], ["body", "threshold"]]
    assert_error(api.get("/banks", {"limit": 0}), 422, "validation_error")


def test_it_answers_a_body_that_is_not_json_with_invalid_request(api, client):
    response = client.post("/api/v1/banks", "{nope", content_type="application/json", headers=api.headers)
    assert_error(response, 400, "invalid_request")


def test_it_answers_an_unexpected_exception_with_a_json_500(api, monkeypatch):
    from transcriber_tests.queries import jobs

    def boom(org_id):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(jobs, "queue_status", boom)
    error = assert_error(api.get("/queue"), 500, "internal_error")
    assert "fire" not in error["message"]


def test_it_registers_every_action_error_with_its_status():
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    for cls in [errors.ActionError, *subclasses(errors.ActionError)]:
        assert cls.code in ERRORS, f"{cls.__name__}.code {cls.code!r} is missing from oncore.api.ERROR_CODES"
        assert ERRORS[cls.code].status == cls.status, cls.code


def test_it_serves_an_error_guide_with_every_code_and_what_to_do(client):
    response = client.get("/api/errors/")
    assert response.status_code == 200
    html = response.content.decode()
    for code in ERRORS.values():
        assert f'id="{code.code}"' in html and code.what_to_do.split("`")[0][:30] in html.replace(
            "&#x27;", "'"
        )


def test_it_serves_the_schema_and_a_reference_that_needs_no_network(client):
    schema = client.get("/api/v1/openapi.json").json()
    assert schema["components"]["securitySchemes"]
    response = client.get("/api/v1/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert not re.search(r"""(src|href)=["']https?://""", html), "the reference must work offline"
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            assert f"{method.upper()} {path}" in html
            assert op["responses"], (method, path)
            assert any(str(s).startswith("2") for s in op["responses"]), (method, path)
            if op.get("security"):
                assert "401" in op["responses"] or 401 in op["responses"], (method, path)
