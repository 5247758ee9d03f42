"""Banks, candidates (estimate, add after confirming, reorder, remove), results, the turn-by-turn table, the
CSV exports and the organization's queue."""

from datetime import date, datetime
from decimal import Decimal
from typing import Literal

from django.db.models import Prefetch
from django.urls import reverse
from ninja import Field, Query, Router, Schema
from ninja.responses import Status
from pydantic import field_validator, model_validator

from benchmark import selectors as benchmark
from oncore.api import created
from oncore.formats import money
from oncore.transcribers.models import Transcriber
from transcriber_tests import actions, exports, jobs, queries
from transcriber_tests.models import Bank, Candidate, Score

from .errors import CSV_CONTENT, doc
from .schemas import (
    BodyIn,
    Id,
    Money,
    Page,
    PageIn,
    Text,
    TranscriberOut,
    TranscriberRef,
    get_or_404,
    page,
    page_of,
    transcriber_out,
    transcriber_ref,
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


class BankIn(BodyIn):
    name: Text = Field(min_length=1, max_length=100, description="Unique in the organization.")
    language_label: Text = Field("", max_length=100, description="Display only, e.g. 'English + French'.")
    threshold: Decimal = Field(
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


class BankEdit(BodyIn):
    name: Text | None = Field(None, min_length=1, max_length=100)
    language_label: Text | None = Field(None, max_length=100)
    threshold: Decimal | None = Field(None, ge=0, le=1, decimal_places=4)
    controls_per_flag: int | None = Field(None, ge=0, le=2)

    _name = field_validator("name")(_strip)


class BankOut(Schema):
    id: int
    name: str
    language_label: str
    threshold: float
    controls_per_flag: int
    created_at: datetime
    flags: int = Field(description="Flags in the bank, any date.")
    candidates: list[TranscriberRef] = Field(description="The candidates, in their order.")


class BankPage(Page):
    items: list[BankOut]


def banks_of(organization):
    """The organization's banks as the API shows them: with their counts and their candidates in order."""
    ordered = Candidate.objects.select_related("transcriber").order_by("position")
    return queries.banks_list(organization).prefetch_related(Prefetch("candidates", queryset=ordered))


def _bank(request, bank_id) -> Bank:
    return get_or_404(Bank.objects.filter(organization=request.org), bank_id, "bank")


def bank_out(bank) -> dict:
    return {
        "id": bank.pk,
        "name": bank.name,
        "language_label": bank.language_label,
        "threshold": float(bank.threshold),
        "controls_per_flag": bank.controls_per_flag,
        "created_at": bank.created_at,
        "flags": bank.n_flags,
        "candidates": [transcriber_ref(c.transcriber) for c in bank.candidates.all()],
    }


@banks.get("/banks", **doc(200, BankPage, "Banks, by name."))
def list_banks(request, q: Query[PageIn]):
    return page(banks_of(request.org), q, bank_out)


@banks.post("/banks", **doc(201, BankOut, "The new bank.", "invalid_request", "bank_name_taken"))
def create_bank(request, body: BankIn):
    bank = actions.do_create_bank(request.org, **body.model_dump())
    return created(
        request, reverse("api:get_bank", args=[bank.pk]), bank_out(banks_of(request.org).get(pk=bank.pk))
    )


@banks.get("/banks/{int:bank_id}", **doc(200, BankOut, "The bank.", "not_found"))
def get_bank(request, bank_id: int):
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


@banks.delete("/banks/{int:bank_id}", **doc(204, None, "Deleted.", "not_found"))
def delete_bank(request, bank_id: int):
    """Delete the bank. Its flags are kept, in no bank; its full-call runs leave every list but stay readable
    by id."""
    actions.do_delete_bank(_bank(request, bank_id))
    return Status(204, None)


# ---------------------------------------------------------------- candidates


class CandidateOut(Schema):
    transcriber: TranscriberOut
    position: int = Field(description="0 is listed first (ties for the lead go to the one listed first).")
    added_at: datetime


class CandidateList(Schema):
    count: int = Field(description="At most 8: the whole list, never paginated.")
    items: list[CandidateOut]


def _candidate_out(c) -> dict:
    return {"transcriber": transcriber_out(c.transcriber), "position": c.position, "added_at": c.added_at}


def _candidate_list(bank) -> dict:
    items = [_candidate_out(c) for c in queries.candidates_of(bank)]
    return {"count": len(items), "items": items}


class EstimateOut(Schema):
    """What adding a candidate costs: GET .../candidates/estimate and `detail` of estimate_not_confirmed."""

    transcriber_id: int
    lines: int = Field(description="Lines (flags and controls) the transcriber would transcribe.")
    already_transcribed: int = Field(description="Lines it already has text for: free.")
    audio_seconds: float = Field(description="Rounded to 3 places.")
    audio_minutes: float = Field(description="Rounded to 3 places.")
    price_per_minute: Money
    cost: Money = Field(description="Estimated cost in USD.")
    key_problem: str | None = Field(
        None,
        description="Why every line would fail on this server (the vendor key's environment variable is not "
        "set), or null when it can be sent.",
    )


class CandidateIn(BodyIn):
    transcriber_id: Id
    confirm: bool = Field(False, description="Must be true: send the request once the estimate was accepted.")


class OrderIn(BodyIn):
    transcriber_ids: list[Id] = Field(
        max_length=8, description="Every current candidate once, in the new order."
    )


def _transcriber(pk) -> Transcriber:
    return get_or_404(Transcriber.objects.all(), pk, "transcriber")


@candidates.get(
    "/banks/{int:bank_id}/candidates", **doc(200, CandidateList, "The candidates in order.", "not_found")
)
def list_candidates(request, bank_id: int):
    return _candidate_list(_bank(request, bank_id))


@candidates.get(
    "/banks/{int:bank_id}/candidates/estimate",
    **doc(200, EstimateOut, "What adding the transcriber would cost.", "not_found"),
)
def estimate_candidate(request, bank_id: int, transcriber_id: int):
    """The backfill a new candidate needs: every line of the bank it has no text for yet, billed as audio."""
    return actions.estimate_backfill(_bank(request, bank_id), _transcriber(transcriber_id)).as_dict()


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
    ),
)
def add_candidate(request, bank_id: int, body: CandidateIn):
    """Add a candidate and transcribe every flag and control line of the bank with it. Without
    `"confirm": true` nothing is added: the answer is 409 `estimate_not_confirmed` with the estimate."""
    bank = _bank(request, bank_id)
    candidate = actions.do_add_candidate(bank, _transcriber(body.transcriber_id), confirmed=body.confirm)
    location = reverse("api:get_candidate", args=[bank.pk, candidate.transcriber_id])
    return created(request, location, _candidate_out(candidate))


