"""The API side of the flag rules: an expected text the live transcript already says, a threshold with
decimals, the reason of a failed cell and the mix of controls."""

import pytest

from tests.fixtures import assert_error, make_call
from transcriber_tests import actions
from transcriber_tests.models import Flag
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


def test_it_refuses_an_expected_text_that_the_live_transcript_already_says_unless_confirmed(
    api, client, bank, recorded_call
):
    line = recorded_call.lines.get(position=2)  # live: "yes that's right"
    body = {"line_id": line.pk, "expected_text": "Yes, that's right.", "bank_id": bank.pk}
    error = assert_error(api.post("/flags", body), 409, "expected_matches_production")
    assert "already says this" in error["message"] and error["detail"]["production_text"] == line.text
    assert not Flag.objects.exists()
    created = api.post("/flags", {**body, "confirm_matches_production": True})
    assert created.status_code == 201, created.content

    other = api.post(
        "/flags",
        {"line_id": recorded_call.lines.get(position=0).pk, "expected_text": "Siobhan, table for four"},
    ).json()
    assert_error(
        api.patch(f"/flags/{other['id']}", {"expected_text": "Shivon, table for for at 830"}),
        409,
        "expected_matches_production",
    )
    edited = api.patch(
        f"/flags/{other['id']}",
        {"expected_text": "Shivon, table for for at 830", "confirm_matches_production": True},
    )
    assert edited.status_code == 200 and edited.json()["expected_text"] == "Shivon, table for for at 830"

    guide = client.get("/api/errors/").content.decode()
    assert "expected_matches_production" in guide
    schema = client.get("/api/v1/openapi.json").json()
    assert "expected_matches_production" in str(schema["paths"]["/api/v1/flags"]["post"]["responses"])


def test_it_takes_a_threshold_exactly_and_tells_no_text_from_error(
    api, org, tenant, live_transcriber, make_transcriber, stt_server
):
    bank = api.post("/banks", {"name": "Exact", "threshold": 0.702, "controls_per_flag": 2}).json()
    assert bank["threshold"] == 0.702
    assert_error(api.patch(f"/banks/{bank['id']}", {"threshold": 0.70215}), 422, "validation_error")
    b = actions.do_create_bank(org, name="Cells", controls_per_flag=1)
    actions.do_add_candidate(b, make_transcriber("silent", "?"), confirmed=True)
    actions.do_add_candidate(b, make_transcriber("down", "x"), confirmed=True)
    stt_server.statuses["down"] = 400
    call = make_call(tenant, live_transcriber, caller_texts=["one two", "three four", "five six"])
    lines = list(call.lines.filter(speaker="caller").order_by("position"))
    actions.do_flag_line(lines[0], "one too", bank=b)
    api.patch(f"/banks/{b.pk}", {"controls_per_flag": 0})
    actions.do_flag_line(lines[2], "five sex", bank=b)
    tasks.drain()

    turns = api.get(f"/banks/{b.pk}/turns", {"kind": "flags"}).json()["items"]
    cells = {c["transcriber_id"]: c for c in turns[0]["cells"]}
    silent, down = (t.transcriber_id for t in b.candidates.order_by("position"))
    assert (cells[silent]["failed"], cells[silent]["failure"], cells[silent]["text"]) == (
        True,
        "no text",
        "?",
    )
    assert (cells[down]["failed"], cells[down]["failure"], cells[down]["text"]) == (True, "error", None)
    assert turns[0]["production"]["failure"] is None
    results = api.get(f"/banks/{b.pk}/results").json()
    assert results["control_mix"] == [{"controls": 0, "flags": 1}, {"controls": 1, "flags": 1}]
    assert [c["failed"] for c in results["candidates"]] == [3, 3]
