"""Banks, candidates, results, the turn table, CSV exports and the queue over the API."""

import csv
import io

import pytest

from tests.fixtures import assert_error
from transcriber_tests import actions
from transcriber_tests.models import Bank, Candidate, JudgePick
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


def test_it_creates_lists_edits_and_deletes_banks(api, org, django_assert_max_num_queries):
    response = api.post("/banks", {"name": "  French ", "threshold": 0.75, "controls_per_flag": 2})
    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"] == f"/api/v1/banks/{body['id']}"
    assert body["name"] == "French" and body["threshold"] == 0.75 and body["controls_per_flag"] == 2
    assert body["flags"] == 0 and body["candidates"] == [] and body["language_label"] == ""
    api.post("/banks", {"name": "English"})
    with django_assert_max_num_queries(5):
        listed = api.get("/banks").json()
    assert [b["name"] for b in listed["items"]] == ["English", "French"] and listed["count"] == 2
    assert listed["has_more"] is False and api.get("/banks", {"limit": 1}).json()["has_more"] is True
    edited = api.patch(f"/banks/{body['id']}", {"language_label": "Français"}).json()
    assert (
        edited["language_label"] == "Français" and edited["name"] == "French" and edited["threshold"] == 0.75
    )
    assert api.get(f"/banks/{body['id']}").json()["language_label"] == "Français"
    assert api.delete(f"/banks/{body['id']}").status_code == 204
    assert list(Bank.objects.values_list("name", flat=True)) == ["English"]


def test_it_refuses_a_taken_name_and_bad_settings(api, org):
    english = api.post("/banks", {"name": "English"}).json()
    french = api.post("/banks", {"name": "French"}).json()
    taken = assert_error(api.post("/banks", {"name": "English"}), 409, "bank_name_taken")
    assert taken["detail"] == {"bank": english["id"]}
    taken = assert_error(api.patch(f"/banks/{french['id']}", {"name": "English"}), 409, "bank_name_taken")
    assert taken["detail"] == {"bank": english["id"]}
    assert_error(api.post("/banks", {"name": "   "}), 422, "validation_error")
    assert_error(api.post("/banks", {"name": "X", "controls_per_flag": 3}), 422, "validation_error")
    assert_error(api.patch(f"/banks/{english['id']}", {"threshold": -0.1}), 422, "validation_error")


def test_it_estimates_then_adds_a_candidate_only_when_confirmed(api, bank, flag, make_transcriber):
    third = make_transcriber("third", "Siobhan, table for four at eight thirty", price="0.012")
    estimate = api.get(f"/banks/{bank.pk}/candidates/estimate", {"transcriber_id": third.pk}).json()
    assert (
        estimate["lines"] == 2
        and estimate["already_transcribed"] == 0
        and estimate["price_per_minute"] == "0.012000"
    )
    assert float(estimate["cost"]) > 0 and len(estimate["cost"].split(".")[1]) == 6
    error = assert_error(
        api.post(f"/banks/{bank.pk}/candidates", {"transcriber_id": third.pk}), 409, "estimate_not_confirmed"
    )
    assert error["detail"] == estimate  # one shape and rounding, wherever an estimate is shown
    # The sentence a person reads gives money to the cent (the detail keeps the exact figure).
    assert "audio minutes, under $0.01)" in error["message"] and "$0.000" not in error["message"]
    assert not Candidate.objects.filter(transcriber=third).exists()
    added = api.post(f"/banks/{bank.pk}/candidates", {"transcriber_id": third.pk, "confirm": True})
    assert added.status_code == 201 and added.json()["position"] == 2
    assert added["Location"] == f"/api/v1/banks/{bank.pk}/candidates/{third.pk}"
    assert api.get(f"/banks/{bank.pk}/candidates/{third.pk}").json() == added.json()
    exists = assert_error(
        api.post(f"/banks/{bank.pk}/candidates", {"transcriber_id": third.pk, "confirm": True}),
        409,
        "candidate_exists",
    )
    assert exists["detail"]["candidate"] == {"transcriber_id": third.pk, "position": 2}
    tasks.drain()
    listed = api.get(f"/banks/{bank.pk}/candidates").json()
    assert [c["transcriber"]["slug"] for c in listed["items"]] == ["test-good", "test-bad", "test-third"]


