"""The OpenAPI schema as generators read it: valid OpenAPI, no empty string in an enum, every error code in the
enum of `ErrorBody.code`, no unused component, CSV as text and audio as bytes, an Idempotency-Key on every POST,
one estimate shape per kind, the API's word for the live transcript, and a client generated from it with
openapi-python-client, without a warning, that downloads a CSV and a line's audio from a live server."""

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from openapi_spec_validator import validate

from oncore.api import ERROR_CODES

pytestmark = pytest.mark.django_db

# Names that keep the word live: they are about the transcriber a call ran on, not its transcript.
LIVE_TRANSCRIBER_FIELDS = {"live_transcriber", "live_transcriber_name", "live_transcriber_known"}


@pytest.fixture
def schema(client):
    return client.get("/api/v1/openapi.json").json()


def _walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_it_is_valid_openapi(schema):
    validate(schema)


def test_it_has_no_empty_enum_value_and_every_error_code_in_an_error_body(schema):
    enums = [node["enum"] for node in _walk(schema) if "enum" in node]
    assert enums and not [e for e in enums if "" in e]
    codes = {
        s["properties"]["code"]["enum"][0]
        for name, s in schema["components"]["schemas"].items()
        if name.endswith("Error") and "code" in s.get("properties", {})
    }
    # Every code an operation answers has its body (method_not_allowed is answered outside the operations).
    assert codes == {e.code for e in ERROR_CODES} - {"method_not_allowed"}


