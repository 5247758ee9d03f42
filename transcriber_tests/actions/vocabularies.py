"""Every write of vocabularies and their candidates: make, change (name, assistant, terms) and delete an
organization's vocabulary, each recorded with who did it (VocabularyEdit); add a vocabulary candidate to a bank.

A vocabulary candidate is its own Transcriber row (`vocabulary_transcriber`): the catalogue entry's provider, model,
mode and options, plus the vocabulary's terms in `keyterms`, which its engine sends in the vendor's own option
(oncore/transcribers/vocabulary.py), at the catalogue price plus any surcharge the vendor documents for it. So its
transcriptions, scores, totals and figures are its own beside the plain entry's, and every figure works unchanged.
A change of the terms changes what its lines would give: its rows take the new terms and its finished lines are
replayed (queued again; each replay's score replaces the last)."""

from django.db import IntegrityError, transaction

from oncore.transcribers import vocabulary as vocab
from oncore.transcribers.models import Transcriber, Vocabulary, VocabularyEdit

from .. import errors, handles
from ..models import Bank, Candidate, Transcription
from ..models.history import name_of
from . import banks, scores

KEEP = object()


VocabularyInvalid, VocabularyNameTaken, VocabularyInUse, VocabularyNotAccepted = (
    errors.VocabularyInvalid,
    errors.VocabularyNameTaken,
    errors.VocabularyInUse,
    errors.VocabularyNotAccepted,
)


def _checked(name: str, terms) -> tuple[str, list[str]]:
    name = " ".join((name or "").split())
    if not name:
        raise VocabularyInvalid("Give the vocabulary a name, e.g. 'Menu' or 'Staff names'.")
    if len(name) > 60:
        raise VocabularyInvalid(f"The name is {len(name)} characters long; keep it to 60.")
    terms = vocab.clean_terms(terms)
    problems = vocab.list_problems(terms)
    if problems:
        raise VocabularyInvalid(" ".join(problems), {"problems": problems})
    return name, terms


def _check_assistant(organization, assistant):
    if assistant is not None and assistant.tenant.organization_id != organization.pk:
        raise errors.NotFound("No such assistant in this organization.")


def _record(vocabulary, kind, *, user, key, added=(), removed=(), note=""):
    VocabularyEdit.objects.create(
        organization_id=vocabulary.organization_id,
        vocabulary=vocabulary if kind != VocabularyEdit.DELETED else None,
        vocabulary_name=vocabulary.name,
        kind=kind,
        by=user,
        by_key=key,
        by_name=name_of(user, key),
        added=list(added),
        removed=list(removed),
        note=note,
    )


def do_create_vocabulary(organization, *, name, terms, assistant=None, user=None, key=None) -> Vocabulary:
    name, terms = _checked(name, terms)
    _check_assistant(organization, assistant)
    try:
        with transaction.atomic():
            made = Vocabulary.objects.create(
                organization=organization,
                assistant=assistant,
                name=name,
                terms=terms,
                updated_by=user,
                updated_by_key=key,
            )
            _record(made, VocabularyEdit.CREATED, user=user, key=key, added=terms)
    except IntegrityError:
        raise _name_taken(name) from None
    return made


def _name_taken(name) -> VocabularyNameTaken:
    return VocabularyNameTaken(
        f"A vocabulary named {name!r} already exists; choose another name or edit that one."
    )


def do_update_vocabulary(
    vocabulary: Vocabulary, *, name=KEEP, terms=KEEP, assistant=KEEP, user=None, key=None
) -> Vocabulary:
    """Change a vocabulary. New terms go to its candidates (each checked against its vendor's limits first: a list
    one of them would refuse is refused, naming it) and their lines are replayed with them."""
    new_name, new_terms = _checked(
        vocabulary.name if name is KEEP else name, vocabulary.terms if terms is KEEP else terms
    )
    if assistant is not KEEP:
        _check_assistant(vocabulary.organization, assistant)
    derived = list(vocabulary.transcribers.all())
    terms_changed = new_terms != vocabulary.terms
    if terms_changed:
        for row in derived:
            problems = vocab.problems(row.provider, row.mode, row.model, new_terms)
            if problems and row.candidacies.exists():
                raise VocabularyNotAccepted(
                    f"{row.display_name} is a candidate with this vocabulary: " + " ".join(problems),
                    {"transcriber_id": row.pk, "problems": problems},
                )
    added = [t for t in new_terms if t not in vocabulary.terms]
    removed = [t for t in vocabulary.terms if t not in new_terms]
    notes = []
    if new_name != vocabulary.name:
        notes.append(f"renamed from {vocabulary.name!r}")
    if assistant is not KEEP and (assistant.pk if assistant else None) != vocabulary.assistant_id:
        notes.append(f"assistant: {assistant.name if assistant else 'all assistants'}")
    try:
        with transaction.atomic():
            vocabulary.name, vocabulary.terms = new_name, new_terms
            vocabulary.updated_by, vocabulary.updated_by_key = user, key
            fields = ["name", "terms", "updated_by", "updated_by_key", "updated_at"]
            if assistant is not KEEP:
                vocabulary.assistant = assistant
                fields.append("assistant")
            vocabulary.save(update_fields=fields)
            for row in derived:
                row.display_name = _display_name(row.base, vocabulary)
                row.keyterms = new_terms
                row.save(update_fields=["display_name", "keyterms"])
            if terms_changed:
                _replay(derived)
            _record(
                vocabulary,
                VocabularyEdit.CHANGED,
                user=user,
                key=key,
                added=added,
                removed=removed,
                note="; ".join(notes),
            )
            bank_ids = set(
                Candidate.objects.filter(transcriber__in=derived).values_list("bank_id", flat=True)
            )
            # The candidates' names and vocabulary sizes are on the figures.
            scores.settings_changed(*bank_ids)
    except IntegrityError:
        raise _name_taken(new_name) from None
    return vocabulary


