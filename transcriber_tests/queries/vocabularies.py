"""The organization's vocabularies as the pages and the API read them: each with its assistant, who changed it last
and the candidates that send it; the recent changes (who changed what)."""

from oncore.errors import find
from oncore.transcribers.models import Vocabulary, VocabularyEdit

from ..models import Candidate
from ..models.history import name_of


def vocabularies_of(organization):
    return Vocabulary.objects.filter(organization=organization).select_related(
        "assistant__tenant", "updated_by", "updated_by_key"
    )


def vocabulary(organization, pk: int) -> Vocabulary:
    return find(vocabularies_of(organization), pk, "vocabulary")


def vocabulary_rows(organization) -> list:
    """(vocabulary, its candidates as (bank, transcriber)) of the organization, by name: two queries."""
    rows = list(vocabularies_of(organization))
    held = {}
    for c in (
        Candidate.objects.filter(transcriber__vocabulary__in=rows)
        .select_related("bank", "transcriber")
        .order_by("bank__name", "position")
    ):
        held.setdefault(c.transcriber.vocabulary_id, []).append(c)
    return [(v, held.get(v.pk, [])) for v in rows]


def candidates_with(vocabulary) -> list:
    return list(
        Candidate.objects.filter(transcriber__vocabulary=vocabulary)
        .select_related("bank", "transcriber")
        .order_by("bank__name")
    )


def recent_edits(organization, limit: int = 20) -> list:
    return list(VocabularyEdit.objects.filter(organization=organization).order_by("-at", "-id")[:limit])


def editor_name(vocabulary) -> str:
    """Who changed the vocabulary last, as the pages and the API name them."""
    return name_of(vocabulary.updated_by, vocabulary.updated_by_key)


def changes_of(organization):
    """Every change of the organization's vocabularies, newest first."""
    return VocabularyEdit.objects.filter(organization=organization).order_by("-at", "-id")
