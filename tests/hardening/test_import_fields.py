"""The calls file's fields are refused at the format's one validator, on every database, when the database could
not store them as given: a NUL character (PostgreSQL refuses it), a value longer than its column (PostgreSQL
refuses it, SQLite stores it whole), a date past what can be read back, a tenant slug that is not a slug. Each
answers 400 `import_format_error` naming the field and the limit, and nothing of the file is imported."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from oncore.accounts.models import Tenant
from oncore.calls import importer
from oncore.calls.models import Assistant, Call, Line
from tests.fixtures import assert_error

pytestmark = pytest.mark.django_db

EXTERNAL_ID = Call._meta.get_field("external_id").max_length
NAME = Tenant._meta.get_field("name").max_length
SLUG = Tenant._meta.get_field("slug").max_length
ASSISTANT = Assistant._meta.get_field("name").max_length
LIVE_NAME = Call._meta.get_field("live_transcriber_name").max_length


def calls_data() -> dict:
    return {
        "format": "oncore-calls/1",
        "tenants": [{"slug": "bistro", "name": "Bistro"}],
        "assistants": [{"tenant": "bistro", "name": "Front desk", "instructions": "Bookings."}],
        "calls": [
            {
                "external_id": "ext-1",
                "tenant": "bistro",
                "assistant": "Front desk",
                "started_at": "2025-03-01T18:00:00+01:00",
                "recorded": False,
                "live_transcriber": {"name": "Old STT"},
                "lines": [
                    {"speaker": "assistant", "text": "Hello, Bistro."},
                    {"speaker": "caller", "text": "Table for two."},
                ],
            }
        ],
    }


def upload(data) -> SimpleUploadedFile:
    return SimpleUploadedFile("calls.json", json.dumps(data).encode(), content_type="application/json")


def changed(path: str, value) -> dict:
    """calls_data() with the value at a dotted path ("calls.0.lines.1.text") replaced."""
    data = calls_data()
    *parents, last = path.split(".")
    node = data
    for key in parents:
        node = node[int(key)] if key.isdigit() else node[key]
    node[int(last) if last.isdigit() else last] = value
    return data


def assert_refused(response, *words):
    error = assert_error(response, 400, "import_format_error")
    for word in words:
        assert word in error["message"], error["message"]
    assert not Call.objects.exists() and not Line.objects.exists() and not Assistant.objects.exists()
    assert not Tenant.objects.filter(slug="bistro").exists()
    return error


LONG = "x" * 300
BAD_VALUES = [
    ("calls.0.lines.1.text", "Table\x00 for two.", ("call ext-1, line 2", "text", "NUL")),
    ("calls.0.external_id", "ext\x001", ("external_id", "NUL")),
    ("calls.0.external_id", LONG, ("external_id is 300 characters long", f"at most {EXTERNAL_ID}")),
    ("tenants.0.name", LONG, ("tenant 'bistro'", "name is 300 characters long", f"at most {NAME}")),
    ("assistants.0.name", LONG, ("name is 300 characters long", f"at most {ASSISTANT}")),
    ("calls.0.assistant", LONG, ("call ext-1", "assistant is 300 characters long", f"at most {ASSISTANT}")),
    ("calls.0.live_transcriber", {"name": LONG}, ("name is 300 characters long", f"at most {LIVE_NAME}")),
    ("calls.0.started_at", "9999-12-31T23:59:59-23:59", ("call ext-1", "started_at", "between", "9999")),
    ("calls.0.started_at", "0001-01-01T00:00:00+01:00", ("started_at", "between")),
    ("assistants.0.records_from", "9999-12-31T23:59:59-23:59", ("records_from", "between")),
    ("reference_date", "9999-12-31T23:59:59-23:59", ("reference_date", "between")),
    ("tenants.0.slug", "a b/../<x>", ("slug 'a b/../<x>' must be a slug", "letters, digits, hyphens")),
    ("tenants.0.slug", "b" * 101, (f"at most {SLUG}",)),
    ("calls.0.tenant", "a b/../<x>", ("call ext-1", "tenant", "must be a slug")),
    ("calls.0.recording", "a\x00b.flac", ("recording", "NUL")),
    ("assistants.0.instructions", "Book\x00ings", ("instructions", "NUL")),
]


@pytest.mark.parametrize(
    ("path", "value", "words"), BAD_VALUES, ids=[f"{p}={v!r:.20}" for p, v, _ in BAD_VALUES]
)
def test_it_refuses_a_field_the_database_could_not_store_naming_the_field_and_the_limit(
    api, org, path, value, words
):
    assert_refused(api.upload("/calls/import", {"file": upload(changed(path, value))}), *words)


def test_it_imports_values_at_the_limits_whole(api, org):
    data = calls_data()
    data["tenants"][0]["name"] = "n" * NAME
    data["assistants"][0]["name"] = data["calls"][0]["assistant"] = "a" * ASSISTANT
    call = data["calls"][0]
    call.update(external_id="e" * EXTERNAL_ID, live_transcriber={"name": "l" * LIVE_NAME})
    call["started_at"] = "9999-12-29T23:59:59+00:00"
    data["tenants"][0]["slug"] = call["tenant"] = data["assistants"][0]["tenant"] = "s" * SLUG
    response = api.upload("/calls/import", {"file": upload(data)})
    assert response.status_code == 200, response.content
    stored = Call.objects.select_related("tenant", "assistant").get()
    assert stored.external_id == "e" * EXTERNAL_ID and stored.live_transcriber_name == "l" * LIVE_NAME
    assert stored.tenant.name == "n" * NAME and stored.assistant.name == "a" * ASSISTANT
    assert stored.started_at.year == 9999 and api.get(f"/calls/{stored.pk}").status_code == 200


def test_it_refuses_the_field_in_the_same_words_from_the_command(api, org, tmp_path):
    data = changed("calls.0.external_id", LONG)
    error = assert_refused(api.upload("/calls/import", {"file": upload(data)}))
    (tmp_path / "calls.json").write_text(json.dumps(data))
    with pytest.raises(CommandError) as refused:
        call_command("import_calls", str(tmp_path / "calls.json"), "--org", org.slug)
    assert str(refused.value) == f"Nothing was imported: {error['message']}"


def test_it_reads_each_length_from_its_model_column(org):
    """The validator's limits are the columns' own: a longer column takes longer values at once."""
    with pytest.raises(importer.ImportFormatError) as refused:
        importer.validate(changed("calls.0.external_id", "e" * (EXTERNAL_ID + 1)), "calls.json")
    assert f"at most {EXTERNAL_ID}" in str(refused.value) and refused.value.errors
    assert importer.validate(changed("calls.0.external_id", "e" * EXTERNAL_ID), "calls.json")
