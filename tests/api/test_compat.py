"""The breaking-change check (issue 36, item 8): the served schema keeps the contract of the latest released one
(docs/api/openapi-<version>.json) unless its version's major part moved or the changelog lists the break as a
deprecated removal; the check (oncore.api.compat) finds each kind of break, and none in an addition."""

import copy
import json

import pytest

from oncore.api import releases
from oncore.api.compat import breaking_changes
from oncore.api.version import API_VERSION

REF = "#/components/schemas/"


def _schema(version="2.0.0") -> dict:
    """A small API in the served schema's style: one list with a query filter, one create, one error union."""
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": version},
        "paths": {
            "/api/v1/things": {
                "get": {
                    "operationId": "list_things",
                    "parameters": [
                        {
                            "in": "query",
                            "name": "limit",
                            "required": False,
                            "schema": {"type": "integer", "minimum": 1, "maximum": 200},
                        },
                        {
                            "in": "query",
                            "name": "kind",
                            "required": False,
                            "schema": {"type": "string", "enum": ["a", "b"]},
                        },
                        {
                            "in": "query",
                            "name": "name",
                            "required": False,
                            "schema": {"anyOf": [{"type": "string", "maxLength": 50}, {"type": "null"}]},
                        },
                    ],
                    "responses": {
                        "200": {"content": {"application/json": {"schema": {"$ref": REF + "ThingPage"}}}},
                        "404": {"content": {"application/json": {"schema": {"$ref": REF + "ListThings404"}}}},
                    },
                },
                "post": {
                    "operationId": "create_thing",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": REF + "ThingIn"}}},
                    },
                    "responses": {
                        "201": {"content": {"application/json": {"schema": {"$ref": REF + "Thing"}}}}
                    },
                },
            }
        },
        "webhooks": {
            "thing.made": {
                "post": {
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": REF + "Thing"}}}},
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
        "components": {
            "schemas": {
                "Thing": {
                    "type": "object",
                    "required": ["id", "kind", "note"],
                    "properties": {
                        "id": {"type": "integer"},
                        "kind": {"type": "string", "enum": ["a", "b"]},
                        "note": {"type": "string"},
                        "size": {"type": "number"},
                    },
                },
                "ThingIn": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["kind"],
                    "properties": {
                        "kind": {"type": "string", "enum": ["a", "b"]},
                        "note": {"type": "string", "maxLength": 100},
                        "count": {"type": "integer", "maximum": 10},
                    },
                },
                "ThingPage": {
                    "type": "object",
                    "required": ["items"],
                    "properties": {"items": {"type": "array", "items": {"$ref": REF + "Thing"}}},
                },
                "ListThings404": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "oneOf": [{"$ref": REF + "NotFoundError"}],
                            "discriminator": {
                                "propertyName": "code",
                                "mapping": {"not_found": REF + "NotFoundError"},
                            },
                        }
                    },
                },
                "NotFoundError": {
                    "type": "object",
                    "required": ["code"],
                    "properties": {"code": {"type": "string", "enum": ["not_found"]}},
                },
                "GoneError": {
                    "type": "object",
                    "required": ["code"],
                    "properties": {"code": {"type": "string", "enum": ["gone"]}},
                },
            }
        },
    }


def _found(change) -> list[str]:
    old, new = _schema(), _schema()
    change(new)
    return [str(b) for b in breaking_changes(old, new)]


def _components(s):
    return s["components"]["schemas"]


def _params(s):
    return {p["name"]: p for p in s["paths"]["/api/v1/things"]["get"]["parameters"]}


