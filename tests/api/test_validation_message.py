"""A refused parameter's message ends with one full stop, though its own message ends with one too."""

import pytest

pytestmark = pytest.mark.django_db


def test_a_refused_cursor_reads_as_one_sentence(api):
    body = api.get("/calls", {"after": "bogus"}).json()
    assert body["error"]["code"] == "validation_error"
    message = body["error"]["message"]
    assert "'bogus' is not a calls cursor" in message and message.endswith(").") and ".." not in message
