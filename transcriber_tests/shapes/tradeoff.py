"""Latency and cost beside accuracy as the API shows them (queries.tradeoff, queries.groups): each candidate's
mode and latency (a streaming candidate's time to final: `measure`), price and monthly projection on its results
card, the organization's call volume, the trade-off chart
as data, the catalogue's other prices at that volume, the filter a result was computed under and the
per-tenant and per-assistant tables."""

from datetime import date
from typing import Literal

from ninja import Field, Schema

from oncore.api import Money
from oncore.formats import money

from ..lib import tradeoff as lib_tradeoff
from ..queries.latency import LATENCY, TIME_TO_FINAL
from ..queries.tradeoff import switch_words
from .refs import TranscriberRef, transcriber_ref

P99_MIN = f"{lib_tradeoff.P99_MIN_LINES:,}"
RESOLUTION = (
    f"p50, p95 and p99 are read from log-spaced buckets (16 per doubling): {lib_tradeoff.RESOLUTION_WORDS} of the exact "
    "nearest-rank percentile."
)
Mode = Literal["batch", "streaming"]
MODE = (
    "How the candidate's replays send a line: batch (the clip in one request) or streaming (the clip as a live "
    "call: 20 ms frames paced in real time)."
)
MEASURE = (
    f'What the figures measure: "{LATENCY}" (batch: from sending the clip to its text) or "{TIME_TO_FINAL}" '
    "(streaming: from the end of the caller's speech to the final text), on this server, network included."
)


class HeadLatencyOut(Schema):
    lines: int = Field(description="Streaming replays with a first text after the caller started: the n.")
    p50_s: float = Field(description="Median time to first partial, seconds (exact, nearest rank).")
    p95_s: float = Field(description="95th percentile time to first partial, seconds (exact, nearest rank).")
    p99_s: float | None = Field(
        description=f"99th percentile time to first partial, seconds, from {P99_MIN} lines; null below that."
    )
    mean_s: float = Field(description="Mean time to first partial, seconds.")


class StabilityOut(Schema):
    lines: int = Field(
        description="Streaming replays that recorded their revisions and final segments: the n."
    )
    revisions: int = Field(
        description="Partials and finals that changed a word an earlier partial of the same segment had shown."
    )
    revisions_per_line: float | None = Field(description="revisions / lines; null with no lines.")
    final_segments: int = Field(description="Final segments that carried text.")
    finals_revised: int = Field(
        description="Of those, the ones that differ from the last partial shown for them."
    )
    finals_revised_share: float | None = Field(description="finals_revised / final_segments; null with none.")


class LatencyOut(Schema):
    mode: Mode = Field(description=MODE)
    measure: Literal["latency", "time to final"] = Field(description=MEASURE)
    lines: int = Field(description="Lines with a measured latency in the window: the n of the figures below.")
    p50_s: float = Field(description=f"Median latency (time to final for streaming), seconds. {RESOLUTION}")
    p95_s: float = Field(
        description=f"95th percentile latency (time to final for streaming), seconds. {RESOLUTION}"
    )
    p99_s: float | None = Field(
        None,
        description=f"99th percentile latency (time to final for streaming), seconds, from {P99_MIN} lines in the "
        f"window; null below that. {RESOLUTION}",
    )
    mean_s: float = Field(description="Mean latency (time to final for streaming), seconds (exact).")
    real_time_factor: float | None = Field(
        description="Processing seconds per audio second on the same lines, for a local batch engine (runs on "
        "this server); null for a vendor, whose latency includes the network, and for a streaming candidate, "
        "whose session lasts as long as its audio."
    )
    frames_off_schedule_share: float | None = Field(
        None,
        description="A streaming candidate's replays: the share of their 20 ms audio frames sent off a live "
        "call's schedule (more than 5 ms late or early); null for a batch candidate.",
    )
    off_schedule: str = Field(
        "",
        description="Over 5% of frames off schedule: the sentence the page shows beside the figure (this server "
        'was busy, so the time to final is longer than a live call would see); "" otherwise.',
    )
    time_to_first_partial: HeadLatencyOut | None = Field(
        None,
        description="A streaming candidate's head latency: from the start of the caller's speech within the clip "
        "to the first text it sent after it; null for a batch candidate or before one is measured.",
    )
    stability: StabilityOut | None = Field(
        None,
        description="How often a streaming candidate's partial text changed; null for a batch candidate.",
    )


