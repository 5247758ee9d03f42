"""No input gives a 500. The reproductions (integers past the database's range in filters, a deeply nested JSON
import, `next=javascript:...` on the flag move), then a walk of every dashboard URL (from the URL resolver) and
every API operation (from the OpenAPI schema) with hostile values in each parameter: huge and negative
integers, NaN and infinities, very long strings, NUL characters, nested JSON, wrong content types. No response
may be a 5xx. Each request of the walk that could write runs in a savepoint rolled back after it, so every
request meets the same objects. Schemathesis (tests/api/test_schema_fuzz.py) adds generated requests on top."""

import copy
import io
import json
import re

import numpy as np
import pytest
import soundfile as sf
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.urls import reverse

from oncore.transcribers.models import Transcriber
from tests.fixtures import assert_error
from tests.test_isolation import DASHBOARD, all_dashboard_names, owner_values
from transcriber_tests.models import Flag

pytestmark = pytest.mark.django_db

HUGE = "99999999999999999999999"


@pytest.fixture(autouse=True)
def _no_rate_limit_in_the_way(settings):
    """The walks send each costly endpoint hundreds of requests a minute: a 429 would stop them reaching the code
    they try (the limit has its tests in tests/oncore/test_ratelimit.py)."""
    settings.ONCORE = {**settings.ONCORE, "RATE_LIMIT_PER_MINUTE": 1_000_000}


# ---------------------------------------------------------------- the reproductions


@pytest.mark.parametrize(
    "path",
    [
        f"/calls?assistant={HUGE}",
        f"/flags?call={HUGE}",
        f"/flags?bank={HUGE}",
        f"/runs/{{run}}/lines?pattern={HUGE}",
    ],
)
def test_it_answers_422_to_an_integer_filter_past_the_databases_range(api, owned, path):
    error = assert_error(
        api.get(path.format(run=owned["run"].pk, bank=owned["bank"].pk)), 422, "validation_error"
    )
    assert "less than or equal to 9223372036854775807" in error["message"]


@pytest.mark.parametrize("path", ["/calls", "/assistants"])
def test_it_finds_no_tenant_by_an_id_past_the_databases_range(api, owned, path):
    """A tenant filter takes an id or a slug: digits past any id name no tenant (no 500: a 422 that names it)."""
    error = assert_error(api.get(path, {"tenant": HUGE}), 422, "validation_error")
    assert f"No tenant {HUGE!r}" in error["message"]


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("tt:calls", {"tenant": HUGE}),
        ("tt:calls", {"assistant": HUGE}),
        ("tt:calls", {"tenant": "-5", "assistant": "0"}),
        ("runs:new", {"call": HUGE}),
    ],
)
def test_it_answers_a_form_error_to_an_integer_past_the_databases_range_on_the_dashboard(
    admin_client, owned, name, query
):
    kwargs = {"pk": owned["bank"].pk} if name == "runs:new" else {}
    response = admin_client.get(reverse(name, kwargs=kwargs), query)
    assert response.status_code in (200, 422)
    if name == "tt:calls":
        assert response.status_code == 422 and "Choose an existing" in response.content.decode()


def test_it_refuses_a_deeply_nested_json_import_as_an_import_format_error(api, org):
    for depth in (100_000, 900):
        nested = '{"format": "oncore-calls/1", "calls": [], "x": ' + "[" * depth + "]" * depth + "}"
        response = api.upload("/calls/import", {"file": SimpleUploadedFile("calls.json", nested.encode())})
        if depth > 1000:
            error = assert_error(response, 400, "import_format_error")
            assert "nested too deeply" in error["message"]
        else:
            assert response.status_code < 500


@pytest.mark.parametrize(
    "next_url",
    ["javascript:alert(1)", "https://elsewhere.example/", "//elsewhere.example/x", "tt:banks", "\\\\evil"],
)
def test_it_redirects_a_moved_flag_only_to_this_site(admin_client, owned, next_url):
    flag = owned["flag"]
    response = admin_client.post(reverse("tt:move_flag", args=[flag.pk]), {"bank": "", "next": next_url})
    assert response.status_code == 302 and response["Location"] == reverse("tt:unbanked_flags")
    assert Flag.objects.get(pk=flag.pk).bank is None  # the move itself went through
    kept = admin_client.post(
        reverse("tt:move_flag", args=[flag.pk]), {"bank": owned["bank"].pk, "next": "/banks/?from=move"}
    )
    assert kept["Location"] == "/banks/?from=move"