@candidates.get(
    "/banks/{int:bank_id}/candidates/{int:transcriber_id}",
    **doc(200, CandidateOut, "The candidate.", "not_found"),
)
def get_candidate(request, bank_id: int, transcriber_id: int):
    return _candidate_out(_candidate(_bank(request, bank_id), transcriber_id))


def _candidate(bank, transcriber_id) -> Candidate:
    return get_or_404(queries.candidates_of(bank), transcriber_id, "candidate", field="transcriber_id")


@candidates.put(
    "/banks/{int:bank_id}/candidates/order",
    **doc(200, CandidateList, "The candidates in their new order.", "not_found", "invalid_request"),
)
def reorder_candidates(request, bank_id: int, body: OrderIn):
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


class Interval(Schema):
    low: float
    high: float


class Summary(Schema):
    transcriber: TranscriberRef
    scored: int = Field(description="Lines scored (flags and controls in the window).")
    matches: int
    failed: int = Field(
        description="Lines it failed on (an error, or a text with no words): left out of the division."
    )
    accuracy: float | None = Field(description="matches / scored, a fraction; null when nothing is scored.")
    mean_wer: float | None
    interval: Interval | None = Field(description="95% Wilson interval of the accuracy.")


class EntityBenchmark(Schema):
    accuracy: float | None = Field(description="Headline entity accuracy (MLCommons subset, tier A).")
    n: int = Field(description="Entity spans it was scored on.")
    run_id: int = Field(description="The benchmark run it comes from.")
    packaged_fixture: bool = Field(
        description="The run is on the few-clip fixture packaged with OnCore (a pipeline check, not the public "
        "benchmark): do not read it as the benchmark's figure."
    )
    dataset_clips: int = Field(description="Clips in the run's dataset.")
    caption: str = Field(
        description='What to print beside the figure ("MLCommons subset, tier A, n=1086", or "packaged '
        'fixture, 5 clips — not the full benchmark, tier A, n=4").'
    )