class PriceOut(Schema):
    local: bool = Field(description="Runs on this server: free.")
    per_1000_minutes: Money = Field(description="The catalogue's list price per 1,000 audio minutes, USD.")
    source: str = Field(description="Where the price comes from; empty if unknown.")
    source_date: date | None = Field(description="When it was read there.")


class ProjectionOut(Schema):
    minutes: float = Field(description="The volume: caller audio minutes of the last 30 days (three places).")
    cost: Money = Field(
        description="minutes x the price per minute: a month at that volume, USD (0 for local)."
    )
    now: Money | None = Field(
        description="What the same minutes cost on their calls' live transcribers; null when some ran on one "
        "named on the calls only, not in the catalogue."
    )
    difference: Money | None = Field(description="cost - now (negative: less than now); null when now is.")
    difference_known: Money | None = Field(
        description="The same difference on the minutes whose cost now is known (those on a live transcriber in "
        "the catalogue): equal to difference when every minute's is; null when none is."
    )
    processing_hours: float | None = Field(
        description="A local engine: hours it would run on this server a month at its real-time factor."
    )
    summary: str = Field(
        description='The sentence the dashboard shows ("Switching to X: about $Y a month ...").'
    )


class TradeoffFields(Schema):
    """The fields a results card gains (CardOut)."""

    mode: Mode = Field(description=MODE)
    latency: LatencyOut | None = Field(
        description="Its latency, a streaming candidate's time to final; null while no line has one measured."
    )
    price: PriceOut
    window_audio_cost: Money = Field(description="Its audio cost on the window's lines, USD.")
    cost_per_scored_line: Money | None = Field(
        description="window_audio_cost / scored (the n); null with nothing scored."
    )
    monthly: ProjectionOut
    on_pareto_front: bool = Field(
        description="No other candidate is at least as accurate and at least as fast (p95) with one better."
    )


class LiveShareOut(Schema):
    name: str
    transcriber_id: int | None = Field(
        description="null: named on the calls only and not found in the catalogue by that name, so no price."
    )
    calls: int
    minutes: float
    cost: Money | None = Field(description="What its minutes cost; null without a catalogue price.")
    local: bool


class FilterOut(Schema):
    kind: Literal["tenant", "assistant"]
    id: int
    name: str
    tenant_name: str = Field(description="An assistant's tenant; empty for a tenant.")


class VolumeOut(Schema):
    first_day: date = Field(description="The 30 days counted, in the organization's timezone.")
    last_day: date
    calls: int = Field(
        description="Calls started in them (the filter's tenant or assistant only, under one)."
    )
    minutes: float = Field(description="Their caller audio minutes (lines with timing), three places.")
    now: Money | None = Field(
        description="What those minutes cost on their live transcribers; null if unknown."
    )
    now_known: Money = Field(
        description="What the minutes on a live transcriber in the catalogue cost now (all of them when now is "
        "not null)."
    )
    unpriced_minutes: float = Field(
        description="Minutes on a live transcriber named on the calls only and not in the catalogue."
    )
    production: list[LiveShareOut] = Field(
        description="Per production (live) transcriber, most minutes first."
    )


class ChartPointOut(Schema):
    transcriber_id: int
    mode: Mode = Field(description=MODE)
    accuracy: float
    scored: int
    p95_s: float = Field(description="p95 latency, a streaming candidate's p95 time to final, seconds.")
    latency_lines: int
    price_per_1000_minutes: Money
    local: bool
    on_pareto_front: bool


