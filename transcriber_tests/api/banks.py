"""Banks, candidates (estimate, add after confirming, reorder, remove), results, the turn-by-turn table, the
CSV exports and the organization's queue."""

from dataclasses import replace
from decimal import Decimal
from typing import Annotated, Literal

from django.urls import reverse
from ninja import Field, Query, Router, Schema
from ninja.responses import Status
from pydantic import WithJsonSchema, field_validator, model_validator

from oncore.api import created
from oncore.names import check_name
from oncore.ratelimit import rate_limited
from oncore.transcribers.models import Transcriber
from transcriber_tests import actions, queries
from transcriber_tests.actions import controls
from transcriber_tests.actions import vocabularies as vocabulary_actions
from transcriber_tests.lib import alignment
from transcriber_tests.models import Bank, Candidate
from transcriber_tests.queries import jobs, lookups, people, snapshots
from transcriber_tests.queries import vocabularies as vocabulary_queries
from transcriber_tests.queries.board import banks_of
from transcriber_tests.shapes import exports

from ..shapes.banks import (
    BankOut,
    CandidateOut,
    EstimateOut,
    RedrawEstimateOut,
    ResultsOut,
    bank_out,
    candidate_out,
    results_out,
)
from ..shapes.jobs import QueueOut
from ..shapes.refs import TranscriberRef, transcriber_ref
from ..shapes.tradeoff import GroupTableOut, group_table_out
from ..shapes.turns import TurnOut, turn_out
from .errors import CSV_CONTENT, OrderDetail, doc
from .schemas import (
    BodyIn,
    Day,
    Id,
    Page,
    PageIn,
    Text,
    get_or_404,
    page,
    page_of,
)

banks = Router(tags=["Banks"])
candidates = Router(tags=["Candidates"])
results = Router(tags=["Results"])
queue = Router(tags=["Queue"])

# ---------------------------------------------------------------- banks


def _strip(value):
    if value is None:
        return value
    value = value.strip()
    if not value:
        raise ValueError("must not be blank")
    return value


# A threshold is a number in the schema (0.6), as answers write it; a decimal string ("0.6") is still read.
Threshold = Annotated[Decimal, WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1})]


class BankIn(BodyIn):
    name: Text = Field(min_length=1, max_length=100, description="Unique in the organization.")
    language_label: Text = Field("", max_length=100, description="Display only, e.g. 'English + French'.")
    threshold: Threshold = Field(
        Decimal("0.6"),
        ge=0,
        le=1,
        decimal_places=4,
        description="Accuracy marker, a fraction with at most 4 decimals: 0.702 means 70.2%, exactly.",
    )
    controls_per_flag: int = Field(
        1, ge=0, le=2, description="Control lines sampled with each flag: 0, 1 or 2."
    )

    _name = field_validator("name")(_strip)
    _hidden = field_validator("name", "language_label")(check_name)


class BankEdit(BodyIn):
    name: Text | None = Field(None, min_length=1, max_length=100)
    language_label: Text | None = Field(None, max_length=100)
    threshold: Threshold | None = Field(
        None, ge=0, le=1, decimal_places=4, description="Accuracy marker, a fraction with at most 4 decimals."
    )
    controls_per_flag: int | None = Field(None, ge=0, le=2)

    _name = field_validator("name")(_strip)
    _hidden = field_validator("name", "language_label")(check_name)


class BankPage(Page):
    items: list[BankOut]


def _bank(request, bank_id) -> Bank:
    return lookups.bank(request.org, bank_id)


@banks.get("/banks", **doc(200, BankPage, "Banks, by name."))
def list_banks(request, q: Query[PageIn]):
    """The organization's banks, by name, each with its threshold, control lines per flag, number of flags and
    its candidates."""
    return page(banks_of(request.org), q, bank_out)


@banks.post("/banks", **doc(201, BankOut, "The new bank.", "invalid_request", "bank_name_taken"))
def create_bank(request, body: BankIn):
    """A new, empty bank: only the name is required (unique in the organization); the threshold (default 0.6)
    is only a marker on the results, and each flag made or moved into the bank gets `controls_per_flag` control
    lines (default 1). Add candidates next, then flag lines into it."""
    bank = actions.do_create_bank(request.org, **body.model_dump())
    return created(
        request, reverse("api:get_bank", args=[bank.pk]), bank_out(banks_of(request.org).get(pk=bank.pk))
    )