class CardOut(Summary):
    position: int = Field(description="Its place among the candidates, from 0.")
    audio_cost: Money = Field(description="Audio cost so far on the bank's lines, USD.")
    is_leader: bool
    entity_benchmark: EntityBenchmark | None = Field(
        description="Its latest scored run on the public entity benchmark, beside your own callers; null if none."
    )


class LeaderOut(Schema):
    transcriber_id: int
    accuracy: float | None
    clears_threshold: bool = Field(description="accuracy >= the bank's threshold (a marker only).")


class LeadTestOut(Schema):
    runner_up_id: int
    both_scored: int = Field(description="Items both the leader and the runner-up scored.")
    leader_only_right: int
    runner_up_only_right: int
    p_value: float = Field(description="Exact McNemar test, two-sided.")
    clear: bool = Field(description="The lead is clear: p < 0.05 and the leader is right more often.")


class ControlMix(Schema):
    controls: int = Field(description="Control lines per flag.")
    flags: int


class ResultsOut(Schema):
    bank_id: int
    window_days: int | None = Field(description="The window counted; null when a period was asked for.")
    date_from: date | None = Field(description="The period's first day, when one was asked for.")
    date_to: date | None = Field(description="The period's last day (inclusive), when one was asked for.")
    threshold: float
    candidates: list[CardOut]
    leader: LeaderOut | None
    lead_test: LeadTestOut | None = Field(description="Leader against the runner-up; null with one scored.")
    production: list[Summary] = Field(
        description="The production transcripts (the live transcribers of the bank's calls), for reference only."
    )
    production_note: str = Field(description="Why the production rows are no fair rival.")
    control_mix: list[ControlMix] = Field(
        description="How many of the window's flags carry each number of control lines, most flags first; more "
        "than one entry when the bank's setting changed (it applies to new flags) or a call had too few lines."
    )
    pending: int = Field(description="Transcriptions of this bank still queued or running.")


def _interval(interval):
    return None if interval is None else {"low": interval[0], "high": interval[1]}


def _summary(t, s, interval) -> dict:
    return {
        "transcriber": transcriber_ref(t),
        "scored": s.scored,
        "matches": s.matches,
        "failed": s.failed,
        "accuracy": s.accuracy,
        "mean_wer": s.mean_wer,
        "interval": _interval(interval),
    }


WINDOW = Query(
    queries.DEFAULT_WINDOW_DAYS,
    ge=1,
    le=queries.MAX_WINDOW_DAYS,
    description=f"Days of flags to count, 1 to {queries.MAX_WINDOW_DAYS}.",
)


class ResultsFilters(Schema):
    window: int = Field(
        queries.DEFAULT_WINDOW_DAYS,
        ge=1,
        le=queries.MAX_WINDOW_DAYS,
        description=f"Days of flags to count, 1 to {queries.MAX_WINDOW_DAYS}; date_from or date_to replace it.",
    )
    date_from: date | None = Field(
        None, description="A fixed period instead of the window: flags from this day (inclusive, UTC)."
    )
    date_to: date | None = Field(None, description="A fixed period: flags up to this day (inclusive, UTC).")

    @model_validator(mode="after")
    def _in_order(self):
        if self.date_from and self.date_to and self.date_to < self.date_from:
            raise ValueError("date_to must not be before date_from")
        return self