class TradeoffOut(Schema):
    points: list[ChartPointOut] = Field(
        description="The chart's points: the candidates with an accuracy and a latency, in their order."
    )
    pareto_front: list[int] = Field(description="Transcriber ids on the front, fastest first.")
    left_off: list[int] = Field(description="Candidates not on the chart: nothing scored or no latency yet.")
    latency_resolution: str


class CataloguePriceOut(Schema):
    transcriber: TranscriberRef
    price_per_1000_minutes: Money
    price_source: str
    price_date: date | None
    monthly: ProjectionOut


class GroupCellOut(Schema):
    transcriber_id: int
    scored: int = Field(description="Its n on the row.")
    matches: int
    failed: int
    accuracy: float | None


class GroupRowOut(Schema):
    id: int = Field(description="The tenant's or assistant's id (0: calls with no assistant).")
    name: str
    tenant_name: str
    lines: int = Field(description="Its flagged and control lines in the window.")
    cells: list[GroupCellOut] = Field(description="One per candidate, in the candidates' order.")
    best_id: int | None = Field(
        description="The best candidate on the row (★); null when none got a line right."
    )


class GroupTableOut(Schema):
    by: Literal["tenant", "assistant"]
    window_days: int
    candidates: list[TranscriberRef]
    rows: list[GroupRowOut] = Field(description="Most lines first, at most 20.")
    more: int = Field(description="Tenants or assistants left out past the 20.")


def projection_out(p: lib_tradeoff.Projection, summary: str) -> dict:
    return {
        "minutes": float(p.minutes),
        "cost": money(p.cost),
        "now": money(p.now),
        "difference": money(p.difference),
        "difference_known": money(p.known_difference),
        "processing_hours": p.processing_hours,
        "summary": summary,
    }


def price_out(t, local: bool) -> dict:
    return {
        "local": local,
        "per_1000_minutes": money(0 if local else t.price_per_minute * 1000),
        "source": t.price_source,
        "source_date": t.price_date,
    }


def latency_fields(found, local: bool, pacing=None) -> dict | None:
    """A queries.latency.Latency as LatencyOut (the real-time factor a local batch engine's only), with how its
    streaming replays were paced, their time to first partial and stability (queries.pacing.Pacing) where known."""
    if found is None:
        return None
    streaming = getattr(found, "streaming", False)
    paced = {}
    if pacing is not None:
        paced = {
            "frames_off_schedule_share": round(pacing.share, 4),
            "off_schedule": pacing.words if pacing.off else "",
            "time_to_first_partial": head_fields(pacing.first_partial),
            "stability": stability_fields(pacing),
        }
    return paced | {
        "mode": "streaming" if streaming else "batch",
        "measure": TIME_TO_FINAL if streaming else LATENCY,
        "lines": found.lines,
        "p50_s": found.p50_s,
        "p95_s": found.p95_s,
        "p99_s": found.p99_s,
        "mean_s": found.mean_s,
        "real_time_factor": found.real_time_factor if local and not streaming else None,
    }


def head_fields(head) -> dict | None:
    """A time to first partial (lib_tradeoff.Latency) as HeadLatencyOut."""
    if head is None:
        return None
    return {
        "lines": head.lines,
        "p50_s": head.p50_s,
        "p95_s": head.p95_s,
        "p99_s": head.p99_s,
        "mean_s": round(head.mean_s, 6),
    }


def stability_fields(pacing) -> dict:
    """A queries.pacing.Pacing's revisions and revised finals as StabilityOut."""
    per_line, share = pacing.revisions_per_line, pacing.finals_revised_share
    return {
        "lines": pacing.stable_lines,
        "revisions": pacing.revisions,
        "revisions_per_line": None if per_line is None else round(per_line, 4),
        "final_segments": pacing.final_segments,
        "finals_revised": pacing.finals_revised,
        "finals_revised_share": None if share is None else round(share, 4),
    }