# ---------------------------------------------------------------- the walk: values


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# Query-string and form values: what a URL can carry.
TEXT_VALUES = {
    "huge integer": HUGE,
    "int64 + 1": str(2**63),
    "negative": "-1",
    "zero": "0",
    "NaN": "NaN",
    "-Infinity": "-Infinity",
    "float": "1.5e308",
    "long string": "x" * 20_000,
    "long digits": "9" * 5_000,
    "NUL": "a\x00b",
    "control and bidi": "\x1b[2J\u202e\ufeff",
    "nested JSON": _nested(5_000),
    "empty": "",
    "the calendar's last day": "9999-12-31",  # the day after it does not exist (fourth penetration test)
    "the calendar's first day": "0001-01-01",
}
# The values tried one parameter at a time (every value is also tried in every parameter at once).
ONE_BY_ONE = (
    "huge integer",
    "negative",
    "NaN",
    "long string",
    "NUL",
    "the calendar's last day",
    "the calendar's first day",
)

# JSON body values: a field's hostile value, placed in an otherwise valid body.
NESTED = "@@nested@@"
JSON_VALUES = {
    "huge integer": 10**30,
    "int64 + 1": 2**63,
    "negative": -1,
    "zero": 0,
    "NaN": float("nan"),
    "Infinity": float("inf"),
    "long string": "x" * 100_000,
    "NUL": "a\x00b",
    "nested JSON": NESTED,
    "list": [1, "two", None],
    "object": {"a": {"b": 1}},
    "null": None,
    "boolean": True,
}
# Whole bodies: (content type, body).
WHOLE_BODIES = {
    "nested JSON": ("application/json", _nested(100_000)),
    "nested object": ("application/json", '{"a":' * 5_000 + "1" + "}" * 5_000),
    "not JSON": ("application/json", "{"),
    "a JSON array": ("application/json", "[1, 2, 3]"),
    "a JSON string": ("application/json", '"hello"'),
    "NaN": ("application/json", "NaN"),
    "invalid UTF-8": ("application/json", b"\xff\xfe\x00{"),
    "empty": ("application/json", ""),
    "text/plain": ("text/plain", "hello"),
    "form": ("application/x-www-form-urlencoded", "a=1&b=2"),
    "multipart": (
        "multipart/form-data; boundary=XYZ",
        "--XYZ\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n--XYZ--\r\n",
    ),
    "broken multipart": ("multipart/form-data; boundary=XYZ", "--XYZ\r\nnot a part"),
    "multipart without boundary": ("multipart/form-data", "whatever"),
}
RANGE_HEADERS = [
    f"bytes={HUGE}-",
    f"bytes=0-{HUGE}",
    "bytes=-0",
    "bytes=5-1",
    "bytes=0-1,4-5",
    "bytes=x",
    "lines=0-1",
]


def json_text(body) -> str:
    text = json.dumps(body)  # NaN and Infinity as Python writes them (not JSON, but clients send them)
    return text.replace(json.dumps(NESTED), _nested(100_000))


class Walk:
    """Sends the requests, keeps a 5xx or an exception as a failure, counts what it sent."""

    def __init__(self, client):
        client.raise_request_exception = True
        self.client, self.sent, self.failures, self.urls, self.operations = client, 0, [], set(), set()

    def send(self, method, url, what, rollback=True, **kwargs):
        self.sent += 1
        try:
            with transaction.atomic():
                response = getattr(self.client, method)(url, **kwargs)
                if response.streaming:
                    b"".join(response.streaming_content)
                transaction.set_rollback(rollback)
        except Exception as exc:  # a 500: the view raised
            self.failures.append(
                f"{method.upper()} {url[:120]} [{what}]: {exc.__class__.__name__}: {exc}"[:400]
            )
            return None
        if response.status_code >= 500:
            self.failures.append(f"{method.upper()} {url[:120]} [{what}]: {response.status_code}")
        return response

    def check(self, minimum_requests):
        print(
            f"\nhostile-input walk: {len(self.urls) or len(self.operations)} URLs/operations, {self.sent} requests"
        )
        assert not self.failures, f"{len(self.failures)} requests failed:\n" + "\n".join(self.failures[:60])
        assert self.sent >= minimum_requests


