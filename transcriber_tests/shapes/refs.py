"""Small references to other objects, as every payload names them: a tenant, an assistant, a transcriber of the
catalogue (briefly, or whole with its price)."""

from datetime import date, datetime
from typing import Literal

from ninja import Field, Schema

from oncore.api import Money
from oncore.formats import money
from oncore.transcribers.models import Transcriber

Provider = Literal[tuple(code for code, _ in Transcriber.PROVIDERS)]
Mode = Literal[tuple(code for code, _ in Transcriber.MODES)]


class TenantRef(Schema):
    id: int
    slug: str
    name: str


class AssistantRef(Schema):
    id: int
    name: str


class TranscriberRef(Schema):
    id: int
    slug: str
    display_name: str
    deprecation_date: date | None = Field(description="The model's announced shutdown date, if any.")


class VocabularyUse(Schema):
    """What a vocabulary candidate sends: the organization's vocabulary, in its vendor's own option."""

    id: int | None = Field(description="The vocabulary (GET /vocabularies/{id}); null once it was deleted.")
    name: str
    terms: int = Field(description="How many terms it sends.")
    option: str = Field(
        description="The vendor's own option the terms travel in, e.g. keyterm prompting (keyterm)."
    )
    surcharge_per_minute: Money = Field(
        description="What the vendor documents the vocabulary adding per audio minute, in price_per_minute."
    )


class TranscriberOut(Schema):
    id: int
    slug: str
    provider: Provider
    mode: Mode = Field(
        description="How a replay sends a line: batch (the clip in one request) or streaming (20 ms frames paced "
        "in real time, as a live call; its latency is the time to final text from the end of speech)."
    )
    model: str
    display_name: str
    price_per_minute: Money = Field(description="List price per audio minute, USD, six places.")
    price_source: str = Field(
        description="Where the price comes from (a vendor page or quote); empty if unknown."
    )
    price_date: date | None = Field(description="When the price was read at its source, so its age shows.")
    deprecation_date: date | None = Field(
        description="The vendor's announced shutdown date for the model; null while none is announced."
    )
    enabled: bool
    vocabulary: VocabularyUse | None = Field(
        None,
        description="A vocabulary candidate's vocabulary (a catalogue transcriber plus the organization's list); null "
        "for a catalogue transcriber.",
    )


def tenant_ref(t) -> dict:
    return {"id": t.pk, "slug": t.slug, "name": t.name}


def transcriber_ref(t) -> dict | None:
    if t is None:
        return None
    return {
        "id": t.pk,
        "slug": t.slug,
        "display_name": t.display_name,
        "deprecation_date": t.deprecation_date,
    }


def transcriber_out(t) -> dict:
    return {
        "id": t.pk,
        "slug": t.slug,
        "provider": t.provider,
        "mode": t.mode,
        "model": t.model,
        "display_name": t.display_name,
        "price_per_minute": money(t.price_per_minute),
        "price_source": t.price_source,
        "price_date": t.price_date,
        "deprecation_date": t.deprecation_date,
        "enabled": t.enabled,
        "vocabulary": vocabulary_use(t),
    }


def vocabulary_use(t) -> dict | None:
    if t.base_id is None:
        return None
    return {
        "id": t.vocabulary_id,
        "name": t.vocabulary_label,
        "terms": len(t.keyterms or []),
        "option": t.vocabulary_option,
        "surcharge_per_minute": money(t.vocabulary_surcharge),
    }


class FiguresOut(Schema):
    """How new a bank's figures are: they are computed by the queue when its results change (never while a
    request waits) and kept until the next change."""

    version: datetime = Field(
        description="The bank's results version the figures were computed from (it moves with every score)."
    )
    computed_at: datetime = Field(description="When they were computed.")
    up_to_date: bool = Field(
        description="False while newer scores have arrived and their figures are being computed: ask again in a "
        "few seconds for them."
    )


def figures_out(read) -> dict:
    """FiguresOut of a snapshot read (snapshots.Read)."""
    return {"version": read.version, "computed_at": read.computed_at, "up_to_date": not read.stale}