def latency_out(choice) -> dict | None:
    return latency_fields(choice.latency, choice.local, choice.pacing)


def card_fields(choice) -> dict:
    """The TradeoffFields of one candidate (a queries.tradeoff.Choice)."""
    return {
        "mode": choice.transcriber.mode,
        "latency": latency_out(choice),
        "price": price_out(choice.transcriber, choice.local),
        "window_audio_cost": money(choice.window_cost),
        "cost_per_scored_line": money(choice.cost_per_line),
        "monthly": projection_out(choice.projection, choice.switch_words),
        "on_pareto_front": choice.on_front,
    }


def filter_out(group) -> dict | None:
    if group is None:
        return None
    return {"kind": group.kind, "id": group.id, "name": group.name, "tenant_name": group.tenant_name}


def volume_out(v) -> dict:
    return {
        "first_day": v.first_day,
        "last_day": v.last_day,
        "calls": v.calls,
        "minutes": float(v.minutes),
        "now": money(v.now),
        "now_known": money(v.known_now),
        "unpriced_minutes": float(v.unpriced_minutes),
        "production": [
            {
                "name": s.name,
                "transcriber_id": s.transcriber_id,
                "calls": s.calls,
                "minutes": float(s.minutes),
                "cost": money(s.cost),
                "local": s.local,
            }
            for s in v.live
        ],
    }


def tradeoff_out(t) -> dict:
    """The chart as data (a queries.tradeoff.Tradeoff)."""
    return {
        "points": [
            {
                "transcriber_id": c.key,
                "mode": c.transcriber.mode,
                "accuracy": c.accuracy,
                "scored": c.summary.scored,
                "p95_s": c.p95_s,
                "latency_lines": c.latency.lines,
                "price_per_1000_minutes": money(0 if c.local else c.transcriber.price_per_minute * 1000),
                "local": c.local,
                "on_pareto_front": c.on_front,
            }
            for c in t.charted
        ],
        "pareto_front": [c.key for c in sorted(t.front, key=lambda c: c.p95_s)],
        "left_off": [c.key for c, _ in t.left_off],
        "latency_resolution": RESOLUTION,
    }


def catalogue_out(t) -> list[dict]:
    """The catalogue's other priced entries at the volume (prices only: never called on these lines)."""
    return [
        {
            "transcriber": transcriber_ref(entry),
            "price_per_1000_minutes": money(entry.price_per_minute * 1000),
            "price_source": entry.price_source,
            "price_date": entry.price_date,
            "monthly": projection_out(p, switch_words(entry, p)),
        }
        for entry, p in t.catalogue
    ]


def group_table_out(table, window_days: int) -> dict:
    """A per-tenant or per-assistant table (queries.groups.GroupTable)."""
    return {
        "by": table.by,
        "window_days": window_days,
        "candidates": [transcriber_ref(c) for c in table.candidates],
        "rows": [
            {
                "id": row.group.id,
                "name": row.group.name,
                "tenant_name": row.group.tenant_name,
                "lines": row.lines,
                "cells": [
                    {
                        "transcriber_id": c.candidate,
                        "scored": c.scored,
                        "matches": c.matches,
                        "failed": c.failed,
                        "accuracy": c.accuracy,
                    }
                    for c in row.cells
                ],
                "best_id": row.best.pk if row.best else None,
            }
            for row in table.rows
        ],
        "more": table.more,
    }


# ---------------------------------------------------------------- the results CSV's columns of these figures

