"""The API's version (issue 36, item 6): `info.version` was "1" before and after changes that broke clients. It is
a semantic version now, served in the schema and in every answer's OnCore-API-Version header, errors included;
a request that uses a deprecated word (the run label `live_right`) is answered with Deprecation and Sunset."""

import re

import pytest
from django.test import override_settings

from oncore.api.version import API_VERSION
from tests.api_schema import api_schema
from tests.fixtures import ApiClient

pytestmark = pytest.mark.django_db

SEMVER = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
DECEMBER_1_2026 = "@1796083200"  # RFC 9745: when live_right was deprecated
SUNSET = "Tue, 01 Jun 2027 00:00:00 GMT"  # RFC 8594: read at least until then


def test_the_schema_carries_a_semantic_version(client):
    served = client.get("/api/v1/openapi.json").json()
    assert served["info"]["version"] == API_VERSION == "2.1.0"
    assert SEMVER.fullmatch(API_VERSION)


def test_every_api_answer_names_the_version(api, client, bank, settings):
    answers = {
        "an operation": api.get("/banks"),
        "a CSV": api.get(f"/banks/{bank.pk}/results.csv"),
        "the schema": client.get("/api/v1/openapi.json"),
        "the reference": client.get("/api/v1/docs"),
        "no key": client.get("/api/v1/banks"),
        "a bad key": ApiClient(client, "onc_nope").get("/banks"),
        "an unknown path": api.get("/nowhere"),
        "a wrong method": api.put("/banks"),
        "an invalid parameter": api.get("/banks", {"limit": "0"}),
        "an unknown id": api.get("/banks/999999"),
    }
    with override_settings(ONCORE={**settings.ONCORE, "MAX_REQUEST_MB": 1}):
        answers["too large"] = client.post(
            "/api/v1/flags", "x" * (2 * 2**20), content_type="application/json", headers=api.headers
        )
    for what, response in answers.items():
        assert response["OnCore-API-Version"] == "2.1.0", what
        assert "Deprecation" not in response, what
    assert answers["too large"].status_code == 413 and answers["a wrong method"].status_code == 405
    assert "OnCore-API-Version" not in client.get("/login/")  # the dashboard is not the API


def test_the_schema_declares_the_headers_on_every_answer():
    schema = api_schema()
    for item in schema["paths"].values():
        for op in item.values():
            for status, response in op["responses"].items():
                assert {"OnCore-API-Version", "Deprecation", "Sunset"} <= set(response["headers"]), (
                    op["operationId"],
                    status,
                )
    headers = schema["components"]["headers"]
    assert (
        "semantic" in headers["ApiVersion"]["description"]
        and "RFC 9745" in headers["Deprecation"]["description"]
    )


def test_a_deprecated_word_is_read_and_answered_with_deprecation_and_sunset(api, done_run):
    old = api.get(f"/runs/{done_run.pk}/lines", {"label": "live_right"})
    assert old.status_code == 200
    assert old["Deprecation"] == DECEMBER_1_2026 and old["Sunset"] == SUNSET
    new = api.get(
        f"/runs/{done_run.pk}/lines", {"label": "production_right"}
    )  # nothing deprecated: no header
    assert "Deprecation" not in new and "Sunset" not in new
    assert new.json()["count"] == old.json()["count"]
    line = api.get(f"/runs/{done_run.pk}/review").json()["items"][0]
    reviewed = api.post(f"/runs/{done_run.pk}/review/{line['id']}", {"label": "live_right"})
    assert reviewed.status_code == 200 and reviewed.json()["human_label"] == "production_right"
    assert reviewed["Deprecation"] == DECEMBER_1_2026 and reviewed["Sunset"] == SUNSET
    assert "Deprecation" not in api.get(f"/runs/{done_run.pk}")  # the next request starts clean