# ---------------------------------------------------------------- the walk: the API


def _example(name, prop, ids):
    """A valid value for a body field, from its name and JSON schema."""
    if name in ids:
        return ids[name]
    kind = prop.get("type") or next(
        (s.get("type") for s in prop.get("anyOf", []) if s.get("type") != "null"), ""
    )
    return {"integer": 1, "number": 0.5, "boolean": True, "array": [], "object": {}}.get(kind, "Hello there")


def api_operations(schema):
    for path, item in schema["paths"].items():
        for method, op in item.items():
            yield method, path, op


@pytest.fixture
def staff_admin(admin_user):
    admin_user.is_staff = True  # the benchmark's operator pages too
    admin_user.save(update_fields=["is_staff"])
    return admin_user


def test_it_answers_every_api_operation_without_a_5xx_whatever_a_parameter_holds(client, owned, org):
    headers = {"Authorization": f"Bearer {owned['raw_key']}"}
    ids = {
        **owner_values(owned),  # the path ids the isolation matrix uses; a free line, so a flag can be made
        "line_id": owned["free_line"].pk,
        "call_ids": [owned["call"].pk],
        "transcriber_ids": [owned["candidate"].pk],
        "candidate_id": owned["candidate"].pk,
        "expected_text": "Siobhan, table for four",
    }
    schema = client.get("/api/v1/openapi.json", headers=headers).json()
    components = schema["components"]["schemas"]
    walk = Walk(client)
    values_used = set()
    for method, path, op in api_operations(schema):
        walk.operations.add(f"{method} {path}")
        params = op.get("parameters", [])
        real = re.sub(r"\{(\w+)\}", lambda m: str(ids[m.group(1)]), path)
        for p in params:
            for label, value in TEXT_VALUES.items():
                if p["in"] == "path":
                    if not re.fullmatch(r"[0-9]+", value):
                        continue  # the path's int converter never matches it: a plain 404
                    url = path.replace("{" + p["name"] + "}", value)
                    url = re.sub(r"\{(\w+)\}", lambda m: str(ids[m.group(1)]), url)
                    walk.send(method, url, f"{p['name']}={label}", headers=headers)
                else:
                    walk.send(method, real, f"{p['name']}={label}", headers=headers, data={p["name"]: value})
                values_used.add(label)
        if "requestBody" not in op:
            continue
        content_type, media = next(iter(op["requestBody"]["content"].items()))
        for label, (ctype, body) in WHOLE_BODIES.items():
            walk.send(method, real, f"body: {label}", headers=headers, data=body, content_type=ctype)
        if content_type != "application/json":
            continue
        ref = media["schema"].get("$ref", "")
        body_schema = components.get(ref.rsplit("/", 1)[-1], media["schema"])
        props = body_schema.get("properties", {})
        valid = {n: _example(n, p, ids) for n, p in props.items()}
        for name in props:
            for label, value in JSON_VALUES.items():
                body = json_text({**valid, name: value})
                walk.send(
                    method,
                    real,
                    f"{name}={label}",
                    headers=headers,
                    data=body,
                    content_type="application/json",
                )
                values_used.add(label)
    for header in RANGE_HEADERS:
        walk.send(
            "get",
            f"/api/v1/lines/{owned['line'].pk}/audio",
            f"Range: {header}",
            headers={**headers, "Range": header},
        )
    for label, text in {
        "nested": '{"format": "oncore-calls/1", "calls": ' + _nested(100_000) + "}",
        "NaN timing": json.dumps(
            {
                "format": "oncore-calls/1",
                "tenants": [{"slug": "t"}],
                "calls": [
                    {
                        "tenant": "t",
                        "started_at": "2025-01-01T00:00:00Z",
                        "lines": [{"speaker": "caller", "start_s": float("nan"), "end_s": 1}],
                    }
                ],
            }
        ),
        "not UTF-8": b"\xff\xfe{",
        "a list": "[]",
        "huge number": '{"format": "oncore-calls/1", "calls": [{"tenant": "t", "external_id": 1e999}]}',
    }.items():
        upload = SimpleUploadedFile("calls.json", text.encode() if isinstance(text, str) else text)
        walk.send("post", "/api/v1/calls/import", f"file: {label}", headers=headers, data={"file": upload})
    assert len(walk.operations) >= 39 and len(values_used) == len(TEXT_VALUES | JSON_VALUES)
    walk.check(minimum_requests=1_000)