@results.get("/banks/{int:bank_id}/results", **doc(200, ResultsOut, "The bank's results.", "not_found"))
def bank_results(request, bank_id: int, q: Query[ResultsFilters]):
    """Every candidate's accuracy over the window's flags and controls (or a fixed period's, with date_from and
    date_to), the leader (highest accuracy, ties to lower mean WER, then the one listed first), whether it clears
    the threshold, and the McNemar test of its lead over the runner-up."""
    r = queries.bank_results(_bank(request, bank_id), q.window, date_from=q.date_from, date_to=q.date_to)
    period = r.date_from is not None or r.date_to is not None
    entity = benchmark.entity_headlines([c.transcriber.pk for c in r.cards])
    cards = []
    for c in r.cards:
        e = entity.get(c.transcriber.pk)
        cards.append(
            {
                **_summary(c.transcriber, c.summary, c.interval),
                "position": c.position,
                "audio_cost": money(c.cost),
                "is_leader": c.is_leader,
                "entity_benchmark": {
                    "accuracy": e.accuracy,
                    "n": e.n,
                    "run_id": e.run_id,
                    "packaged_fixture": e.is_fixture,
                    "dataset_clips": e.dataset_clips,
                    "caption": e.caption,
                }
                if e
                else None,
            }
        )
    leader = None
    if r.leader is not None:
        leader = {
            "transcriber_id": r.leader.transcriber.pk,
            "accuracy": r.leader.summary.accuracy,
            "clears_threshold": r.leader_clears_threshold,
        }
    lead = None
    if r.lead is not None and r.runner_up is not None:
        lead = {
            "runner_up_id": r.runner_up.transcriber.pk,
            "both_scored": r.lead.both_scored,
            "leader_only_right": r.lead.leader_only_right,
            "runner_up_only_right": r.lead.runner_up_only_right,
            "p_value": r.lead.p_value,
            "clear": r.lead.clear,
        }
    return {
        "bank_id": r.bank.pk,
        "window_days": None if period else r.window_days,
        "date_from": r.date_from,
        "date_to": r.date_to,
        "threshold": float(r.bank.threshold),
        "candidates": cards,
        "leader": leader,
        "lead_test": lead,
        "production": [_summary(*row) for row in r.live_rows],
        "production_note": r.live_reason,
        "control_mix": [{"controls": c, "flags": n} for c, n in r.control_mix],
        "pending": r.pending,
    }


class Cell(Schema):
    transcriber_id: int
    scored: bool = Field(description="false while its transcription is queued or running.")
    text: str | None = Field(description="Its text as it came back; null while waiting or after an error.")
    failed: bool = Field(description="A failed line: counted under failed, left out of the division.")
    failure: Literal["error", "no text"] | None = Field(
        description='Why it failed: "error" (no text came back) or "no text" (a text with no words after '
        "normalization); null when it was scored or is waiting."
    )
    match: bool | None
    wer: float | None
    case_or_punctuation_only: bool


class PickOut(Schema):
    transcriber_id: int | None = Field(
        description="The version chosen; null when the judge failed (see error)."
    )
    text: str
    reasoning: str
    error: str


class TurnOut(Schema):
    flag_id: int
    control_id: int | None = Field(description="Set on a control line, null on the flagged line itself.")
    kind: Literal["flag", "control"]
    line_id: int
    call_id: int
    tenant: str
    call_started_at: datetime
    flagged_at: datetime
    tags: list[str] = Field(description="The flag's error tags; empty on a control line, which carries none.")
    expected_text: str
    production: Cell = Field(description="The production transcript (the live one), scored as stored.")
    cells: list[Cell] = Field(description="One per candidate, in the candidates' order.")
    judge_pick: PickOut | None = Field(
        description="Where two or more candidates matched but wrote the line differently: the version the judge "
        "says fits the business best. It never changes a score."
    )


class TurnPage(Page):
    candidates: list[TranscriberRef]
    items: list[TurnOut]