def _replay(derived) -> None:
    """Queue again the finished lines of the vocabulary's candidates, to be replayed with the new terms."""
    rows = Transcription.objects.filter(transcriber__in=derived, status__in=Transcription.FINISHED)
    organizations = set(rows.values_list("organization_id", flat=True))
    rows.update(status=Transcription.QUEUED, attempts=0, error="", not_before=None, claimed_at=None)
    for organization_id in organizations:
        transaction.on_commit(lambda o=organization_id: handles.pump(o))


def do_delete_vocabulary(vocabulary: Vocabulary, *, user=None, key=None) -> None:
    """Delete a vocabulary no bank holds a candidate with. Its candidates' past rows stay, disabled, so their
    scores keep their names."""
    held = list(
        Candidate.objects.filter(transcriber__vocabulary=vocabulary)
        .select_related("bank", "transcriber")
        .order_by("bank__name")
    )
    if held:
        where = ", ".join(f"{c.transcriber.display_name} in bank {c.bank.name!r}" for c in held)
        raise VocabularyInUse(
            f"The vocabulary {vocabulary.name!r} is used by {where}: remove those candidates first.",
            {"banks": sorted({c.bank_id for c in held})},
        )
    with transaction.atomic():
        vocabulary.transcribers.update(enabled=False)
        _record(vocabulary, VocabularyEdit.DELETED, user=user, key=key, removed=vocabulary.terms)
        vocabulary.delete()


def _display_name(base: Transcriber, vocabulary: Vocabulary) -> str:
    return f"{base.display_name} + {vocabulary.name}"[:200]


def vocabulary_transcriber(base: Transcriber, vocabulary: Vocabulary) -> Transcriber:
    """The row of the catalogue entry `base` with this vocabulary: made once, then the same row (its transcriptions
    and scores are kept from one bank to another, as a catalogue entry's are). Refused when the vendor would refuse
    the list (its limits, named) or takes none."""
    if base.base_id is not None:
        raise VocabularyNotAccepted(
            f"{base.display_name} already has a vocabulary: choose the catalogue transcriber it was made from."
        )
    problems = vocab.problems(base.provider, base.mode, base.model, vocabulary.terms)
    if problems:
        raise VocabularyNotAccepted(" ".join(problems), {"problems": problems})
    extra, source = vocab.surcharge(base.provider, base.mode, base.price_per_minute)
    price_source = base.price_source
    if extra:
        price_source = f"{base.price_source}; with a vocabulary +${extra}/min: {source}"[:300]
    row, _ = Transcriber.objects.get_or_create(
        slug=f"{base.slug}+v{vocabulary.pk}"[:100],
        defaults={
            "provider": base.provider,
            "model": base.model,
            "mode": base.mode,
            "display_name": _display_name(base, vocabulary),
            "price_per_minute": base.price_per_minute + extra,
            "price_source": price_source,
            "price_date": base.price_date,
            "deprecation_date": base.deprecation_date,
            "api_key_env": base.api_key_env,
            "options": base.options,
            "enabled": True,
            "base": base,
            "vocabulary": vocabulary,
            "keyterms": vocabulary.terms,
        },
    )
    return row


def do_add_vocabulary_candidate(
    bank: Bank, base: Transcriber, vocabulary: Vocabulary, *, confirmed: bool = False
) -> Candidate:
    """Add the catalogue entry `base` with the organization's vocabulary as a candidate of the bank (beside the
    plain entry, if the bank holds it): its estimate must be confirmed, as any candidate's."""
    if vocabulary.organization_id != bank.organization_id:
        raise errors.NotFound("No such vocabulary in this organization.")
    return banks.do_add_candidate(bank, vocabulary_transcriber(base, vocabulary), confirmed=confirmed)


def vocabulary_estimate(bank: Bank, base: Transcriber, vocabulary: Vocabulary):
    """The backfill estimate of adding `base` with the vocabulary (its price with the vendor's surcharge)."""
    return banks.estimate_backfill(bank, vocabulary_transcriber(base, vocabulary))