BREAKS = {
    "a removed operation": (
        lambda s: s["paths"]["/api/v1/things"].pop("post"),
        "POST /api/v1/things: operation removed",
    ),
    "a removed answer field": (
        lambda s: _components(s)["Thing"]["properties"].pop("size"),
        "schema Thing (answer) field size: removed",
    ),
    "a removed request field": (
        lambda s: _components(s)["ThingIn"]["properties"].pop("count"),
        "schema ThingIn (request) field count: removed",
    ),
    "a removed enum value in an answer": (
        lambda s: _components(s)["Thing"]["properties"]["kind"].update(enum=["a"]),
        "schema Thing (answer) field kind: enum value 'b' removed",
    ),
    "a removed enum value of a parameter": (
        lambda s: _params(s)["kind"]["schema"].update(enum=["b"]),
        "GET /api/v1/things query parameter kind: enum value 'a' removed",
    ),
    "a changed type": (
        lambda s: _components(s)["Thing"]["properties"]["note"].update(type="integer"),
        "schema Thing (answer) field note: no longer string",
    ),
    "a field that may now be null": (
        lambda s: _components(s)["Thing"]["properties"].update(
            note={"anyOf": [{"type": "string"}, {"type": "null"}]}
        ),
        "schema Thing (answer) field note: may now be null",
    ),
    "an answer field no longer always present": (
        lambda s: _components(s)["Thing"].update(required=["id", "kind"]),
        "schema Thing (answer) field note: no longer always present",
    ),
    "a string answer turned into an enum": (
        lambda s: _components(s)["Thing"]["properties"]["note"].update(enum=["x"]),
        "schema Thing (answer) field note: became an enum of ['x']",
    ),
    "a new required request field": (
        lambda s: _components(s)["ThingIn"].update(required=["kind", "note"]),
        "schema ThingIn (request) field note: became required",
    ),
    "a new required parameter": (
        lambda s: s["paths"]["/api/v1/things"]["get"]["parameters"].append(
            {"in": "query", "name": "owner", "required": True, "schema": {"type": "integer"}}
        ),
        "GET /api/v1/things query parameter owner: new required parameter",
    ),
    "a narrowed range": (
        lambda s: _params(s)["limit"]["schema"].update(maximum=100),
        "GET /api/v1/things query parameter limit: maximum 200 became 100",
    ),
    "a narrowed length": (
        lambda s: _params(s)["name"]["schema"]["anyOf"][0].update(maxLength=20),
        "GET /api/v1/things query parameter name: maxLength 50 became 20",
    ),
    "a new pattern": (
        lambda s: _params(s)["name"]["schema"]["anyOf"][0].update(pattern="^[a-z]+$"),
        "GET /api/v1/things query parameter name: pattern None became '^[a-z]+$'",
    ),
    "a parameter no longer nullable": (
        lambda s: _params(s)["name"].update(schema={"type": "string", "maxLength": 50}),
        "GET /api/v1/things query parameter name: no longer null",
    ),
    "a removed parameter": (
        lambda s: s["paths"]["/api/v1/things"]["get"]["parameters"].pop(),
        "GET /api/v1/things query parameter name: removed",
    ),
    "a removed response": (
        lambda s: s["paths"]["/api/v1/things"]["get"]["responses"].pop("404"),
        "GET /api/v1/things: response 404 removed",
    ),
    "a removed error variant": (
        lambda s: _components(s)["ListThings404"]["properties"]["error"].update(
            oneOf=[{"$ref": REF + "GoneError"}]
        ),
        "schema ListThings404 (answer) field error: no longer NotFoundError (object)",
    ),
    "a removed named schema": (
        lambda s: _components(s).pop("GoneError"),
        "schema GoneError: removed",
    ),
    "a removed webhook event": (
        lambda s: s["webhooks"].pop("thing.made"),
        "webhook thing.made: event removed",
    ),
    "a renamed operation id": (
        lambda s: s["paths"]["/api/v1/things"]["get"].update(operationId="things"),
        "GET /api/v1/things: operationId 'list_things' became 'things'",
    ),
}


@pytest.mark.parametrize("kind", BREAKS)
def test_it_finds_each_kind_of_break(kind):
    change, said = BREAKS[kind]
    assert said in _found(change)


