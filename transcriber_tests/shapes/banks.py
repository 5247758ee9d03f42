"""A bank as the API and its webhook events show it: the bank with its candidates, a candidate, and the bank's
results (each candidate's card, the leader, the lead test, the production rows and the control mix)."""

from datetime import date, datetime
from typing import Literal

from ninja import Field, Schema

from oncore.api import Money
from oncore.formats import money

from .. import queries
from .refs import FiguresOut, TranscriberOut, TranscriberRef, figures_out, transcriber_out, transcriber_ref
from .tradeoff import (
    CataloguePriceOut,
    FilterOut,
    TradeoffFields,
    TradeoffOut,
    VolumeOut,
    card_fields,
    catalogue_out,
    filter_out,
    tradeoff_out,
    volume_out,
)


class BankOut(Schema):
    id: int
    name: str
    language_label: str
    threshold: float
    controls_per_flag: int
    created_at: datetime
    flags: int = Field(description="Flags in the bank, any date.")
    candidates: list[TranscriberRef] = Field(description="The candidates, in their order.")


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


class CandidateOut(Schema):
    transcriber: TranscriberOut
    position: int = Field(description="0 is listed first (ties for the lead go to the one listed first).")
    added_at: datetime


def candidate_out(c) -> dict:
    return {"transcriber": transcriber_out(c.transcriber), "position": c.position, "added_at": c.added_at}


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


class RedrawEstimateOut(Schema):
    """What drawing a bank's flags' controls again to its setting does: GET .../controls/estimate, the answer of
    POST .../controls/redraw and `detail` of its estimate_not_confirmed."""

    controls_per_flag: int = Field(description="The bank's setting the flags are brought to.")
    flags: int = Field(description="Flags whose number of control lines differs from it.")
    removed: int = Field(description="Control lines over the number, taken out with their scores.")
    added: int = Field(description="Control lines to draw from the same calls (as many as they have left).")
    to_transcribe: int = Field(
        description="Transcriptions the bank's candidates would make (an average: the draw is random)."
    )
    already_transcribed: int = Field(
        description="Of the new lines' transcriptions, those already made: free."
    )
    cost: Money = Field(description="About what the new transcriptions cost, USD.")


class Interval(Schema):
    low: float
    high: float


class LeadParts(Schema):
    """Where an accuracy comes from: the flagged lines fixed and the control lines kept, each with n."""

    flags_scored: int = Field(
        description="Of `scored`, the flagged lines (the production transcriber got them wrong)."
    )
    flags_fixed: int = Field(description="Of `matches`, on flagged lines: lines it fixed.")
    controls_scored: int = Field(
        description="Of `scored`, the control lines (expected text: the production transcript)."
    )
    controls_kept: int = Field(
        description="Of `matches`, on control lines: lines it kept as the production transcript had them."
    )


def lead_parts_out(s) -> dict:
    """LeadParts of a scoring.CandidateSummary."""
    return {
        "flags_scored": s.flags_scored,
        "flags_fixed": s.flags_fixed,
        "controls_scored": s.control_scored,
        "controls_kept": s.controls_kept,
    }


class Summary(LeadParts):
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


class EntityCategoryOut(Schema):
    category: Literal["name", "time", "date", "number", "id"]
    n: int = Field(description="Entities of this category said on its scored lines.")
    right: int = Field(description="Of those, the ones its text kept.")
    accuracy: float | None = Field(description="right / n, a fraction.")


class OwnEntitiesOut(Schema):
    n: int = Field(
        description="Entities said on its scored lines (names, times, dates, numbers and ids found in each line's "
        "expected text by the entity benchmark's matcher package); failed lines are left out, as from accuracy."
    )
    right: int = Field(
        description="Of those, the ones its text kept (the benchmark matcher finds them in it)."
    )
    accuracy: float | None = Field(description="right / n, a fraction; null when its lines had no entities.")
    lines: int = Field(description="Its scored lines whose expected text had entities.")
    categories: list[EntityCategoryOut] = Field(
        description="The same per category (name, time, date, number, id), those said at least once."
    )


class FailureOut(Schema):
    reason: str
    lines: int


class CardOut(Summary, TradeoffFields):
    position: int = Field(description="Its place among the candidates, from 0.")
    audio_cost: Money = Field(description="Audio cost so far on the bank's lines, USD.")
    is_leader: bool
    entity_benchmark: EntityBenchmark | None = Field(
        description="Its latest scored run on the public entity benchmark, beside your own callers; null if none."
    )
    entities: OwnEntitiesOut | None = Field(
        description="Entities right on your own callers' lines (the bank's, over the same window, period and "
        "filter as its accuracy), beside the public benchmark's figure; null while the figures are being computed "
        "again. Added in 2.1.0.",
    )
    production_model: bool = Field(
        description="It runs the same provider and model as a production transcriber of these calls: on control "
        "lines it largely repeats the production transcript, so its accuracy mostly reflects the mix of flags and "
        "controls."
    )
    failures: list[FailureOut] = Field(
        description="Why its failed lines failed (the engine's error, or a text with no words), most lines first."
    )