@banks.get("/banks/{int:bank_id}", **doc(200, BankOut, "The bank.", "not_found"))
def get_bank(request, bank_id: int):
    """One bank: its settings, number of flags and candidates in order."""
    return bank_out(get_or_404(banks_of(request.org), bank_id, "bank"))


@banks.patch(
    "/banks/{int:bank_id}",
    **doc(200, BankOut, "The edited bank.", "invalid_request", "not_found", "bank_name_taken"),
)
def edit_bank(request, bank_id: int, body: BankEdit):
    """Change any of the fields; those left out stay. The controls setting applies to flags from now on."""
    bank = _bank(request, bank_id)
    actions.do_update_bank(
        bank, **{k: v for k, v in body.model_dump(exclude_unset=True).items() if v is not None}
    )
    return bank_out(banks_of(request.org).get(pk=bank.pk))


class ConfirmIn(BodyIn):
    confirm: bool = Field(False, description="Must be true: send the request once the estimate was accepted.")


@banks.get(
    "/banks/{int:bank_id}/controls/estimate",
    **doc(200, RedrawEstimateOut, "What drawing the controls again would do and cost.", "not_found"),
)
def estimate_controls(request, bank_id: int):
    """After the bank's `controls_per_flag` changed, its flags keep the controls they were drawn with (the results'
    `control_mix` shows the mix). This says what drawing them again to the new number would do and cost."""
    return controls.estimate_redraw(_bank(request, bank_id)).as_dict()


@banks.post(
    "/banks/{int:bank_id}/controls/redraw",
    **doc(
        200,
        RedrawEstimateOut,
        "Drawn again.",
        "not_found",
        "estimate_not_confirmed",
        "queue_full",
        details={"estimate_not_confirmed": RedrawEstimateOut},
    ),
)
def redraw_controls(request, bank_id: int, body: ConfirmIn):
    """Bring every flag of the bank to its number of control lines: the extra ones leave with their scores, the
    missing ones are drawn from the same calls and queued for every candidate. Without `"confirm": true` nothing
    changes and the answer is 409 estimate_not_confirmed with the estimate in `detail`."""
    return controls.do_redraw(_bank(request, bank_id), confirmed=body.confirm).as_dict()


@banks.delete("/banks/{int:bank_id}", **doc(204, None, "Deleted.", "not_found"))
def delete_bank(request, bank_id: int):
    """Delete the bank. Its flags are kept, in no bank; its full-call runs leave every list but stay readable
    by id."""
    actions.do_delete_bank(_bank(request, bank_id))
    return Status(204, None)


# ---------------------------------------------------------------- candidates


class CandidateList(Schema):
    count: int = Field(description="At most 8: the whole list, never paginated.")
    items: list[CandidateOut]


def _candidate_list(bank) -> dict:
    items = [candidate_out(c) for c in queries.candidates_of(bank)]
    return {"count": len(items), "items": items}


class CandidateIn(BodyIn):
    transcriber_id: Id
    vocabulary_id: Id | None = Field(
        None,
        description="One of the organization's vocabularies (GET /vocabularies): the transcriber sends it in its "
        "vendor's own option, as a candidate of its own beside the plain transcriber. Refused (409 "
        "vocabulary_not_accepted) where the vendor would refuse the list, with its limit.",
    )
    confirm: bool = Field(False, description="Must be true: send the request once the estimate was accepted.")


class OrderIn(BodyIn):
    transcriber_ids: list[Id] = Field(
        max_length=8, description="Every current candidate once, in the new order."
    )


def _transcriber(request, pk, vocabulary_id=None) -> Transcriber:
    """The transcriber named, or with a vocabulary its row with that vocabulary (made on first use)."""
    transcriber = lookups.transcriber(pk, request.org)
    if vocabulary_id is None:
        return transcriber
    vocabulary = vocabulary_queries.vocabulary(request.org, vocabulary_id)
    return vocabulary_actions.vocabulary_transcriber(transcriber, vocabulary)


