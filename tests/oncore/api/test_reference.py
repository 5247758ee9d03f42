"""The API reference as people read it on a desktop and a phone (issue 34, 5.12): an index of every tag with its
operations, each tag on a page of its own with its operations in full and the schemas they use (folded), values
written as JSON ("default false", never Python's "default False"), and a clear answer for a section that does
not exist."""

import re

import pytest

from tests.transcriber_tests.support import read

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(client):
    return client.get("/api/v1/openapi.json").json()


def ops_by_tag(schema) -> dict:
    found = {}
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            found.setdefault(op["tags"][0], []).append((method.upper(), path, op["operationId"]))
    return found


def test_the_index_lists_every_tag_and_operation_and_is_small(client, schema):
    response = client.get("/api/v1/docs")
    html = response.content.decode()
    assert response.status_code == 200 and len(response.content) < 40_000  # the whole reference was 400 KB
    for tag, ops in ops_by_tag(schema).items():
        assert f'href="?tag={tag.replace(" ", "%20")}">{tag}</a>' in html
        for method, path, op_id in ops:
            assert (
                f'<a href="?tag={tag.replace(" ", "%20")}#{op_id}"><code>{method} {path}</code></a>' in html
            )
    assert "<table" not in html and "Schemas these operations use" not in html


def test_a_tag_page_gives_its_operations_in_full_with_the_schemas_they_use(client, schema):
    html = client.get("/api/v1/docs", {"tag": "Results"}).content.decode()
    text = read(html)
    mine = ops_by_tag(schema)["Results"]
    for method, path, op_id in mine:
        assert f'<article class="card" id="{op_id}">' in html and f"{method} {path}" in text
    others = [op for tag, ops in ops_by_tag(schema).items() if tag != "Results" for op in ops]
    assert not any(f'id="{op_id}"' in html for _, _, op_id in others)
    assert '<details class="card schema" id="schema-CardOut">' in html  # the results' cards, folded
    assert "API reference › Results" in text
    # Values as JSON: the turn table's `disagree` defaults to false.
    row = re.search(r"<tr><td><code>disagree</code></td>.*?</tr>", html).group(0)
    assert "<td>default false</td>" in row
    assert "default false" in text and "default False" not in text and "default None" not in text


def test_no_tag_page_says_python(client, schema):
    for tag in ops_by_tag(schema):
        text = read(client.get("/api/v1/docs", {"tag": tag}).content)
        assert not re.search(r"default (False|True|None)\b|one of '", text), tag


def test_a_section_that_does_not_exist_says_so_and_lists_the_sections(client):
    response = client.get("/api/v1/docs", {"tag": "Nope"})
    assert response.status_code == 404
    text = read(response.content)
    assert "The reference has no section named “Nope”: choose one below." in text
    assert "Full-call runs" in text
