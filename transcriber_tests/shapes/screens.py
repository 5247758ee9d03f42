"""The dashboard's screens that the API shows as they are: the banks' leaderboard (queries.leaderboard), a bank's
weekly trend, accuracy per error tag and per language (queries.bank_trends, bank_tags, bank_language_wer, as the
results page reads them) and a flag's results per candidate (queries.flag_results, as the call page polls them)."""

from datetime import date
from typing import Literal

from ninja import Field, Schema

from ..lib import scoring
from ..lib.cells import ScoreCell
from ..queries.tradeoff import switch_words
from .banks import (
    Interval,
    LeadParts,
    LeadTestOut,
    OwnEntitiesOut,
    interval_out,
    own_entities_out,
    summary_fields,
)
from .refs import TranscriberRef, transcriber_ref
from .tradeoff import LatencyOut, ProjectionOut, latency_fields, projection_out
from .turns import Cell, PickOut, cell_out, pick_out


class LeaderSummary(LeadParts):
    scored: int = Field(description="Lines the leader scored in the window (flags and controls).")
    matches: int
    failed: int
    accuracy: float | None
    mean_wer: float | None
    interval: Interval | None = Field(description="95% Wilson interval of the accuracy.")
    provisional: bool = Field(
        description=f"Too few lines to trust the leader yet: it needs {scoring.TRUST_RULE}."
    )
    lead_from: Literal["flags", "controls"] | None = Field(
        description="Which part alone carries the lead over the runner-up; null when both do, or no runner-up."
    )
    production_model: bool = Field(
        description="The leader runs the production transcriber's own provider and model."
    )


class AllFailed(Schema):
    transcriber: TranscriberRef
    failed: int = Field(description="Lines it failed on in the window: every line it was given.")


class BoardRowOut(Schema):
    bank_id: int
    bank_name: str
    threshold: float
    candidates: int
    flags: int = Field(description="Flags in the bank, any day.")
    window_flags: int = Field(description="Flags that joined the bank in the window.")
    leader: TranscriberRef | None = Field(
        description="The leader over the window; null when nothing is scored."
    )
    leader_summary: LeaderSummary | None
    leader_entities: OwnEntitiesOut | None = Field(
        description="The leader's entities right on the bank's own lines over the window, as the bank's results "
        "were last computed for it (GET /banks/{bank_id}/results computes them); null without a leader, or before "
        "they were computed for this window. Added in 2.1.0."
    )
    clears_threshold: bool
    runner_up: TranscriberRef | None
    lead_test: LeadTestOut | None = Field(description="Exact McNemar of the leader against the runner-up.")
    pending: int = Field(description="Transcriptions of the bank still queued or running.")
    all_failed: list[AllFailed] = Field(
        description="Candidates whose every line in the window failed (why: GET /banks/{bank_id}/results)."
    )
    leader_latency: LatencyOut | None = Field(
        description="The leader's latency over the window (p50, p95, n); null without a leader or a measured line."
    )
    leader_monthly: ProjectionOut | None = Field(
        description="What switching to the leader would cost a month at the organization's last 30 days' volume, "
        "against what its calls cost now; null without a leader."
    )


class LeaderboardOut(Schema):
    window_days: int
    first_day: date = Field(description="The window's first day, in the organization's timezone.")
    last_day: date = Field(description="Its last day (today), in the organization's timezone.")
    timezone: str = Field(description="The organization's timezone, whose days these are.")
    trust_rule: str = Field(description="When a leader stops being provisional.")
    items: list[BoardRowOut] = Field(description="Every bank, by name.")


def _lead(lead, runner_up_id) -> dict | None:
    if lead is None:
        return None
    return {
        "runner_up_id": runner_up_id,
        "both_scored": lead.both_scored,
        "leader_only_right": lead.leader_only_right,
        "runner_up_only_right": lead.runner_up_only_right,
        "p_value": lead.p_value,
        "clear": lead.clear,
    }


def leaderboard_out(board, window_days: int, days, zone: str) -> dict:
    """The banks screen (queries.leaderboard) with its window's days (queries.window_days_covered)."""
    items = []
    for row in board:
        s = row.summary
        items.append(
            {
                "bank_id": row.bank.pk,
                "bank_name": row.bank.name,
                "threshold": float(row.bank.threshold),
                "candidates": row.bank.n_candidates,
                "flags": row.bank.n_flags,
                "window_flags": row.bank.n_window,
                "leader": transcriber_ref(row.leader),
                "leader_summary": {
                    **summary_fields(s, row.interval),
                    "provisional": row.provisional,
                    "lead_from": row.lead_from or None,
                    "production_model": row.live_model,
                }
                if row.leader is not None and s is not None
                else None,
                "leader_entities": own_entities_out(row.entities),
                "clears_threshold": row.clears_threshold,
                "runner_up": transcriber_ref(row.runner_up),
                "lead_test": _lead(row.lead, row.runner_up.pk if row.runner_up else None),
                "pending": row.pending,
                "all_failed": [{"transcriber": transcriber_ref(t), "failed": n} for t, n in row.all_failed],
                "leader_latency": latency_fields(row.latency, row.local),
                "leader_monthly": projection_out(row.projection, switch_words(row.leader, row.projection))
                if row.projection is not None
                else None,
            }
        )
    return {
        "window_days": window_days,
        "first_day": days[0],
        "last_day": days[1],
        "timezone": zone,
        "trust_rule": scoring.TRUST_RULE,
        "items": items,
    }


# ---------------------------------------------------------------- a bank's trend, tags and languages