# ---------------------------------------------------------------- the walk: the calls file

# Values the call import missed before (items 5, 9-11 of the third penetration test), beside the JSON body values.
IMPORT_VALUES = {
    **JSON_VALUES,
    "300 characters": "x" * 300,
    "bidi override": "\u202eEnglish",
    "zero width": "English\u200b",
    "past year 9999 in UTC": "9999-12-31T23:59:59-23:59",
    "before year 1 in UTC": "0001-01-01T00:00:00+01:00",
    "not a slug": "a b/../<x>",
    "a path": "../../etc/passwd",
    "negative seconds": -1.5,
    "NUL only": "\x00",
}


def _calls_body(transcriber) -> dict:
    """A calls file with every field of the format in use (docs/call-import-format.md)."""
    line = {"speaker": "caller", "text": "Table for two.", "start_s": 0.5, "end_s": 1.5}
    call = {
        "external_id": "ext-1",
        "tenant": "bistro",
        "assistant": "Front desk",
        "started_at": "2025-03-01T18:00:00+01:00",
        "recording": "ext-1.flac",
        "recorded": True,
        "live_transcriber": {"name": "Old STT"},
        "lines": [line, {**line, "speaker": "assistant", "start_s": 1.6, "end_s": 2.5}],
    }
    return {
        "format": "oncore-calls/1",
        "reference_date": "2025-03-02T00:00:00Z",
        "tenants": [{"slug": "bistro", "name": "Bistro"}],
        "assistants": [
            {
                "tenant": "bistro",
                "name": "Front desk",
                "instructions": "Bookings.",
                "transcriber": {"id": transcriber.pk},
                "records_from": "2025-01-01T00:00:00Z",
                "records_until": "2025-06-01T00:00:00Z",
            }
        ],
        "calls": [
            call,
            {**call, "external_id": 2, "recording": None, "live_transcriber": transcriber.slug, "lines": []},
            {
                **call,
                "external_id": "ext-3",
                "recording": None,
                "live_transcriber": {"slug": transcriber.slug},
            },
        ],
    }


def _places(node, path=()):
    """Every place in the body, containers and values, as paths of keys and indexes."""
    if path:
        yield path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        yield from _places(child, (*path, key))


def _put(body, path, value):
    body = copy.deepcopy(body)
    node = body
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return body


def _recording(container: str) -> bytes:
    if container == "not audio":
        return b"RIFF\x00\x00\x00\x00WAVEnot really"
    t = np.arange(8000 * 3) / 8000
    out = io.BytesIO()
    sf.write(out, (np.sin(t * 2000) * 0.2).astype(np.float32), 8000, format=container)
    return out.getvalue()


def test_it_answers_every_field_of_a_calls_file_without_a_5xx_whatever_it_holds(api, org):
    """Each place of a calls file that uses every field, in turn, holds each hostile value: the import answers
    200 or a 400 (or 413) that says what is wrong, never a 5xx, on every database. Then the recording itself is
    each container libsndfile reads, named .flac."""
    body = _calls_body(Transcriber.objects.order_by("pk").first())
    flac = _recording("FLAC")
    walk = Walk(api.client)
    places = list(_places(body))

    def send(what, data, recording=flac):
        text = data if isinstance(data, str) else json_text(data)
        files = {
            "file": SimpleUploadedFile("calls.json", text.encode(), content_type="application/json"),
            "recordings": [SimpleUploadedFile("ext-1.flac", recording, content_type="audio/flac")],
        }
        response = walk.send("post", "/api/v1/calls/import", what, headers=api.headers, data=files)
        if (
            response is not None
            and response.status_code < 500
            and response.status_code not in (200, 400, 413)
        ):
            walk.failures.append(f"[{what}]: {response.status_code} {response.content[:200]!r}")

    send("the file as it is", body)
    for path in places:
        for label, value in IMPORT_VALUES.items():
            send(f"{'.'.join(map(str, path))}={label}", _put(body, path, value))
    for container in ("WAV", "OGG", "AIFF", "AU", "CAF", "W64", "not audio"):
        send(f"recording: {container}", body, _recording(container))
    walk.operations.add("POST /calls/import")
    assert len(places) >= 40
    walk.check(minimum_requests=len(places) * len(IMPORT_VALUES))


