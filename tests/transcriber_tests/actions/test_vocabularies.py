"""Vocabularies and vocabulary candidates: made, changed and deleted with who did it; a bank holding a catalogue
transcriber beside the same transcriber with a vocabulary, end to end on each vendor's fake server (the captured
requests carry the terms as the vendor's SDK sends them, the plain candidate's none), each scored on its own."""

import json
from decimal import Decimal

import pytest

from oncore.transcribers.models import Transcriber, VocabularyEdit
from tests.transcribers.vendor_servers import FakeAssemblyAI, FakeDeepgram, FakeElevenLabs, FakeOpenAI
from transcriber_tests import actions
from transcriber_tests.actions import vocabularies as va
from transcriber_tests.models import Score, Transcription
from transcriber_tests.work import tasks

MENU = ["Siobhan", "Bistro Verde", "coeliac"]


@pytest.fixture
def menu(org, admin_user):
    return va.do_create_vocabulary(
        org, name="Menu", terms="Siobhan\nBistro Verde\n\ncoeliac\nsiobhan", user=admin_user
    )


def vendor_entry(fake, slug, model=None, mode="batch") -> Transcriber:
    return Transcriber.objects.create(
        slug=slug,
        provider=fake.provider,
        model=model or fake.model,
        mode=mode,
        display_name=f"{fake.vendor} {model or fake.model}",
        price_per_minute=Decimal("0.0043"),
        price_source="the vendor's price page",
        api_key_env=fake.key_env,
        options={
            "base_url": fake.base_url,
            **({"poll_interval_s": 0.01} if fake.provider == "assemblyai" else {}),
        },
    )


def test_it_keeps_the_terms_clean_and_records_who_made_the_vocabulary(menu, admin_user):
    assert menu.terms == MENU and menu.updated_by == admin_user
    edit = VocabularyEdit.objects.get(vocabulary=menu)
    assert (edit.kind, edit.by_name, edit.added) == ("created", "ada", MENU)


def test_it_refuses_an_empty_list_a_long_term_and_a_taken_name(org, menu):
    with pytest.raises(va.VocabularyInvalid, match="no terms"):
        va.do_create_vocabulary(org, name="Empty", terms="\n \n")
    with pytest.raises(va.VocabularyInvalid, match="over 100 characters"):
        va.do_create_vocabulary(org, name="Long", terms=["x" * 101])
    with pytest.raises(va.VocabularyNameTaken):
        va.do_create_vocabulary(org, name="Menu", terms=["a"])


@pytest.mark.parametrize(
    "fake_class,sent",
    [
        (FakeDeepgram, lambda r: [v for k, v in r.query_pairs if k == "keyterm"]),
        (FakeOpenAI, lambda r: r.form.get("prompt", "").split(", ") if r.form.get("prompt") else []),
        (FakeElevenLabs, lambda r: json.loads(r.form.get("keyterms", "[]"))),
        (FakeAssemblyAI, lambda r: (r.json or {}).get("keyterms_prompt", [])),
    ],
    ids=["deepgram", "openai", "elevenlabs", "assemblyai"],
)
def test_it_compares_a_transcriber_with_and_without_the_vocabulary_on_the_same_lines(
    fake_class, sent, org, menu, recorded_call, monkeypatch
):
    with fake_class(processing_polls=0) if fake_class is FakeAssemblyAI else fake_class() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        plain = vendor_entry(fake, f"{fake.provider}-plain")
        bank = actions.do_create_bank(org, name="Vocab")
        actions.do_add_candidate(bank, plain, confirmed=True)
        with pytest.raises(actions.errors.EstimateNotConfirmed):
            va.do_add_vocabulary_candidate(bank, plain, menu)
        candidate = va.do_add_vocabulary_candidate(bank, plain, menu, confirmed=True)
        derived = candidate.transcriber
        assert (derived.base, derived.vocabulary, derived.keyterms) == (plain, menu, MENU)
        assert derived.display_name == f"{plain.display_name} + Menu"
        actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan at Bistro Verde", bank=bank)
        tasks.drain()
    submitted = [r for r in fake.requests if r.path != "/v2/upload" and r.method == "POST"]
    with_terms = [r for r in submitted if sent(r)]
    assert len(submitted) == 2 * len(with_terms) and all(sent(r) == MENU for r in with_terms)
    assert Transcription.objects.filter(transcriber=derived, status="done").count() == len(with_terms)
    scored = set(Score.objects.filter(source="candidate").values_list("transcriber_id", flat=True))
    assert scored == {plain.pk, derived.pk}


def test_it_prices_a_deepgram_vocabulary_candidate_with_the_keyterm_add_on(org, menu, recorded_call):
    with FakeDeepgram() as fake:
        plain = vendor_entry(fake, "dg")
    bank = actions.do_create_bank(org, name="Cost")
    derived = va.vocabulary_transcriber(plain, menu)
    assert derived.price_per_minute == Decimal("0.0055")
    assert "keyterm prompting $0.0012" in derived.price_source
    assert va.vocabulary_estimate(bank, plain, menu).price_per_minute == Decimal("0.0055")
    assert va.vocabulary_transcriber(plain, menu).pk == derived.pk  # one row per transcriber and vocabulary