def test_it_refuses_a_disabled_transcriber_and_a_ninth_candidate(api, org, make_transcriber):
    bank = actions.do_create_bank(org, name="Big")
    off = make_transcriber("off")
    off.enabled = False
    off.save()
    assert_error(
        api.post(f"/banks/{bank.pk}/candidates", {"transcriber_id": off.pk, "confirm": True}),
        409,
        "transcriber_disabled",
    )
    for i in range(8):
        actions.do_add_candidate(bank, make_transcriber(f"t{i}"), confirmed=True)
    assert_error(
        api.post(
            f"/banks/{bank.pk}/candidates", {"transcriber_id": make_transcriber("ninth").pk, "confirm": True}
        ),
        409,
        "bank_full",
    )
    assert_error(
        api.post(f"/banks/{bank.pk}/candidates", {"transcriber_id": 10**9, "confirm": True}), 404, "not_found"
    )


def test_it_refuses_backfills_while_the_queue_is_full(api, bank, flag, make_transcriber, settings):
    settings.ONCORE = {**settings.ONCORE, "ORG_QUEUE_LIMIT": 1}
    actions.do_flag_line(flag.line.call.lines.get(position=4), "my number is 087", bank=bank)
    assert_error(
        api.post(
            f"/banks/{bank.pk}/candidates", {"transcriber_id": make_transcriber("late").pk, "confirm": True}
        ),
        429,
        "queue_full",
    )


def test_it_reorders_and_removes_candidates(api, bank):
    good, bad = [c.transcriber_id for c in bank.candidates.order_by("position")]
    body = api.put(f"/banks/{bank.pk}/candidates/order", {"transcriber_ids": [bad, good]}).json()
    assert [c["transcriber"]["id"] for c in body["items"]] == [bad, good]
    error = assert_error(
        api.put(f"/banks/{bank.pk}/candidates/order", {"transcriber_ids": [bad]}), 400, "invalid_request"
    )
    assert error["detail"]["current"] == sorted([good, bad])
    assert api.delete(f"/banks/{bank.pk}/candidates/{bad}").status_code == 204
    assert [c["transcriber"]["id"] for c in api.get(f"/banks/{bank.pk}/candidates").json()["items"]] == [good]
    assert_error(api.delete(f"/banks/{bank.pk}/candidates/{bad}"), 404, "not_found")


def test_it_gives_the_results_with_the_leader_and_the_lead_test(api, bank, flag):
    body = api.get(f"/banks/{bank.pk}/results", {"window": 7}).json()
    assert body["window_days"] == 7 and body["threshold"] == 0.6 and body["pending"] == 0
    good, bad = body["candidates"]
    assert good["transcriber"]["slug"] == "test-good" and good["is_leader"] and not bad["is_leader"]
    assert good["scored"] == 2 and good["interval"]["low"] <= good["accuracy"] <= good["interval"]["high"]
    assert good["entity_benchmark"] is None
    assert body["leader"]["transcriber_id"] == good["transcriber"]["id"]
    assert body["leader"]["clears_threshold"] is (good["accuracy"] >= 0.6)
    assert body["lead_test"]["runner_up_id"] == bad["transcriber"]["id"]
    assert 0 <= body["lead_test"]["p_value"] <= 1
    assert [row["transcriber"]["slug"] for row in body["production"]] == ["test-live"]
    assert body["production_note"] and body["date_from"] is None and body["date_to"] is None
    assert good["audio_cost"] == "0.000000" or len(good["audio_cost"].split(".")[1]) == 6
    assert_error(api.get(f"/banks/{bank.pk}/results", {"window": 91}), 422, "validation_error")


