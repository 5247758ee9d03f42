"""Why candidates fail and how far to trust a lead: each candidate's confusion pairs (and their CSV), the expected
texts worth checking, and the call-level bootstrap with how many more flags would make the lead clear. The same
reads as the results page (queries.confusion, queries.reference_check, queries.trust)."""

from typing import Literal

from ninja import Field, Query, Router, Schema

from oncore.api import ApiError
from oncore.ratelimit import rate_limited
from transcriber_tests import queries
from transcriber_tests.lib import trust as lib_trust
from transcriber_tests.queries import confusion, lookups, reference_check, snapshots
from transcriber_tests.shapes import exports

from ..shapes.trust import (
    ConfusionsOut,
    ExpectedCheckOut,
    TrustOut,
    confusions_out,
    expected_check_out,
    trust_out,
)
from .errors import CSV_CONTENT, doc
from .schemas import Id, Page, PageIn, page_of

router = Router(tags=["Results"])
COMPUTING_RETRY_S = 5  # a first computation of trust figures: a few seconds of a queue worker


class WindowIn(Schema):
    window: int = Field(
        queries.DEFAULT_WINDOW_DAYS,
        ge=1,
        le=queries.MAX_WINDOW_DAYS,
        description=f"Days of flags to count, 1 to {queries.MAX_WINDOW_DAYS}.",
    )


class ConfusionFilters(WindowIn):
    transcriber_id: Id | None = Field(None, description="Only this candidate's pairs.")
    kind: Literal["substitution", "deletion", "insertion"] | None = Field(None, description="Only this kind.")
    limit: int = Field(
        confusion.TOP,
        ge=1,
        le=confusion.API_TOP,
        description=f"Pairs per candidate, at most {confusion.API_TOP}.",
    )


@router.get(
    "/banks/{int:bank_id}/confusions",
    **doc(200, ConfusionsOut, "Each candidate's most frequent confusion pairs.", "not_found"),
)
@rate_limited("confusions")
def confusions(request, bank_id: int, q: Query[ConfusionFilters]):
    """The words each candidate most often substitutes, leaves out (deletions) or adds (insertions) over the
    window's flags and controls, from the alignment its WER counts: "for → four" x12. A pair's `pair` opens the
    turn table's lines where it happens (GET .../turns?transcriber_id=..&pair=..)."""
    bank = lookups.bank(request.org, bank_id)
    found = confusion.confusion_pairs(
        bank, q.window, transcriber_id=q.transcriber_id, kind=q.kind or "", limit=q.limit
    )
    return confusions_out(bank, q.window, found)


@router.get(
    "/banks/{int:bank_id}/confusions.csv",
    **doc(200, None, "Every confusion pair of every candidate, as CSV.", "not_found", content=CSV_CONTENT),
)
@rate_limited("exports")
def export_confusions(request, bank_id: int, q: Query[WindowIn]):
    """The same CSV as the results page's confusion-pairs export: one row per candidate and pair, most frequent
    first, with its share of the candidate's word errors."""
    return exports.confusions_csv(lookups.bank(request.org, bank_id), q.window)


class ExpectedCheckPage(Page):
    items: list[ExpectedCheckOut]


class ChecksIn(WindowIn, PageIn):
    pass


@router.get(
    "/banks/{int:bank_id}/expected-checks",
    **doc(200, ExpectedCheckPage, "The expected texts worth checking, newest first.", "not_found"),
)
@rate_limited("checks")
def expected_checks(request, bank_id: int, q: Query[ChecksIn]):
    """The bank's flagged lines in the window whose expected text the transcribers agree against: two or more
    candidates agree with each other (after normalization) but not with it, or the production transcript and
    every candidate that scored the line do. A typo there makes every candidate look wrong: PATCH /flags/{id}
    with the right text re-scores the line. Each with who typed the expected text and the flag's edits."""
    bank = lookups.bank(request.org, bank_id)
    found, total = reference_check.expected_checks(bank, q.window, offset=q.offset, limit=q.limit)
    return page_of(total, q, [expected_check_out(c) for c in found])


@router.get(
    "/banks/{int:bank_id}/uncertainty",
    **doc(200, TrustOut, "How far to trust the lead, calls resampled.", "not_found", "figures_computing"),
)
@rate_limited("trust")
def bank_uncertainty(request, bank_id: int, q: Query[WindowIn]):
    """Each candidate's accuracy with its 95% Wilson interval (lines on their own) and its call-level bootstrap
    interval (calls resampled whole, with their flags and controls: 10,000 resamples, seeded, so the same figures
    come back every time), the leader's lead over the runner-up bootstrapped the same way beside the exact McNemar
    test, a sentence where the two disagree, and about how many more flags would make the lead clear at p < 0.05
    with an 80% chance if the current rates hold (the McNemar test's power, computed exactly); and, for each model
    the bank holds in both modes, its streaming candidate's accuracy less its batch candidate's on the lines both
    scored, lines and calls resampled."""
    bank = lookups.bank(request.org, bank_id)
    figures = snapshots.trust_of(bank, q.window)
    if figures.computing:
        raise ApiError(
            "figures_computing",
            f"The trust figures of the last {q.window} days are being computed for the first time: ask again in "
            f"{COMPUTING_RETRY_S} seconds.",
            headers={"Retry-After": str(COMPUTING_RETRY_S)},
        )
    return trust_out(bank, figures.data.trust, lib_trust.about, figures)