# ---------------------------------------------------------------- the walk: the dashboard

# Every name a dashboard view reads from the query string or a form.
QUERY_NAMES = [
    "page",
    "window",
    "kind",
    "tag",
    "disagree",
    "fragment",
    "label",
    "show",
    "tenant",
    "assistant",
    "date_from",
    "date_to",
    "has_flags",
    "call",
    "line",
    "tiers",
    "a",
    "b",
    "next",
]
FORM_NAMES = [
    "expected_text",
    "tags",
    "custom_tags",
    "note",
    "bank",
    "name",
    "language_label",
    "threshold_pct",
    "controls_per_flag",
    "transcriber",
    "confirmed",
    "direction",
    "candidate",
    "calls",
    "more_calls",
    "agrees",
    "organization",
    "next",
    "dataset",
    "concurrency",
    "allow_incomplete",
    "username",
    "password",
    "confirm_matches_live",
]
# The benchmark's pages (global, so not in the isolation matrix) and the public ones: their path ids.
EXTRA_URLS = {
    "bench:runs": {},
    "bench:run_start": {},
    "bench:compare": {},
    "bench:compare_csv": {},
    "cs:datasets": {},
    "bench:run": {"pk": 1},
    "bench:run_score": {"pk": 1},
    "bench:run_hits": {"pk": 1},
    "bench:run_summary": {"pk": 1},
    "bench:run_manifest": {"pk": 1},
    "cs:report": {"pk": 1},
    "cs:report_csv": {"pk": 1},
    "cs:report_json": {"pk": 1},
    "login": {},
    "switch_org": {},
    "api_errors": {},
    "healthz": {},
    "favicon": {},
    "password_change": {},
    "password_change_done": {},
    "tt:home": {},
    "logout": {},
}


@pytest.mark.slow
def test_it_answers_every_dashboard_url_without_a_5xx_whatever_a_parameter_holds(client, owned, staff_admin):
    client.force_login(staff_admin)
    walk = Walk(client)
    for name in sorted(all_dashboard_names()):
        if name in ("logout",):
            continue  # it would end the walk's session
        kwargs = DASHBOARD[name][1](owned) if name in DASHBOARD else EXTRA_URLS[name]
        walk.urls.add(name)
        urls = [reverse(name, kwargs=kwargs)]
        for key in kwargs:  # each id in the path: zero and past the database's range
            for bad in ("0", HUGE, str(2**63)):
                urls.append(reverse(name, kwargs={**kwargs, key: 1}).replace("/1/", f"/{bad}/", 1))
        allowed = set()
        for url in urls:
            for method in ("get", "post"):
                response = walk.send(method, url, "plain")
                if response is None or response.status_code != 405:
                    allowed.add(method)  # a method the view refuses (405) gets no more requests
        url = urls[0]
        for label, value in TEXT_VALUES.items():
            if "get" in allowed:
                walk.send(
                    "get", url, f"every query parameter={label}", data=dict.fromkeys(QUERY_NAMES, value)
                )
            if "post" in allowed:
                walk.send("post", url, f"every field={label}", data=dict.fromkeys(FORM_NAMES, value))
                query = "&".join(f"{n}={value[:100]}" for n in QUERY_NAMES)
                walk.send("post", f"{url}?{query}", f"query on a post={label}")
        for label in ONE_BY_ONE:
            for n in QUERY_NAMES if "get" in allowed else ():
                walk.send("get", url, f"{n}={label}", data={n: TEXT_VALUES[label]})
            for n in FORM_NAMES if "post" in allowed else ():
                walk.send("post", url, f"{n}={label}", data={n: TEXT_VALUES[label]})
        for label, (ctype, body) in WHOLE_BODIES.items() if "post" in allowed else ():
            walk.send("post", url, f"body: {label}", data=body, content_type=ctype)
    for header in RANGE_HEADERS:
        walk.send(
            "get", reverse("tt:line_audio", args=[owned["line"].pk]), f"Range: {header}", HTTP_RANGE=header
        )
    assert len(walk.urls) >= 45
    walk.check(minimum_requests=5_000)