@candidates.get(
    "/banks/{int:bank_id}/candidates", **doc(200, CandidateList, "The candidates in order.", "not_found")
)
def list_candidates(request, bank_id: int):
    """The bank's candidate transcribers in order (position 0 first; a tie for the lead goes to the one listed
    first), at most eight, whole (no pages)."""
    return _candidate_list(_bank(request, bank_id))


@candidates.get(
    "/banks/{int:bank_id}/candidates/estimate",
    **doc(
        200, EstimateOut, "What adding the transcriber would cost.", "not_found", "vocabulary_not_accepted"
    ),
)
def estimate_candidate(
    request,
    bank_id: int,
    transcriber_id: int = Query(
        ..., description="The catalogue transcriber to estimate (GET /transcribers)."
    ),
    vocabulary_id: int | None = Query(
        None,
        description="With one of the organization's vocabularies: priced with the vendor's surcharge for it.",
    ),
):
    """The backfill a new candidate needs: every line of the bank it has no text for yet, billed as audio (with a
    vocabulary, at the price with what the vendor adds for it)."""
    return actions.estimate_backfill(
        _bank(request, bank_id), _transcriber(request, transcriber_id, vocabulary_id)
    ).as_dict()


@candidates.post(
    "/banks/{int:bank_id}/candidates",
    **doc(
        201,
        CandidateOut,
        "The new candidate, last in order; its backfill is queued.",
        "invalid_request",
        "not_found",
        "estimate_not_confirmed",
        "transcriber_disabled",
        "candidate_exists",
        "bank_full",
        "queue_full",
        "vocabulary_not_accepted",
        details={"estimate_not_confirmed": EstimateOut},
    ),
)
def add_candidate(request, bank_id: int, body: CandidateIn):
    """Add a candidate and transcribe every flag and control line of the bank with it. Without
    `"confirm": true` nothing is added: the answer is 409 `estimate_not_confirmed` with the estimate."""
    bank = _bank(request, bank_id)
    candidate = actions.do_add_candidate(
        bank, _transcriber(request, body.transcriber_id, body.vocabulary_id), confirmed=body.confirm
    )
    location = reverse("api:get_candidate", args=[bank.pk, candidate.transcriber_id])
    return created(request, location, candidate_out(candidate))


@candidates.get(
    "/banks/{int:bank_id}/candidates/{int:transcriber_id}",
    **doc(200, CandidateOut, "The candidate.", "not_found"),
)
def get_candidate(request, bank_id: int, transcriber_id: int):
    """One candidate of the bank, by its transcriber's id: the transcriber, its position and when it was added."""
    return candidate_out(_candidate(_bank(request, bank_id), transcriber_id))


def _candidate(bank, transcriber_id) -> Candidate:
    return get_or_404(queries.candidates_of(bank), transcriber_id, "candidate", field="transcriber_id")


@candidates.put(
    "/banks/{int:bank_id}/candidates/order",
    **doc(
        200,
        CandidateList,
        "The candidates in their new order.",
        "not_found",
        "invalid_request",
        details={"invalid_request": OrderDetail},
    ),
)
def reorder_candidates(request, bank_id: int, body: OrderIn):
    """Put the candidates in a new order: every current candidate's transcriber id once (400 `invalid_request`
    otherwise, with the current order in `detail.current`). The order decides ties for the lead."""
    bank = _bank(request, bank_id)
    actions.do_reorder_candidates(bank, body.transcriber_ids)
    return _candidate_list(bank)


@candidates.delete(
    "/banks/{int:bank_id}/candidates/{int:transcriber_id}", **doc(204, None, "Removed.", "not_found")
)
def remove_candidate(request, bank_id: int, transcriber_id: int):
    """Remove a candidate. Its transcriptions and scores are kept, so adding it back costs nothing."""
    bank = _bank(request, bank_id)
    actions.do_remove_candidate(bank, _candidate(bank, transcriber_id).transcriber)
    return Status(204, None)


