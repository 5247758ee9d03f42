"""Flags over the API: create, list with filters, read, edit, move, delete, and each refusal's code."""

import pytest

from tests.fixtures import assert_error, make_call
from transcriber_tests import actions
from transcriber_tests.models import Flag, Score
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


def _line(call, position):
    return call.lines.get(position=position)


def test_it_flags_a_line_into_a_bank_and_scores_it(api, bank, recorded_call):
    line = _line(recorded_call, 0)
    response = api.post(
        "/flags",
        {
            "line_id": line.pk,
            "expected_text": "Siobhan, table for four at eight thirty",
            "bank_id": bank.pk,
            "tags": ["name", "Time"],
            "note": "caller spelled it",
        },
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"] == f"/api/v1/flags/{body['id']}"
    assert body["line_id"] == line.pk and body["bank_id"] == bank.pk and body["tags"] == ["name", "time"]
    assert body["production_text"] == line.text and body["call_id"] == recorded_call.pk
    assert len(body["controls"]) == 1 and body["created_at"].endswith("Z")
    tasks.drain()
    flag = Flag.objects.get(pk=body["id"])
    assert flag.scores.filter(control=None, source=Score.CANDIDATE).count() == 2


def test_it_flags_a_line_into_no_bank(api, recorded_call):
    body = api.post(
        "/flags", {"line_id": _line(recorded_call, 2).pk, "expected_text": "my number is 087"}
    ).json()
    assert body["bank_id"] is None and body["controls"] == []
    assert not Score.objects.exists()


def test_it_refuses_each_unflaggable_line_with_its_code(api, tenant, bank, recorded_call, tmp_path):
    line = _line(recorded_call, 0)
    assert_error(
        api.post("/flags", {"line_id": _line(recorded_call, 1).pk, "expected_text": "Sure"}),
        409,
        "line_not_caller",
    )
    for nothing in ("", "   ", " , ", "..."):  # no words typed: one answer, whatever was sent
        assert_error(
            api.post("/flags", {"line_id": line.pk, "expected_text": nothing}), 400, "expected_text_empty"
        )
    first = api.post("/flags", {"line_id": line.pk, "expected_text": "Siobhan"}).json()
    error = assert_error(
        api.post("/flags", {"line_id": line.pk, "expected_text": "Again"}), 409, "flag_exists"
    )
    assert error["detail"] == {"line": line.pk, "flag": first["id"]} and str(first["id"]) in error["message"]
    no_timing = _line(recorded_call, 2)
    no_timing.start_s = no_timing.end_s = None
    no_timing.save()
    assert_error(
        api.post("/flags", {"line_id": no_timing.pk, "expected_text": "x"}), 409, "line_has_no_timing"
    )
    unrecorded = make_call(tenant, recorded_call.live_transcriber, caller_texts=["hi"], recorded=False)
    assert_error(
        api.post("/flags", {"line_id": _line(unrecorded, 0).pk, "expected_text": "hi"}),
        409,
        "line_not_recorded",
    )
    unknown = make_call(tenant, None, caller_texts=["hi"])
    assert_error(
        api.post("/flags", {"line_id": _line(unknown, 0).pk, "expected_text": "hi"}),
        409,
        "live_transcriber_unknown",
    )
    missing = make_call(tenant, recorded_call.live_transcriber, caller_texts=["hi"])
    missing.recording.storage.delete(missing.recording.name)
    assert_error(
        api.post("/flags", {"line_id": _line(missing, 0).pk, "expected_text": "hi"}),
        409,
        "recording_unavailable",
    )
    assert_error(api.post("/flags", {"line_id": 10**9, "expected_text": "hi"}), 404, "not_found")
    assert_error(
        api.post("/flags", {"line_id": line.pk, "expected_text": "hi", "bank_id": 10**9}), 404, "not_found"
    )
    assert_error(api.post("/flags", {"line_id": line.pk}), 422, "validation_error")
    assert_error(api.post("/flags", {"line_id": line.pk, "expected_text": "a\x00b"}), 422, "validation_error")
    assert_error(
        api.post("/flags", {"line_id": line.pk, "expected_text": "x", "tags": ["t" * 51]}),
        422,
        "validation_error",
    )


def test_it_refuses_flags_into_a_bank_while_the_queue_is_full(api, bank, recorded_call, settings):
    settings.ONCORE = {**settings.ONCORE, "ORG_QUEUE_LIMIT": 1}
    api.post(
        "/flags", {"line_id": _line(recorded_call, 0).pk, "expected_text": "Siobhan", "bank_id": bank.pk}
    )
    error = assert_error(
        api.post("/flags", {"line_id": _line(recorded_call, 2).pk, "expected_text": "x", "bank_id": bank.pk}),
        429,
        "queue_full",
    )
    assert error["detail"]["limit"] == 1
    assert (
        api.post("/flags", {"line_id": _line(recorded_call, 2).pk, "expected_text": "x"}).status_code == 201
    )


def test_it_lists_flags_with_filters(api, bank, recorded_call, django_assert_max_num_queries):
    first = actions.do_flag_line(_line(recorded_call, 0), "Siobhan", bank=bank, tags=["name"])
    second = actions.do_flag_line(_line(recorded_call, 2), "yes that is right", tags=["time", "my own"])
    # the key, its last use, the count, the flags, their controls, their edit history
    with django_assert_max_num_queries(6):
        body = api.get("/flags").json()
    assert [f["id"] for f in body["items"]] == [second.pk, first.pk]
    assert [f["id"] for f in api.get("/flags", {"bank": bank.pk}).json()["items"]] == [first.pk]
    assert [f["id"] for f in api.get("/flags", {"unbanked": "true"}).json()["items"]] == [second.pk]
    assert [f["id"] for f in api.get("/flags", {"unbanked": "false"}).json()["items"]] == [first.pk]
    assert [f["id"] for f in api.get("/flags", {"tag": "My Own"}).json()["items"]] == [second.pk]
    assert api.get("/flags", {"tag": "my"}).json()["count"] == 0
    assert api.get("/flags", {"call": recorded_call.pk}).json()["count"] == 2
    assert api.get("/flags", {"date_from": "2000-01-01", "date_to": "2999-01-01"}).json()["count"] == 2
    assert api.get("/flags", {"date_to": "2000-01-01"}).json()["count"] == 0
    assert api.get(f"/flags/{first.pk}").json()["tags"] == ["name"]


def test_it_edits_a_flag_and_rescores_it(api, flag):
    body = api.patch(
        f"/flags/{flag.pk}", {"expected_text": "Shivon table for four at 830", "note": "n"}
    ).json()
    assert body["expected_text"] == "Shivon table for four at 830" and body["note"] == "n"
    assert body["tags"] == ["name"]
    bad = flag.scores.get(control=None, source=Score.CANDIDATE, transcriber__slug="test-bad")
    assert bad.match
    assert api.patch(f"/flags/{flag.pk}", {"tags": []}).json()["tags"] == []
    for nothing in ("", "?!"):
        assert_error(api.patch(f"/flags/{flag.pk}", {"expected_text": nothing}), 400, "expected_text_empty")


def test_it_moves_a_flag_between_banks_and_out(api, org, flag, make_transcriber):
    other = actions.do_create_bank(org, name="Other")
    assert api.post(f"/flags/{flag.pk}/move", {"bank_id": other.pk}).json()["bank_id"] == other.pk
    assert api.post(f"/flags/{flag.pk}/move", {"bank_id": None}).json()["bank_id"] is None
    assert_error(api.post(f"/flags/{flag.pk}/move", {"bank_id": 10**9}), 404, "not_found")


def test_it_deletes_a_flag(api, flag):
    response = api.delete(f"/flags/{flag.pk}")
    assert response.status_code == 204 and response.content == b""
    assert not Flag.objects.filter(pk=flag.pk).exists()
    assert_error(api.delete(f"/flags/{flag.pk}"), 404, "not_found")


def test_it_hides_another_organizations_flags_and_lines(other_api, other_org, flag, recorded_call):
    other_bank = actions.do_create_bank(other_org, name="Theirs")
    assert other_api.get("/flags").json()["count"] == 0
    for response in (
        other_api.get(f"/flags/{flag.pk}"),
        other_api.patch(f"/flags/{flag.pk}", {"note": "x"}),
        other_api.post(f"/flags/{flag.pk}/move", {"bank_id": other_bank.pk}),
        other_api.delete(f"/flags/{flag.pk}"),
        other_api.post("/flags", {"line_id": _line(recorded_call, 2).pk, "expected_text": "x"}),
    ):
        assert_error(response, 404, "not_found")
    assert Flag.objects.filter(pk=flag.pk, note="").exists()
