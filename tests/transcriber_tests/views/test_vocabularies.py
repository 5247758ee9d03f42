"""The vocabularies in the dashboard: listed with who changed what, made, edited (terms one per line) and deleted
by the organization's admins only; added to a bank as a candidate beside the plain transcriber; its card names the
vocabulary and its size, and the turn table marks its words in text."""

import pytest
from django.urls import reverse

from oncore.transcribers.models import Transcriber, Vocabulary
from tests.transcriber_tests.support import read
from transcriber_tests import actions
from transcriber_tests.actions import vocabularies as va
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


@pytest.fixture
def local_whisper(db):
    """A faster-whisper catalogue entry whose engine is faked (the vocabulary's way to it is what is tested)."""
    return Transcriber.objects.create(
        slug="whisper-fake", provider="faster_whisper", model="tiny.en", display_name="Whisper fake"
    )


@pytest.fixture
def fake_whisper(monkeypatch):
    """faster-whisper answering what a vocabulary brings: 'Siobhan' with the hotwords, 'Shivon' without."""
    from types import SimpleNamespace

    from oncore.transcribers.engines import faster_whisper as fw

    class Model:
        def transcribe(self, audio, **kwargs):
            text = (
                "Siobhan table for four"
                if "Siobhan" in (kwargs.get("hotwords") or "")
                else "Shivon table for four"
            )
            return [SimpleNamespace(text=text, start=0, end=1)], SimpleNamespace(
                language="en", language_probability=1
            )

    monkeypatch.setattr(fw, "load_model", lambda *args: Model())


def test_it_lists_makes_edits_and_deletes_vocabularies_with_who_changed_what(admin_client, org, tenant):
    assistant = tenant.assistants.create(name="Bookings")
    response = admin_client.post(
        reverse("tt:vocabulary_new"),
        {"name": "Menu", "assistant": assistant.pk, "terms": "Siobhan\n\ncoeliac\nSiobhan\n"},
    )
    assert response.status_code == 302
    menu = Vocabulary.objects.get(organization=org)
    assert menu.terms == ["Siobhan", "coeliac"] and menu.assistant == assistant
    page = admin_client.get(reverse("tt:vocabularies"))
    text = read(page.content)
    assert "Menu" in text and "Bookings (Bistro)" in text and "ada created Menu with 2 terms" in text

    form = admin_client.get(reverse("tt:vocabulary_edit", args=[menu.pk]))
    assert "Siobhan\ncoeliac" in form.content.decode()
    admin_client.post(
        reverse("tt:vocabulary_edit", args=[menu.pk]), {"name": "Menu", "terms": "Siobhan\nCuddihy"}
    )
    assert "ada changed Menu: added Cuddihy; removed coeliac" in read(
        admin_client.get(reverse("tt:vocabularies")).content
    )

    admin_client.post(reverse("tt:vocabulary_delete", args=[menu.pk]))
    assert not Vocabulary.objects.exists()
    assert "ada deleted Menu" in read(admin_client.get(reverse("tt:vocabularies")).content)


def test_it_says_what_to_do_with_an_empty_list(admin_client):
    response = admin_client.post(reverse("tt:vocabulary_new"), {"name": "Empty", "terms": " \n "})
    assert response.status_code == 422
    assert "give at least one, one per line" in read(response.content) or "This field is required" in read(
        response.content
    )


def test_it_refuses_members(member_client, org):
    menu = va.do_create_vocabulary(org, name="Menu", terms=["Siobhan"])
    assert member_client.get(reverse("tt:vocabularies")).status_code == 403
    assert member_client.get(reverse("tt:vocabulary_edit", args=[menu.pk])).status_code == 403


def test_it_refuses_other_organizations(other_client, org):
    menu = va.do_create_vocabulary(org, name="Menu", terms=["Siobhan"])
    assert other_client.get(reverse("tt:vocabulary_edit", args=[menu.pk])).status_code == 404
    assert other_client.post(reverse("tt:vocabulary_delete", args=[menu.pk])).status_code == 404
    assert "Menu" not in read(other_client.get(reverse("tt:vocabularies")).content)


def test_it_adds_the_same_transcriber_with_a_vocabulary_beside_it_and_shows_it(
    admin_client, org, local_whisper, fake_whisper, recorded_call
):
    menu = va.do_create_vocabulary(org, name="Menu", terms=["Siobhan", "coeliac"])
    bank = actions.do_create_bank(org, name="Vocab")
    actions.do_add_candidate(bank, local_whisper, confirmed=True)
    url = reverse("tt:bank_candidates", args=[bank.pk])
    estimate = admin_client.post(url, {"transcriber": local_whisper.pk, "vocabulary": menu.pk})
    text = read(estimate.content)
    assert "Whisper fake + Menu" in text and "Menu, 2 terms, sent as hotwords" in text
    admin_client.post(url, {"transcriber": local_whisper.pk, "vocabulary": menu.pk, "confirmed": "on"})
    assert bank.candidates.count() == 2

    actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan table for four", bank=bank)
    tasks.drain()
    results = read(admin_client.get(reverse("tt:bank", args=[bank.pk])).content)
    assert "+ vocabulary Menu, 2 terms, sent as hotwords" in results
    turns = admin_client.get(reverse("tt:turn_table", args=[bank.pk])).content.decode()
    assert 'Siobhan<sup class="vocab-mark" aria-hidden="true">voc</sup>' in turns
    assert "(from the vocabulary)" in read(turns) and "raised “voc”" in read(turns)