# ---------------------------------------------------------------- results and the turn table


WINDOW = Query(
    queries.DEFAULT_WINDOW_DAYS,
    ge=1,
    le=queries.MAX_WINDOW_DAYS,
    description=f"Days of flags to count, 1 to {queries.MAX_WINDOW_DAYS}.",
)


TENANT = Query(None, description="Only the items of this tenant's calls, as on GET .../results.")
ASSISTANT = Query(None, description="Only the items of this assistant's calls.")
BY = Query("tenant", description="Rows per tenant, or per assistant.")


class ResultsFilters(Schema):
    window: int = Field(
        queries.DEFAULT_WINDOW_DAYS,
        ge=1,
        le=queries.MAX_WINDOW_DAYS,
        description=f"Days of flags to count, 1 to {queries.MAX_WINDOW_DAYS}; date_from or date_to replace it.",
    )
    date_from: Day | None = Field(
        None, description="A fixed period instead of the window: flags from this day (inclusive, UTC)."
    )
    date_to: Day | None = Field(None, description="A fixed period: flags up to this day (inclusive, UTC).")
    tenant_id: Id | None = Field(
        None, description="Only the items of this tenant's calls: the cards, leader and lead test recomputed."
    )
    assistant_id: Id | None = Field(
        None, description="Only the items of this assistant's calls (of tenant_id's, when both are given)."
    )

    @model_validator(mode="after")
    def _in_order(self):
        if self.date_from and self.date_to and self.date_to < self.date_from:
            raise ValueError("date_to must not be before date_from")
        return self


@results.get("/banks/{int:bank_id}/results", **doc(200, ResultsOut, "The bank's results.", "not_found"))
@rate_limited("results")
def bank_results(request, bank_id: int, q: Query[ResultsFilters]):
    """Every candidate's accuracy over the window's flags and controls (or a fixed period's, with date_from and
    date_to), the leader (highest accuracy, ties to lower mean WER, then the one listed first), whether it clears
    the threshold, and the McNemar test of its lead over the runner-up; beside each card its latency (p50, p95,
    n, the real-time factor of a local engine), its price and what switching to it would cost a month at the
    organization's volume; the trade-off chart as data. With tenant_id or assistant_id, all of it on that
    tenant's or assistant's calls (an id of another organization: 404 not_found)."""
    bank = _bank(request, bank_id)
    group = queries.groups.group_of(request.org, q.tenant_id, q.assistant_id)
    figures = snapshots.results_of(bank, q.window, date_from=q.date_from, date_to=q.date_to, group=group)
    screen = figures.data.screen
    r = replace(
        screen.results,
        pending=queries.pending_for_bank(bank, [c.transcriber.pk for c in screen.results.cards]),
    )
    return results_out(r, screen.entity, screen.tradeoff, figures, screen.own_entities)


@results.get(
    "/banks/{int:bank_id}/results/groups",
    **doc(200, GroupTableOut, "Each candidate's accuracy per tenant or per assistant.", "not_found"),
)
@rate_limited("results")
def bank_groups(
    request,
    bank_id: int,
    by: Literal["tenant", "assistant"] = BY,
    window: int = WINDOW,
):
    """Where a candidate wins: its accuracy with n on the window's flagged and control lines of each tenant (or
    assistant) of the bank's calls, the rows with the most lines first (at most 20; `more` counts the rest), and
    the best candidate of each row (ties to the lower mean WER, then the one listed first; none when none got a
    line right). Filter the results by a row's id (tenant_id, assistant_id) to see its cards."""
    bank = _bank(request, bank_id)
    screen = snapshots.results_of(bank, window).data.screen
    return group_table_out(screen.by_tenant if by == "tenant" else screen.by_assistant, window)


class TurnPage(Page):
    candidates: list[TranscriberRef]
    items: list[TurnOut]