class WeekOut(Schema):
    first_day: date
    last_day: date = Field(description="Seven days first_day..last_day, both included.")
    scored: int
    matches: int
    accuracy: float | None
    interval: Interval | None


class TrendOut(Schema):
    transcriber: TranscriberRef
    scored: int = Field(description="Lines scored over all the weeks.")
    weeks: list[WeekOut] = Field(description="Oldest first, the last week ending today.")


class TrendsOut(Schema):
    bank_id: int
    window_days: int
    threshold: float
    candidates: list[TrendOut] = Field(description="One per candidate, in the candidates' order.")


def trends_out(bank, window_days: int, trends) -> dict:
    return {
        "bank_id": bank.pk,
        "window_days": window_days,
        "threshold": float(bank.threshold),
        "candidates": [
            {
                "transcriber": transcriber_ref(t.transcriber),
                "scored": t.scored,
                "weeks": [
                    {
                        "first_day": w.first_day,
                        "last_day": w.last_day,
                        "scored": w.scored,
                        "matches": w.matches,
                        "accuracy": w.accuracy,
                        "interval": interval_out(w.interval),
                    }
                    for w in t.weeks
                ],
            }
            for t in trends
        ],
    }


class TagCell(Schema):
    transcriber_id: int
    scored: int
    matches: int
    failed: int
    accuracy: float | None
    mean_wer: float | None


class TagRowOut(Schema):
    tag: str
    flags: int = Field(description="Flags in the window carrying this tag.")
    cells: list[TagCell] = Field(description="One per candidate, in the candidates' order.")
    best_id: int | None = Field(
        description="The best candidate on the tag (ties: lower mean WER, then listed first); null when none got "
        "a line right."
    )


class TagsOut(Schema):
    bank_id: int
    window_days: int
    candidates: list[TranscriberRef]
    tags: list[TagRowOut] = Field(
        description="The standard tags (name, time, spelling) used in the window, then the most used others; "
        "at most 12. Control lines carry no tags."
    )


def tags_out(bank, window_days: int, table) -> dict:
    return {
        "bank_id": bank.pk,
        "window_days": window_days,
        "candidates": [transcriber_ref(t) for t in table.candidates],
        "tags": [
            {
                "tag": row.tag,
                "flags": row.flags,
                "cells": [
                    {
                        "transcriber_id": int(c.candidate),
                        "scored": c.scored,
                        "matches": c.matches,
                        "failed": c.failed,
                        "accuracy": c.accuracy,
                        "mean_wer": c.mean_wer,
                    }
                    for c in row.cells
                ],
                "best_id": row.best.pk if row.best else None,
            }
            for row in table.rows
        ],
    }


class LanguageOut(Schema):
    language: str = Field(description="ISO 639-1 code, e.g. en, fr.")
    wer: float = Field(description="Word error rate on the words of this language, pooled over the lines.")
    words: int = Field(description="Expected words in this language.")


class LanguagesOut(Schema):
    bank_id: int
    window_days: int
    transcriber: TranscriberRef | None = Field(
        description="Whose text is scored: the leader unless `transcriber_id` named another; null with no leader."
    )
    languages: list[str] = Field(description="The languages the window's flagged lines span (detected).")
    applies: bool = Field(
        description="false when the lines span fewer than two languages: no breakdown then."
    )
    items: list[LanguageOut]


def languages_out(bank, window_days: int, transcriber, languages, figures) -> dict:
    return {
        "bank_id": bank.pk,
        "window_days": window_days,
        "transcriber": transcriber_ref(transcriber),
        "languages": list(languages),
        "applies": figures is not None,
        "items": [
            {"language": lang, "wer": wer, "words": words}
            for lang, (wer, words) in sorted((figures or {}).items())
        ],
    }


# ---------------------------------------------------------------- a flag's results


class FlagCell(Cell):
    state: Literal["pending", "done", "failed"] = Field(
        description="pending (queued or running), done or failed."
    )
    reason: str = Field(description="Why it failed, where known (the engine's error); empty otherwise.")
    picked: bool = Field(description="The judge chose its version among the candidates that matched.")


class FlagItemOut(Schema):
    line_id: int
    control_id: int | None = Field(description="Set on a control line; null on the flagged line itself.")
    expected_text: str
    cells: list[FlagCell] = Field(description="One per candidate, in the candidates' order.")
    judge_pick: PickOut | None


class FlagResultsOut(Schema):
    flag_id: int
    bank_id: int | None = Field(
        description="Null when the flag is in no bank: it has no candidates, no results."
    )
    pending: bool = Field(
        description="Some candidate has not finished: poll again (or wait for flag.scored)."
    )
    items: list[FlagItemOut] = Field(
        description="The flagged line first, then its control lines in line order."
    )


def _flag_cell(cell) -> dict:
    score: ScoreCell = cell.score
    return {
        **cell_out(cell.transcriber.pk, score),
        "state": cell.state,
        "reason": cell.reason or "",
        "picked": cell.picked,
    }


def flag_results_out(flag, found) -> dict:
    """A flag's results (queries.flag_results); `found` is None for a flag in no bank."""
    items = []
    for item in found.items if found else []:
        items.append(
            {
                "line_id": item.line.pk,
                "control_id": item.control.pk if item.control else None,
                "expected_text": item.expected_text,
                "cells": [_flag_cell(c) for c in item.cells],
                "judge_pick": pick_out(item.pick),
            }
        )
    return {
        "flag_id": flag.pk,
        "bank_id": flag.bank_id,
        "pending": bool(found and found.pending),
        "items": items,
    }