def test_it_pages_the_turn_table_with_filters(api, bank, flag, django_assert_max_num_queries):
    api.get("/queue")  # the key's last use is recorded once a minute: not part of the page's queries
    with django_assert_max_num_queries(8):  # key, bank, count, candidates, ids, items, scores, picks
        body = api.get(f"/banks/{bank.pk}/turns").json()
    assert body["count"] == 2 and [c["slug"] for c in body["candidates"]] == ["test-good", "test-bad"]
    # The flag and its control, in either order (the order of NULL control ids differs between databases).
    item = next(i for i in body["items"] if i["kind"] == "flag")
    assert item["flag_id"] == flag.pk and item["tags"] == ["name"]
    tenant = flag.line.call.tenant  # an object, as in every other payload (it was the name alone)
    assert item["tenant"] == {"id": tenant.pk, "slug": tenant.slug, "name": tenant.name}
    assert item["expected_text"] == "Siobhan, table for four at eight thirty"
    assert item["production"]["text"] == flag.line.text and item["production"]["match"] is False
    good, bad = item["cells"]
    assert good["match"] is True and good["wer"] == 0 and bad["match"] is False and bad["wer"] > 0
    assert {i["kind"] for i in body["items"]} == {"flag", "control"} and item["judge_pick"] is None
    assert api.get(f"/banks/{bank.pk}/turns", {"kind": "controls"}).json()["count"] == 1
    assert api.get(f"/banks/{bank.pk}/turns", {"tag": "time"}).json()["count"] == 0
    assert api.get(f"/banks/{bank.pk}/turns", {"disagree": "true"}).json()["count"] == 1
    assert len(api.get(f"/banks/{bank.pk}/turns", {"limit": 1, "offset": 1}).json()["items"]) == 1
    good_id = body["candidates"][0]["id"]
    JudgePick.objects.create(
        flag=flag, chosen_id=good_id, chosen_text="Siobhan", reasoning="Spelled as booked."
    )
    pick = api.get(f"/banks/{bank.pk}/turns", {"kind": "flags"}).json()["items"][0]["judge_pick"]
    assert pick == {
        "transcriber_id": good_id,
        "text": "Siobhan",
        "reasoning": "Spelled as booked.",
        "error": "",
    }
    assert_error(api.get(f"/banks/{bank.pk}/turns", {"kind": "both"}), 422, "validation_error")


def test_it_streams_the_same_csv_exports_as_the_dashboard(api, admin_client, bank, flag):
    for name in ("results.csv", "turns.csv"):
        response = api.get(f"/banks/{bank.pk}/{name}")
        assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
        content = b"".join(response.streaming_content).decode("utf-8")
        dashboard = b"".join(admin_client.get(f"/banks/{bank.pk}/{name}").streaming_content).decode("utf-8")
        assert content == dashboard and content.startswith("\ufeff")
        assert len(list(csv.reader(io.StringIO(content)))) > 1


def test_it_shows_the_organizations_queue(api, bank, recorded_call):
    actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan", bank=bank)
    body = api.get("/queue").json()
    assert body["queued"] + body["running"] >= 2 and body["limit"] >= 1 and body["concurrency"] >= 1


def test_it_hides_another_organizations_banks(other_api, bank, flag):
    assert other_api.get("/banks").json()["count"] == 0
    transcriber_id = bank.candidates.first().transcriber_id
    for response in (
        other_api.get(f"/banks/{bank.pk}"),
        other_api.patch(f"/banks/{bank.pk}", {"name": "Mine"}),
        other_api.delete(f"/banks/{bank.pk}"),
        other_api.get(f"/banks/{bank.pk}/candidates"),
        other_api.get(f"/banks/{bank.pk}/candidates/estimate", {"transcriber_id": transcriber_id}),
        other_api.post(f"/banks/{bank.pk}/candidates", {"transcriber_id": transcriber_id, "confirm": True}),
        other_api.put(f"/banks/{bank.pk}/candidates/order", {"transcriber_ids": [transcriber_id]}),
        other_api.delete(f"/banks/{bank.pk}/candidates/{transcriber_id}"),
        other_api.get(f"/banks/{bank.pk}/results"),
        other_api.get(f"/banks/{bank.pk}/turns"),
        other_api.get(f"/banks/{bank.pk}/results.csv"),
        other_api.get(f"/banks/{bank.pk}/turns.csv"),
    ):
        assert_error(response, 404, "not_found")
    assert Bank.objects.filter(pk=bank.pk, name="English").exists()
    assert other_api.get("/queue").json()["queued"] == 0


def test_it_puts_a_candidates_entity_benchmark_beside_its_results(api, bank, flag, monkeypatch):
    from benchmark import selectors

    good = bank.candidates.get(position=0).transcriber_id
    figure = selectors.EntityHeadline(0.8, 40, 7, True, 5, "A", "packaged fixture")
    monkeypatch.setattr(selectors, "entity_headlines", lambda ids: {good: figure})
    cards = api.get(f"/banks/{bank.pk}/results").json()["candidates"]
    assert cards[0]["entity_benchmark"] == {
        "accuracy": 0.8,
        "n": 40,
        "run_id": 7,
        "packaged_fixture": True,
        "dataset_clips": 5,
        "caption": "packaged fixture, 5 clips — not the full benchmark, tier A, n=40",
    }
    assert cards[1]["entity_benchmark"] is None
