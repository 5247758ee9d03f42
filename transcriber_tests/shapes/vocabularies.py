"""The vocabularies' payloads (the API's): a vocabulary with its terms, assistant, last editor and the candidates that
send it; a change of one (who changed what)."""

from datetime import datetime

from ninja import Field, Schema


class AssistantRef(Schema):
    id: int
    name: str


class VocabularyCandidateRef(Schema):
    bank_id: int
    transcriber_id: int = Field(
        description="The vocabulary candidate's own transcriber (the catalogue entry + it)."
    )
    display_name: str


class VocabularyOut(Schema):
    id: int
    name: str
    assistant: AssistantRef | None = Field(description="The assistant it is for; null: every assistant.")
    terms: list[str] = Field(description="Its terms, in order.")
    updated_at: datetime
    updated_by: str = Field(description="Who changed it last: a user name or an API key; empty when unknown.")
    candidates: list[VocabularyCandidateRef] = Field(description="The bank candidates that send it.")


class ChangeOut(Schema):
    at: datetime
    vocabulary_id: int | None = Field(description="Null once the vocabulary was deleted.")
    vocabulary_name: str
    kind: str = Field(description="created, changed or deleted.")
    by: str = Field(description="A user name or an API key, as named when the change was made.")
    added: list[str]
    removed: list[str]
    note: str = Field(description="Other changes: a new name or assistant.")


def vocabulary_out(v, held, updated_by: str) -> dict:
    """A vocabulary with the candidates that send it (`held`: Candidate rows with their transcribers) and who
    changed it last."""
    return {
        "id": v.pk,
        "name": v.name,
        "assistant": {"id": v.assistant.pk, "name": v.assistant.name} if v.assistant_id else None,
        "terms": v.terms,
        "updated_at": v.updated_at,
        "updated_by": updated_by,
        "candidates": [
            {
                "bank_id": c.bank_id,
                "transcriber_id": c.transcriber_id,
                "display_name": c.transcriber.display_name,
            }
            for c in held
        ],
    }


def change_out(e) -> dict:
    return {
        "at": e.at,
        "vocabulary_id": e.vocabulary_id,
        "vocabulary_name": e.vocabulary_name,
        "kind": e.kind,
        "by": e.by_name,
        "added": e.added,
        "removed": e.removed,
        "note": e.note,
    }
