"""The organization's vocabularies: list, make, read, change and delete them, and who changed what. A bank's
candidate sends one in its vendor's own option (POST /banks/{id}/candidates with `vocabulary_id`)."""

from django.urls import reverse
from ninja import Field, Query, Router
from ninja.responses import Status

from oncore.api import created
from oncore.calls.models import Assistant
from oncore.errors import find
from transcriber_tests.actions import vocabularies as actions
from transcriber_tests.queries import vocabularies as queries

from ..shapes.vocabularies import ChangeOut, VocabularyOut, change_out, vocabulary_out
from .errors import doc
from .schemas import BodyIn, Id, Page, PageIn, page

router = Router(tags=["Vocabularies"])


class VocabularyIn(BodyIn):
    name: str = Field(min_length=1, max_length=60, description="Unique in the organization.")
    terms: list[str] = Field(
        min_length=1,
        max_length=1000,
        description="Names, menu items, street names, product codes: at most 1,000 of at most 100 characters; "
        "blanks and repeats (ignoring case) are left out.",
    )
    assistant_id: Id | None = Field(
        None, description="One of the organization's assistants; null: every one."
    )


class VocabularyEdit(BodyIn):
    name: str | None = Field(None, min_length=1, max_length=60)
    terms: list[str] | None = Field(
        None,
        min_length=1,
        max_length=1000,
        description="The whole new list. The candidates that send the vocabulary replay their lines with it; a "
        "list one of their vendors would refuse is refused (409 vocabulary_not_accepted).",
    )
    assistant_id: Id | None = Field(
        None, description="One of the organization's assistants; null: every one."
    )


class VocabularyPage(Page):
    items: list[VocabularyOut]


class ChangePage(Page):
    items: list[ChangeOut]


def _assistant(request, pk):
    if pk is None:
        return None
    return find(
        Assistant.objects.filter(tenant__organization=request.org).select_related("tenant"), pk, "assistant"
    )


def _vocabulary(request, pk):
    return queries.vocabulary(request.org, pk)


def _out(v, held=None) -> dict:
    return vocabulary_out(v, queries.candidates_with(v) if held is None else held, queries.editor_name(v))


@router.get("/vocabularies", **doc(200, VocabularyPage, "Vocabularies, by name."))
def list_vocabularies(request, q: Query[PageIn]):
    """The organization's vocabularies, by name, each with its terms and the candidates that send it."""
    rows = dict(queries.vocabulary_rows(request.org))
    return page(queries.vocabularies_of(request.org), q, lambda v: _out(v, rows.get(v, [])))


@router.get("/vocabularies/changes", **doc(200, ChangePage, "Who changed what, newest first."))
def list_changes(request, q: Query[PageIn]):
    """Every change of the organization's vocabularies, newest first: made, changed (terms added and removed,
    renamed, another assistant) or deleted, and by whom (a person in the dashboard or an API key)."""
    return page(queries.changes_of(request.org), q, change_out)


@router.post(
    "/vocabularies",
    **doc(
        201,
        VocabularyOut,
        "The new vocabulary.",
        "invalid_request",
        "not_found",
        "vocabulary_invalid",
        "vocabulary_name_taken",
    ),
)
def create_vocabulary(request, body: VocabularyIn):
    """A new vocabulary. Add it to a bank with a transcriber: POST /banks/{id}/candidates with `vocabulary_id`."""
    made = actions.do_create_vocabulary(
        request.org,
        name=body.name,
        terms=body.terms,
        assistant=_assistant(request, body.assistant_id),
        key=request.api_key,
    )
    made = _vocabulary(request, made.pk)
    return created(request, reverse("api:get_vocabulary", args=[made.pk]), _out(made))


@router.get("/vocabularies/{int:vocabulary_id}", **doc(200, VocabularyOut, "The vocabulary.", "not_found"))
def get_vocabulary(request, vocabulary_id: int):
    """One vocabulary: its terms, its assistant, who changed it last and the candidates that send it."""
    return _out(_vocabulary(request, vocabulary_id))


@router.patch(
    "/vocabularies/{int:vocabulary_id}",
    **doc(
        200,
        VocabularyOut,
        "The changed vocabulary.",
        "invalid_request",
        "not_found",
        "vocabulary_invalid",
        "vocabulary_name_taken",
        "vocabulary_not_accepted",
    ),
)
def edit_vocabulary(request, vocabulary_id: int, body: VocabularyEdit):
    """Change any of the fields; those left out stay (`assistant_id: null` makes it every assistant's). New terms
    go to the candidates that send it, whose lines are replayed with them."""
    vocabulary = _vocabulary(request, vocabulary_id)
    given = body.model_dump(exclude_unset=True)
    changes = {k: v for k, v in given.items() if k in ("name", "terms") and v is not None}
    if "assistant_id" in given:
        changes["assistant"] = _assistant(request, given["assistant_id"])
    actions.do_update_vocabulary(vocabulary, **changes, key=request.api_key)
    return _out(_vocabulary(request, vocabulary_id))


@router.delete(
    "/vocabularies/{int:vocabulary_id}", **doc(204, None, "Deleted.", "not_found", "vocabulary_in_use")
)
def delete_vocabulary(request, vocabulary_id: int):
    """Delete a vocabulary no bank holds a candidate with (409 vocabulary_in_use names the banks)."""
    actions.do_delete_vocabulary(_vocabulary(request, vocabulary_id), key=request.api_key)
    return Status(204, None)