class LeaderOut(Schema):
    transcriber_id: int
    accuracy: float | None
    clears_threshold: bool = Field(description="accuracy >= the bank's threshold (a marker only).")
    lead_from: Literal["flags", "controls"] | None = Field(
        description="Which part alone carries the lead over the runner-up: the flagged lines it fixed, or the "
        "control lines it kept (with no more flagged lines fixed); null when both parts carry it, or there is "
        "no runner-up."
    )
    production_model: bool = Field(
        description="The leader runs the production transcriber's own provider and model."
    )


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
    filter: FilterOut | None = Field(
        description="The tenant or assistant the results were computed on (tenant_id, assistant_id); null: every "
        "call."
    )
    volume: VolumeOut = Field(
        description="The organization's (the filter's) caller audio over the last 30 days: what `monthly` on each "
        "card projects."
    )
    tradeoff: TradeoffOut = Field(description="Accuracy against p95 latency: the dashboard's chart as data.")
    catalogue_prices: list[CataloguePriceOut] = Field(
        description="The catalogue's other priced entries at the same volume, cheapest first: prices only (never "
        "called on these lines)."
    )
    figures: FiguresOut = Field(
        description="How new these figures are (all but `pending`, which is current)."
    )


def interval_out(interval):
    return None if interval is None else {"low": interval[0], "high": interval[1]}


def summary_fields(s, interval) -> dict:
    """A candidate's summary (lib.scoring.CandidateSummary) with its 95% Wilson interval, as every payload and the
    results CSV give it: the cards, the live rows, the leaderboard's leader (shapes/screens.py), the CSV
    (shapes/exports.py). The one place these fields are named."""
    return {
        "scored": s.scored,
        "matches": s.matches,
        "failed": s.failed,
        "accuracy": s.accuracy,
        "mean_wer": s.mean_wer,
        "interval": interval_out(interval),
        **lead_parts_out(s),
    }


def summary_out(t, s, interval) -> dict:
    return {"transcriber": transcriber_ref(t), **summary_fields(s, interval)}


def own_entities_out(own) -> dict | None:
    """A candidate's entities right on the bank's own lines (lib.entities.EntityAccuracy), or None."""
    if own is None:
        return None
    return {
        "n": own.n,
        "right": own.right,
        "accuracy": own.accuracy,
        "lines": own.lines,
        "categories": [
            {"category": c.category, "n": c.n, "right": c.right, "accuracy": c.accuracy}
            for c in own.categories
        ],
    }


def results_out(r: queries.BankResults, entity: dict, tradeoff, figures, own_entities=None) -> dict:
    """A bank's results (queries.bank_results) with each candidate's public entity benchmark figure (`entity`:
    benchmark.selectors.entity_headlines of its candidates) and its entities right on the bank's own lines
    (`own_entities`: queries.entities.bank_entities), and its latency and cost (`tradeoff`:
    queries.tradeoff.bank_tradeoff of these results), from a snapshot (`figures`: snapshots.Read)."""
    own_entities = own_entities or {}
    period = r.date_from is not None or r.date_to is not None
    choices = {c.key: c for c in tradeoff.choices}
    cards = []
    for c in r.cards:
        e = entity.get(c.transcriber.pk)
        cards.append(
            {
                **summary_out(c.transcriber, c.summary, c.interval),
                **card_fields(choices[c.transcriber.pk]),
                "position": c.position,
                "audio_cost": money(c.cost),
                "is_leader": c.is_leader,
                "production_model": c.live_model,
                "failures": [{"reason": reason, "lines": n} for reason, n in c.failures],
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
                "entities": own_entities_out(own_entities.get(c.transcriber.pk)),
            }
        )
    leader = None
    if r.leader is not None:
        leader = {
            "transcriber_id": r.leader.transcriber.pk,
            "accuracy": r.leader.summary.accuracy,
            "clears_threshold": r.leader_clears_threshold,
            "lead_from": r.lead_from or None,
            "production_model": r.leader.live_model,
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
        "production": [summary_out(*row) for row in r.live_rows],
        "production_note": r.live_reason,
        "control_mix": [{"controls": c, "flags": n} for c, n in r.control_mix],
        "pending": r.pending,
        "filter": filter_out(r.group),
        "volume": volume_out(tradeoff.volume),
        "tradeoff": tradeoff_out(tradeoff),
        "catalogue_prices": catalogue_out(tradeoff),
        "figures": figures_out(figures),
    }