CSV_COLUMNS = [
    "filter",
    "mode",  # batch or streaming
    "latency_measure",  # what latency_* are: "latency" (batch) or "time to final" (streaming)
    "latency_lines",
    "latency_p50_s",
    "latency_p95_s",
    "latency_mean_s",
    "real_time_factor",
    "price_per_1000_min_usd",
    "price_source",
    "price_date",
    "window_audio_cost_usd",
    "cost_per_scored_line_usd",
    "monthly_minutes",
    "monthly_cost_usd",
    "monthly_now_usd",
    "monthly_difference_usd",
    "processing_hours",
    "on_pareto_front",
    "group_kind",
    "group_id",
    "group_name",
    "group_lines",
    "best_in_group",
]


# A streaming candidate's head latency and stability, and the p99 of either latency (from 100 lines): the results
# CSV's last columns (shapes/exports.py RESULTS_COLUMNS).
STREAM_CSV_COLUMNS = [
    "latency_p99_s",
    "first_partial_lines",
    "first_partial_p50_s",
    "first_partial_p95_s",
    "first_partial_p99_s",
    "partial_revisions_per_line",
    "final_segments",
    "finals_revised",
]


def stream_cells(choice=None) -> list:
    """STREAM_CSV_COLUMNS of a candidate row (a queries.tradeoff.Choice); blank for any other row."""
    found = choice.latency if choice else None
    paced = choice.pacing if choice and choice.streaming else None
    head = paced.first_partial if paced else None
    return [
        _places(found.p99_s if found else None),
        head.lines if head else "",
        _places(head.p50_s if head else None),
        _places(head.p95_s if head else None),
        _places(head.p99_s if head else None),
        _places(paced.revisions_per_line if paced else None),
        paced.final_segments if paced and paced.stable_lines else "",
        paced.finals_revised if paced and paced.stable_lines else "",
    ]


def _places(x, places=4):
    return "" if x is None else round(x, places)


def _projection_cells(p) -> list:
    return [
        f"{p.minutes:f}",
        money(p.cost),
        money(p.now) or "",
        money(p.difference) or "",
        _places(p.processing_hours, 2),
    ]


def choice_cells(choice, group) -> list:
    """CSV_COLUMNS of a candidate row (a queries.tradeoff.Choice), under the results' filter (`group`)."""
    found = choice.latency
    t = choice.transcriber
    return [
        group.label if group else "",
        t.mode,
        choice.measure,
        found.lines if found else 0,
        _places(found.p50_s if found else None),
        _places(found.p95_s if found else None),
        _places(found.mean_s if found else None),
        _places(choice.real_time_factor),
        money(0 if choice.local else t.price_per_minute * 1000),
        t.price_source,
        t.price_date.isoformat() if t.price_date else "",
        money(choice.window_cost),
        money(choice.cost_per_line) or "",
        *_projection_cells(choice.projection),
        "yes" if choice.on_front else "no",
        "",
        "",
        "",
        "",
        "",
    ]


def blank_cells(group) -> list:
    """CSV_COLUMNS of a live row: only the filter."""
    return [group.label if group else ""] + [""] * (len(CSV_COLUMNS) - 1)


def catalogue_cells(entry, p) -> list:
    """CSV_COLUMNS of a catalogue price row: its price and projection, nothing measured."""
    return [
        "",
        entry.mode,
        "",
        "",
        "",
        "",
        "",
        "",
        money(entry.price_per_minute * 1000),
        entry.price_source,
        entry.price_date.isoformat() if entry.price_date else "",
        "",
        "",
        *_projection_cells(p),
        "",
        "",
        "",
        "",
        "",
        "",
    ]


def group_cells(row, summary) -> list:
    """CSV_COLUMNS of a per-tenant or per-assistant row (queries.groups.GroupRow) of one candidate."""
    best = row.best is not None and row.best.pk == summary.candidate
    g = row.group
    return [""] * (len(CSV_COLUMNS) - 5) + [
        g.kind,
        g.id,
        g.name + (f" ({g.tenant_name})" if g.tenant_name else ""),
        row.lines,
        "yes" if best else "no",
    ]