class TurnFilters(PageIn):
    window: int = Field(
        queries.DEFAULT_WINDOW_DAYS,
        ge=1,
        le=queries.MAX_WINDOW_DAYS,
        description=f"Days of flags to show, 1 to {queries.MAX_WINDOW_DAYS}: today and the days before it.",
    )
    kind: Literal["all", "flags", "controls"] = Field(
        "all", description="Flagged lines, control lines or both."
    )
    tag: Text | None = Field(None, max_length=50, description="Only items of flags carrying this tag.")
    disagree: bool = Field(
        False, description="Only items where at least one candidate matched and one did not."
    )
    transcriber_id: Id | None = Field(
        None, description="With `pair`: the candidate whose confusion pair it is."
    )
    pair: Text | None = Field(
        None,
        max_length=140,
        description='Only items where that candidate makes this confusion pair ("s:for>four", "d:the>", "i:>uh": '
        "the `pair` of GET .../confusions).",
    )
    flagged_by: Text | None = Field(
        None,
        max_length=40,
        description='Only items of flags made by "user:<id>" or by the API key "key:<id>".',
    )

    @model_validator(mode="after")
    def _filters(self):
        if (self.pair is None) != (self.transcriber_id is None):
            raise ValueError("pair and transcriber_id go together")
        if self.pair is not None and alignment.parse_pair(self.pair) is None:
            raise ValueError('pair must be a confusion pair such as "s:for>four", "d:the>" or "i:>uh"')
        if self.flagged_by is not None and people.parse_flagger(self.flagged_by) is None:
            raise ValueError('flagged_by must be "user:<id>" or "key:<id>"')
        return self


@results.get(
    "/banks/{int:bank_id}/turns", **doc(200, TurnPage, "One page of the turn-by-turn table.", "not_found")
)
@rate_limited("turns")
def turn_table(request, bank_id: int, q: Query[TurnFilters]):
    """Every flagged line and control line of the bank in the window, newest flag first, with the production
    transcript and each candidate's text, whether it matched and its WER."""
    bank = _bank(request, bank_id)
    if q.transcriber_id is not None:
        lookups.candidate(bank, q.transcriber_id)
    items = queries.turn_items(
        bank,
        q.window,
        kind="" if q.kind == "all" else q.kind,
        tag=q.tag or "",
        disagree=q.disagree,
        pair=(q.transcriber_id, q.pair.strip()) if q.pair is not None else None,
        flagged_by=people.parse_flagger(q.flagged_by) if q.flagged_by else None,
    )
    count = items.count()
    cands = list(queries.candidates_of(bank))
    rows = queries.turn_rows(bank, items[q.offset : q.offset + q.limit], cands)
    out = [turn_out(row) for row in rows]
    return {**page_of(count, q, out), "candidates": [transcriber_ref(c.transcriber) for c in cands]}


@results.get(
    "/banks/{int:bank_id}/results.csv",
    **doc(200, None, "The results cards as CSV (UTF-8 with a BOM).", "not_found", content=CSV_CONTENT),
)
@rate_limited("exports")
def export_results(
    request,
    bank_id: int,
    window: int = WINDOW,
    tenant_id: Id | None = TENANT,
    assistant_id: Id | None = ASSISTANT,
):
    """The same CSV as the dashboard's results export: one row per candidate (with its latency, price and
    monthly projection), then the production rows (the dashboard's CSV calls them live), then each candidate's
    accuracy per tenant and per assistant."""
    group = queries.groups.group_of(request.org, tenant_id, assistant_id)
    return exports.results_csv(_bank(request, bank_id), window, group)


@results.get(
    "/banks/{int:bank_id}/turns.csv",
    **doc(200, None, "The turn table as CSV, streamed.", "not_found", content=CSV_CONTENT),
)
@rate_limited("exports")
def export_turns(request, bank_id: int, window: int = WINDOW):
    """The same CSV as the dashboard's turn table export: one row per item and transcriber (live and
    candidates), streamed so a large bank never sits in memory."""
    return exports.turns_csv(_bank(request, bank_id), window)


# ---------------------------------------------------------------- queue


@queue.get("/queue", **doc(200, QueueOut, "The organization's queue."))
def queue_status(request):
    """The organization's line transcriptions waiting and running, the limit past which flags into banks and
    candidate backfills are refused (429 `queue_full`), and how many run at once."""
    return jobs.queue_status(request.org.pk)