ADDITIONS = {
    "a new operation": lambda s: s["paths"].update(
        {"/api/v1/other": copy.deepcopy(s["paths"]["/api/v1/things"])}
    ),
    "a new answer field": lambda s: _components(s)["Thing"]["properties"].update(color={"type": "string"}),
    "a new optional request field": lambda s: _components(s)["ThingIn"]["properties"].update(
        tag={"type": "string"}
    ),
    "a new enum value in an answer": lambda s: _components(s)["Thing"]["properties"]["kind"].update(
        enum=["a", "b", "c"]
    ),
    "a new enum value in a request": lambda s: _params(s)["kind"]["schema"].update(enum=["a", "b", "c"]),
    "a wider range": lambda s: _params(s)["limit"]["schema"].update(maximum=500, minimum=0),
    "a new optional parameter": lambda s: s["paths"]["/api/v1/things"]["get"]["parameters"].append(
        {"in": "query", "name": "after", "required": False, "schema": {"type": "string"}}
    ),
    "a new error code": lambda s: _components(s)["ListThings404"]["properties"]["error"].update(
        oneOf=[{"$ref": REF + "NotFoundError"}, {"$ref": REF + "GoneError"}]
    ),
    "a new response status": lambda s: s["paths"]["/api/v1/things"]["get"]["responses"].update(
        {"429": {"content": {"application/json": {"schema": {"$ref": REF + "ListThings404"}}}}}
    ),
    "an integer request field taking decimals": lambda s: _components(s)["ThingIn"]["properties"][
        "count"
    ].update(type="number"),
    "an answer field always present now": lambda s: _components(s)["Thing"].update(
        required=["id", "kind", "note", "size"]
    ),
    "a new webhook event": lambda s: s["webhooks"].update({"thing.gone": s["webhooks"]["thing.made"]}),
}


@pytest.mark.parametrize("kind", ADDITIONS)
def test_an_addition_is_no_break(kind):
    assert _found(ADDITIONS[kind]) == []


def test_a_break_is_allowed_by_a_new_major_version_or_the_changelogs_deprecated_list():
    old, new = _schema("2.1.0"), _schema("2.2.0")
    _components(new)["Thing"]["properties"].pop("size")
    (only,) = releases.unannounced(old, new, "")
    assert str(only) == "schema Thing (answer) field size: removed"
    changelog = (
        "## Changes\n\n### Deprecated\n\n- `schema Thing (answer) field size: removed` (since 2.1.0).\n"
    )
    assert releases.unannounced(old, new, changelog) == []
    assert releases.unannounced(old, new, changelog.replace("Deprecated", "Added")) == [only]
    new["info"]["version"] = "3.0.0"
    assert releases.unannounced(old, new, "") == []


# ---------------------------------------------------------------- the real schemas


def test_the_served_schema_keeps_the_latest_released_contract():
    (version, path) = releases.releases()[-1]
    released = json.loads(path.read_text())
    current = releases.served()
    assert releases.version_of(released["info"]["version"]) == version  # the file names its version
    assert releases.version_of(API_VERSION) >= version, "API_VERSION is older than the latest release"
    breaks = releases.unannounced(released, current, releases.CHANGELOG.read_text())
    assert not breaks, (
        f"The served schema breaks the contract of {path.name} ({len(breaks)} changes). Keep it (add beside, "
        "deprecate, remove later), or move API_VERSION's major part in oncore/api/version.py and write the "
        "changelog, or list a removal of something deprecated under Deprecated in docs/api.md:\n"
        + "\n".join(f"  {b}" for b in breaks[:60])
    )


def test_the_current_version_is_released():
    assert (releases.RELEASES / f"openapi-{API_VERSION}.json").exists(), (
        f"Release {API_VERSION}: manage.py api_schema --release writes docs/api/openapi-{API_VERSION}.json"
    )


def test_it_finds_what_broke_last_rounds_clients_and_the_major_version_says_so():
    """Version 1 (last round's schema, docs/api/openapi-1.json) to 2.0.0: the check finds the breaks that broke
    the strict TypeScript walk written against it, and allows them only because the major part moved."""
    first = json.loads((releases.RELEASES / "openapi-1.json").read_text())
    second = json.loads((releases.RELEASES / "openapi-2.0.0.json").read_text())
    found = {str(b) for b in breaking_changes(first, second)}
    for expected in [
        "schema LineOut (answer) field speaker: became an enum of ['caller', 'assistant']",
        "POST /api/v1/flags header parameter Idempotency-Key: pattern None became '^[ -~]+$'",
        "GET /api/v1/runs/{run_id}/lines query parameter label: enum value 'live_right' removed",
        "GET /api/v1/flags/{flag_id} response 404 (application/json): no longer ErrorOut (object)",
        "schema TurnOut (answer) field tenant: no longer string",
    ]:
        assert expected in found, expected
    assert any(
        b.startswith("schema LineOut (answer) field not_flaggable field code: became an enum") for b in found
    )
    assert "schema ErrorOut: removed" not in found  # the common error type is back
    assert releases.unannounced(first, second, "") == []  # 1 -> 2: the major part moved
    second["info"]["version"] = "1.1.0"
    assert len(releases.unannounced(first, second, "")) == len(found)