class TurnFilters(PageIn):
    window: int = Field(queries.DEFAULT_WINDOW_DAYS, ge=1, le=queries.MAX_WINDOW_DAYS)
    kind: Literal["all", "flags", "controls"] = Field(
        "all", description="Flagged lines, control lines or both."
    )
    tag: Text | None = Field(None, max_length=50, description="Only items of flags carrying this tag.")
    disagree: bool = Field(
        False, description="Only items where at least one candidate matched and one did not."
    )


def _cell(transcriber_id, score) -> dict:
    if score is None:
        return {
            "transcriber_id": transcriber_id,
            "scored": False,
            "text": None,
            "failed": False,
            "failure": None,
            "match": None,
            "wer": None,
            "case_or_punctuation_only": False,
        }
    return {
        "transcriber_id": transcriber_id,
        "scored": True,
        "text": None if score.failure == Score.ERROR else score.hypothesis,
        "failed": score.failed,
        "failure": score.failure or None,
        "match": None if score.failed else score.match,
        "wer": None if score.failed else score.wer,
        "case_or_punctuation_only": score.case_or_punctuation_only,
    }


@results.get(
    "/banks/{int:bank_id}/turns", **doc(200, TurnPage, "One page of the turn-by-turn table.", "not_found")
)
def turn_table(request, bank_id: int, q: Query[TurnFilters]):
    """Every flagged line and control line of the bank in the window, newest flag first, with the production
    transcript and each candidate's text, whether it matched and its WER."""
    bank = _bank(request, bank_id)
    items = queries.turn_items(
        bank, q.window, kind="" if q.kind == "all" else q.kind, tag=q.tag or "", disagree=q.disagree
    )
    count = items.count()
    cands = list(queries.candidates_of(bank))
    rows = queries.turn_rows(bank, items[q.offset : q.offset + q.limit], cands)
    out = []
    for row in rows:
        flag, line = row.item.flag, row.line
        out.append(
            {
                "flag_id": flag.pk,
                "control_id": row.item.control_id,
                "kind": "control" if row.is_control else "flag",
                "line_id": line.pk,
                "call_id": flag.line.call_id,
                "tenant": flag.line.call.tenant.name,
                "call_started_at": flag.line.call.started_at,
                "flagged_at": flag.created_at,
                "tags": [] if row.is_control else flag.tag_list,  # a control carries no tags
                "expected_text": row.expected,
                "production": _cell(row.item.transcriber_id, row.item),
                "cells": [_cell(t.pk, score) for t, score in row.cells],
                "judge_pick": None
                if row.pick is None
                else {
                    "transcriber_id": row.pick.chosen_id,
                    "text": row.pick.chosen_text,
                    "reasoning": row.pick.reasoning,
                    "error": row.pick.error,
                },
            }
        )
    return {**page_of(count, q, out), "candidates": [transcriber_ref(c.transcriber) for c in cands]}


@results.get(
    "/banks/{int:bank_id}/results.csv",
    **doc(200, None, "The results cards as CSV (UTF-8 with a BOM).", "not_found", content=CSV_CONTENT),
)
def export_results(request, bank_id: int, window: int = WINDOW):
    """The same CSV as the dashboard's results export: one row per candidate, then the production rows (the
    dashboard's CSV calls them live)."""
    return exports.results_csv(_bank(request, bank_id), window)


@results.get(
    "/banks/{int:bank_id}/turns.csv",
    **doc(200, None, "The turn table as CSV, streamed.", "not_found", content=CSV_CONTENT),
)
def export_turns(request, bank_id: int, window: int = WINDOW):
    """The same CSV as the dashboard's turn table export: one row per item and transcriber (live and
    candidates), streamed so a large bank never sits in memory."""
    return exports.turns_csv(_bank(request, bank_id), window)


# ---------------------------------------------------------------- queue


class QueueOut(Schema):
    queued: int = Field(description="Line transcriptions waiting.")
    running: int
    limit: int = Field(
        description="Past this many waiting, flags into banks and backfills are refused (429)."
    )
    concurrency: int = Field(description="Transcriptions of this organization that run at once.")


@queue.get("/queue", **doc(200, QueueOut, "The organization's queue."))
def queue_status(request):
    return jobs.queue_status(request.org.pk)
