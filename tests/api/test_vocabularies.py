"""/api/v1/vocabularies with organization keys: make, read, change and delete a vocabulary, who changed what, and a
bank's candidate with a vocabulary (its estimate priced with the vendor's surcharge, the vendor's limits refused
with what to do)."""

from decimal import Decimal

import pytest

from oncore.transcribers.models import Transcriber
from tests.fixtures import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def nova3(db):
    return Transcriber.objects.create(
        slug="dg-nova-3",
        provider="deepgram",
        model="nova-3",
        display_name="Deepgram Nova-3",
        price_per_minute=Decimal("0.0043"),
        api_key_env="DEEPGRAM_API_KEY",
    )


def test_it_makes_reads_changes_and_deletes_a_vocabulary_with_who_changed_what(api, tenant):
    assistant = tenant.assistants.create(name="Bookings")
    made = api.post(
        "/vocabularies",
        {"name": "Menu", "terms": ["Siobhan", " coeliac ", "siobhan"], "assistant_id": assistant.pk},
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["terms"] == ["Siobhan", "coeliac"] and body["assistant"] == {
        "id": assistant.pk,
        "name": "Bookings",
    }
    assert body["updated_by"].startswith("API key") and body["candidates"] == []
    pk = body["id"]
    assert api.get(f"/vocabularies/{pk}").json()["name"] == "Menu"
    assert [v["name"] for v in api.get("/vocabularies").json()["items"]] == ["Menu"]

    changed = api.patch(f"/vocabularies/{pk}", {"terms": ["Siobhan", "Cuddihy"], "assistant_id": None})
    assert changed.status_code == 200 and changed.json()["assistant"] is None
    changes = api.get("/vocabularies/changes").json()["items"]
    assert [(c["kind"], c["added"], c["removed"]) for c in changes] == [
        ("changed", ["Cuddihy"], ["coeliac"]),
        ("created", ["Siobhan", "coeliac"], []),
    ]
    assert api.delete(f"/vocabularies/{pk}").status_code == 204
    assert api.get(f"/vocabularies/{pk}").status_code == 404


def test_it_says_what_is_wrong_with_a_list(api):
    assert_error(api.post("/vocabularies", {"name": "Empty", "terms": []}), 422, "validation_error")
    assert_error(api.post("/vocabularies", {"name": "Blank", "terms": [" ", ""]}), 400, "vocabulary_invalid")
    api.post("/vocabularies", {"name": "Menu", "terms": ["a"]})
    assert_error(api.post("/vocabularies", {"name": "Menu", "terms": ["b"]}), 409, "vocabulary_name_taken")


def test_it_keeps_vocabularies_to_their_organization(api, other_api):
    pk = api.post("/vocabularies", {"name": "Menu", "terms": ["a"]}).json()["id"]
    assert other_api.get(f"/vocabularies/{pk}").status_code == 404
    assert other_api.get("/vocabularies").json()["items"] == []
    assert other_api.delete(f"/vocabularies/{pk}").status_code == 404


def test_it_adds_a_candidate_with_a_vocabulary_priced_with_the_surcharge(api, org, nova3):
    bank = api.post("/banks", {"name": "Vocab"}).json()["id"]
    menu = api.post("/vocabularies", {"name": "Menu", "terms": ["Siobhan", "coeliac"]}).json()["id"]
    estimate = api.get(
        f"/banks/{bank}/candidates/estimate", {"transcriber_id": nova3.pk, "vocabulary_id": menu}
    ).json()
    assert estimate["price_per_minute"] == "0.005500"
    api.post(f"/banks/{bank}/candidates", {"transcriber_id": nova3.pk, "confirm": True})
    added = api.post(
        f"/banks/{bank}/candidates", {"transcriber_id": nova3.pk, "vocabulary_id": menu, "confirm": True}
    )
    assert added.status_code == 201, added.content
    transcriber = added.json()["transcriber"]
    assert transcriber["display_name"] == "Deepgram Nova-3 + Menu"
    assert transcriber["vocabulary"] == {
        "id": menu,
        "name": "Menu",
        "terms": 2,
        "option": "keyterm prompting (keyterm)",
        "surcharge_per_minute": "0.001200",
    }
    listed = api.get(f"/banks/{bank}/candidates").json()["items"]
    assert [c["transcriber"]["vocabulary"] is None for c in listed] == [True, False]
    assert api.get(f"/vocabularies/{menu}").json()["candidates"][0]["transcriber_id"] == transcriber["id"]
    assert_error(api.delete(f"/vocabularies/{menu}"), 409, "vocabulary_in_use")
    # Not in the shared catalogue.
    assert transcriber["id"] not in [
        t["id"] for t in api.get("/transcribers", {"limit": 100}).json()["items"]
    ]


def test_it_refuses_a_vocabulary_the_vendor_would_refuse(api, nova3):
    bank = api.post("/banks", {"name": "Refused"}).json()["id"]
    big = api.post("/vocabularies", {"name": "Big", "terms": [f"term {i}" for i in range(101)]}).json()["id"]
    response = api.post(
        f"/banks/{bank}/candidates", {"transcriber_id": nova3.pk, "vocabulary_id": big, "confirm": True}
    )
    body = assert_error(response, 409, "vocabulary_not_accepted")
    assert "at most 100 terms" in body["message"] and body["detail"]["problems"]
