"""The API's answers checked against the schema it publishes: `check_declared(response)` finds the operation a
test client's request reached, and validates the answer's body against the schema that operation declares for
its status (an error's body against exactly that status's codes, each with its own `detail`). `assert_error`
(tests/fixtures.py) calls it on every error a test asserts, so a `detail` that differs from what the schema
promises integrators, or a code an operation answers without declaring it, fails the test that produced it."""

import re
from functools import cache

from jsonschema import Draft202012Validator


@cache
def api_schema() -> dict:
    from django.urls import get_resolver

    from oncore.api import api

    get_resolver().url_patterns  # noqa: B018 (loading the URLs mounts every router on the API)
    return api.get_openapi_schema(server="http://testserver")


@cache
def _operations() -> list:
    found = []
    for path, item in api_schema()["paths"].items():
        pattern = re.compile(
            "^"
            + re.sub(r"\\{[a-z_]+\\}", "[^/]+", re.escape(path).replace(r"\{", "{").replace(r"\}", "}"))
            + "$"
        )
        for method, op in item.items():
            found.append((pattern, method.upper(), op))
    return found


def operation_of(path: str, method: str) -> dict | None:
    for pattern, m, op in _operations():
        if m == method and pattern.match(path):
            return op
    return None


def check_declared(response) -> None:
    request = response.request
    op = operation_of(request["PATH_INFO"], request["REQUEST_METHOD"])
    if op is None:  # not an operation (an unknown path, a method the path does not take): nothing declared
        return
    status = str(response.status_code)
    declared = op["responses"].get(status)
    assert declared is not None, f"{op['operationId']} answered {status}, which its schema does not declare"
    media = declared.get("content", {}).get("application/json")
    if media is None:
        return
    schema = {**media["schema"], "components": api_schema()["components"]}
    problems = sorted(Draft202012Validator(schema).iter_errors(response.json()), key=str)
    assert not problems, f"{op['operationId']} {status} differs from its schema: " + "; ".join(
        f"{list(p.absolute_path)}: {p.message}" for p in problems[:3]
    )