def test_it_refuses_a_vocabulary_the_vendor_would_refuse_naming_the_limit(org, menu):
    with FakeDeepgram() as fake:
        nova2 = vendor_entry(fake, "dg2", model="nova-2")
    bank = actions.do_create_bank(org, name="Refused")
    with pytest.raises(va.VocabularyNotAccepted, match="nova-3"):
        va.do_add_vocabulary_candidate(bank, nova2, menu, confirmed=True)
    big = va.do_create_vocabulary(org, name="Big", terms=[f"term {i}" for i in range(120)])
    with FakeDeepgram() as fake:
        nova3 = vendor_entry(fake, "dg3")
    with pytest.raises(va.VocabularyNotAccepted, match="at most 100 terms"):
        va.do_add_vocabulary_candidate(bank, nova3, big, confirmed=True)


def test_it_replays_a_vocabulary_candidates_lines_with_new_terms(
    org, menu, make_transcriber, recorded_call, admin_user
):
    with FakeDeepgram() as fake:
        plain = vendor_entry(fake, "dg")
    bank = actions.do_create_bank(org, name="Edit")
    derived = va.vocabulary_transcriber(plain, menu)
    actions.do_add_candidate(bank, derived, confirmed=True)
    actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan", bank=bank)
    Transcription.objects.filter(transcriber=derived).update(status="failed", attempts=3, error="x")
    va.do_update_vocabulary(menu, terms="Siobhan\nCuddihy", name="Names", user=admin_user)
    derived.refresh_from_db()
    assert derived.keyterms == ["Siobhan", "Cuddihy"] and derived.display_name.endswith("+ Names")
    assert set(Transcription.objects.filter(transcriber=derived).values_list("status", "attempts")) == {
        ("queued", 0)
    }
    edit = VocabularyEdit.objects.filter(kind="changed").get()
    assert (edit.added, edit.removed, edit.note) == (
        ["Cuddihy"],
        ["Bistro Verde", "coeliac"],
        "renamed from 'Menu'",
    )
    with pytest.raises(va.VocabularyNotAccepted, match="at most 100 terms"):
        va.do_update_vocabulary(menu, terms=[f"t{i}" for i in range(101)])


def test_it_deletes_a_vocabulary_only_once_no_bank_holds_it(org, menu):
    with FakeDeepgram() as fake:
        plain = vendor_entry(fake, "dg")
    bank = actions.do_create_bank(org, name="Del")
    va.do_add_vocabulary_candidate(bank, plain, menu, confirmed=True)
    with pytest.raises(va.VocabularyInUse, match="in bank 'Del'"):
        va.do_delete_vocabulary(menu)
    derived = Transcriber.objects.get(vocabulary=menu)
    actions.do_remove_candidate(bank, derived)
    va.do_delete_vocabulary(menu)
    derived.refresh_from_db()
    assert derived.vocabulary is None and not derived.enabled and derived.keyterms == MENU
    assert VocabularyEdit.objects.filter(kind="deleted", vocabulary_name="Menu").exists()


def test_it_keeps_vocabulary_candidates_out_of_the_catalogue_and_other_organizations(org, other_org, menu):
    from transcriber_tests.queries import lookups

    with FakeDeepgram() as fake:
        plain = vendor_entry(fake, "dg")
    derived = va.vocabulary_transcriber(plain, menu)
    assert derived not in Transcriber.catalogue()
    assert lookups.transcriber(derived.pk, org) == derived
    with pytest.raises(actions.errors.NotFound):
        lookups.transcriber(derived.pk, other_org)
    bank = actions.do_create_bank(other_org, name="Theirs")
    with pytest.raises(actions.errors.NotFound):
        va.do_add_vocabulary_candidate(bank, plain, menu)


@pytest.mark.slow
def test_it_replays_a_bank_with_whisper_tiny_en_plain_and_with_hotwords_through_the_queue(
    org, menu, recorded_call
):
    """The packaged tiny.en model, offline, through the queue: the plain entry and the one with the vocabulary each
    transcribe the bank's lines, and the second's rows carry its hotwords (no refusal, no error)."""
    tiny = Transcriber.catalogue().get(slug="whisper-tiny-en")
    bank = actions.do_create_bank(org, name="Local")
    actions.do_add_candidate(bank, tiny, confirmed=True)
    derived = va.do_add_vocabulary_candidate(bank, tiny, menu, confirmed=True).transcriber
    actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan at Bistro Verde", bank=bank)
    tasks.drain()
    for transcriber in (tiny, derived):
        rows = Transcription.objects.filter(transcriber=transcriber)
        assert rows.exists() and not rows.exclude(status__in=Transcription.FINISHED).exists()
        assert not rows.exclude(error="").exists(), list(rows.values_list("error", flat=True))
    assert derived.keyterms == MENU and derived.vocabulary_option == "hotwords"