def test_every_operations_error_type_is_also_the_common_error_type(schema):
    """ErrorOut is the one error type for clients that want one: each operation's exact error types declare that
    they are ErrorOuts (allOf), and fit it: an `error` whose `code` is one of ErrorBody's, a string `message` and
    an object `detail`."""
    components = schema["components"]["schemas"]
    body = components["ErrorBody"]
    assert components["ErrorOut"]["properties"]["error"] == {"$ref": "#/components/schemas/ErrorBody"}
    assert set(body["properties"]["code"]["enum"]) == {e.code for e in ERROR_CODES}
    checked = 0
    for item in schema["paths"].values():
        for op in item.values():
            for status, response in op["responses"].items():
                if not status.startswith(("4", "5")):
                    continue
                ref = response["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
                typed = components[ref]
                assert typed["allOf"] == [{"$ref": "#/components/schemas/ErrorOut"}], ref
                error = typed["properties"]["error"]
                for variant in error.get("oneOf", [error]):
                    fields = components[variant["$ref"].rsplit("/", 1)[-1]]
                    assert set(fields["properties"]["code"]["enum"]) <= set(
                        body["properties"]["code"]["enum"]
                    )
                    assert fields["properties"]["message"]["type"] == "string"
                    detail = components[fields["properties"]["detail"]["$ref"].rsplit("/", 1)[-1]]
                    assert detail["type"] == "object" and set(fields["required"]) == {
                        "code",
                        "message",
                        "detail",
                    }
                    checked += 1
    assert checked > 300


def test_it_describes_every_operation_and_parameter_and_keeps_request_defaults_out_of_required(schema):
    """Integrators read the descriptions in their editor: none is missing. A request body field with a server
    default carries no `default` keyword (openapi-typescript's defaults would make it required), and says its
    default in words."""
    missing = [
        f"{op['operationId']}{'' if not p else ' ' + p['name']}"
        for item in schema["paths"].values()
        for op in item.values()
        for p in [None, *op.get("parameters", [])]
        if not (
            op.get("description") if p is None else p.get("description") or p["schema"].get("description")
        )
    ]
    assert not missing, missing
    bank_in = schema["components"]["schemas"]["BankIn"]["properties"]
    assert (
        "default" not in bank_in["threshold"]
        and "Default when left out: `0.6`." in bank_in["threshold"]["description"]
    )
    assert bank_in["threshold"]["type"] == "number"
    assert schema["components"]["schemas"]["BankIn"]["required"] == ["name"]


def test_it_lists_only_the_components_operations_use(schema):
    text = json.dumps([schema["paths"], schema["webhooks"]])
    components = schema["components"]["schemas"]
    reached, todo = set(), set(re.findall(r"#/components/schemas/(\w+)", text))
    while todo:
        name = todo.pop()
        reached.add(name)
        todo |= set(re.findall(r"#/components/schemas/(\w+)", json.dumps(components[name]))) - reached
    assert set(components) == reached | {"ErrorOut", "ErrorBody"}  # the common error type, for clients
    assert "PageIn" not in components and "CallFilters" not in components


def test_it_declares_csv_as_text_audio_as_bytes_and_the_range_header(schema):
    for path in ("/banks/{bank_id}/results.csv", "/banks/{bank_id}/turns.csv", "/runs/{run_id}/lines.csv"):
        content = schema["paths"]["/api/v1" + path]["get"]["responses"]["200"]["content"]
        assert content == {"text/csv": {"schema": {"type": "string"}}}
    audio = schema["paths"]["/api/v1/lines/{line_id}/audio"]["get"]
    for status in ("200", "206"):
        assert audio["responses"][status]["content"]["audio/wav"]["schema"]["format"] == "binary"
        assert "application/octet-stream" in audio["responses"][status]["content"]
    assert [p["name"] for p in audio["parameters"] if p["in"] == "header"] == ["Range"]


def test_it_takes_an_idempotency_key_on_every_post_and_json_bodies_only(schema):
    posts = 0
    for item in schema["paths"].values():
        for method, op in item.items():
            headers = [p["name"] for p in op.get("parameters", []) if p["in"] == "header"]
            assert ("Idempotency-Key" in headers) == (method == "post"), op["operationId"]
            if method == "post":
                posts += 1
                assert "idempotency_key_reused" in op["responses"]["409"]["x-error-codes"]
            if "application/json" in op.get("requestBody", {}).get("content", {}):
                assert op["responses"]["415"]["x-error-codes"] == ["unsupported_media_type"]
            assert (
                "X-Request-Id"
                in op["responses"]["200" if "200" in op["responses"] else next(iter(op["responses"]))][
                    "headers"
                ]
            )
    assert posts >= 12


def test_it_gives_every_estimate_one_shape(schema):
    components = schema["components"]["schemas"]
    assert components["RunOut"]["properties"]["estimate"]["$ref"].endswith("/RunEstimateOut")
    for name in ("RunEstimateOut", "EstimateOut"):
        for field, prop in components[name]["properties"].items():
            if "cost" in field or field == "price_per_minute":
                assert prop["pattern"] == r"^-?[0-9]+\.[0-9]{6}$", (name, field)


def test_it_calls_the_live_transcript_production(schema):
    names = {
        name
        for node in _walk(schema["components"]["schemas"])
        if isinstance(node.get("properties"), dict)
        for name in node["properties"]
    }
    assert not {n for n in names if re.search(r"(^|_)live(_|$)", n)} - LIVE_TRANSCRIBER_FIELDS
    assert {"production_text", "production", "production_note", "production_match", "production_wer"} <= names


# ---------------------------------------------------------------- a generated client


def generate_client(schema: dict, folder: Path, package: str = "oncore_client") -> str:
    """Generate a Python client from the schema into `folder`, as an integrator would; returns what the
    generator printed."""
    (folder / "openapi.json").write_text(json.dumps(schema))
    (folder / "config.yml").write_text(f"package_name_override: {package}\n")
    bin_dir = Path(sys.executable).parent
    result = subprocess.run(
        [
            str(bin_dir / "openapi-python-client"),
            "generate",
            "--path",
            str(folder / "openapi.json"),
            "--output-path",
            str(folder / package),
            "--meta",
            "none",
            "--config",
            str(folder / "config.yml"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    return output


@pytest.fixture
def generated(schema, tmp_path, monkeypatch):
    output = generate_client(schema, tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("oncore_client"), output
    for name in [m for m in sys.modules if m == "oncore_client" or m.startswith("oncore_client.")]:
        del sys.modules[name]


@pytest.mark.slow
def test_it_generates_a_client_that_downloads_a_csv_and_a_lines_audio(generated, live_server, org_key, flag):
    package, output = generated
    assert "warning" not in output.lower() and "error" not in output.lower(), output
    from oncore_client.api.calls import get_call, line_audio
    from oncore_client.api.flags import get_flag
    from oncore_client.api.results import export_results, export_turns

    client = package.AuthenticatedClient(
        base_url=live_server.url, token=org_key, raise_on_unexpected_status=True
    )
    results = export_results.sync(client=client, bank_id=flag.bank_id)
    assert isinstance(results, str) and results.startswith(
        "\ufeffbank,window_days,first_day,last_day,row,order"
    )
    turns = export_turns.sync(client=client, bank_id=flag.bank_id)
    assert "Siobhan, table for four at eight thirty" in turns
    call = get_call.sync(client=client, call_id=flag.line.call_id)
    line = next(item for item in call.line_items if item.id == flag.line_id)
    assert line.audio_url == f"/api/v1/lines/{line.id}/audio" and line.flag.id == flag.pk
    whole = line_audio.sync(client=client, line_id=line.id).payload.read()
    assert whole[:4] == b"RIFF" and whole[8:12] == b"WAVE"
    part = line_audio.sync_detailed(client=client, line_id=line.id, range_="bytes=0-99")
    assert part.status_code == 206 and part.parsed.payload.read() == whole[:100]
    missing = get_flag.sync_detailed(client=client, flag_id=999999)
    assert missing.status_code == 404 and missing.parsed.error.code == "not_found"  # its 404's one code
    flagged = get_flag.sync(client=client, flag_id=flag.pk)
    assert flagged.production_text == flag.line.text and flagged.created_at.tzinfo is not None


def test_it_builds_the_schema_once_and_names_each_requests_server():
    """The reference page and openapi.json took about a second each to build the schema; it is built once per
    process now, and each answer still names the server it was asked at, in a copy of its own."""
    from oncore.api import api

    first = api.get_openapi_schema(server="https://one.example")
    first["paths"].clear()  # a caller changing its copy changes nobody else's
    second = api.get_openapi_schema(server="https://two.example")
    assert second["servers"] == [{"url": "https://two.example", "description": "This OnCore server"}]
    assert first["servers"][0]["url"] == "https://one.example" and "/api/v1/calls" in second["paths"]
