"""Why candidates fail and how far to trust a lead, as the API shows them: each candidate's confusion pairs, the
expected texts worth checking, and the call-level bootstrap with the planner of more flags (queries.confusion,
queries.reference_check, queries.trust)."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from ..queries.confusion import CandidatePairs
from ..queries.reference_check import ExpectedCheck
from ..queries.trust import Trust
from .refs import FiguresOut, TranscriberRef, figures_out, transcriber_ref

KINDS = Literal["substitution", "deletion", "insertion"]


class PairOut(Schema):
    kind: KINDS
    expected_word: str | None = Field(
        description="The word of the expected text (normalized); null for an insertion."
    )
    heard_word: str | None = Field(description="The word it heard (normalized); null for a deletion.")
    count: int = Field(description="Times in the window's flags and controls.")
    pair: str = Field(
        description='The pair as the turn table\'s `pair` filter takes it: "s:for>four", "d:the>", "i:>uh".'
    )


class CandidatePairsOut(Schema):
    transcriber: TranscriberRef
    errors: int = Field(
        description="Every substitution, deletion and insertion it made in the window (of the kind asked for)."
    )
    pairs: list[PairOut] = Field(
        description="Most frequent first; ties list substitutions first, then by words."
    )


class ConfusionsOut(Schema):
    bank_id: int
    window_days: int
    candidates: list[CandidatePairsOut] = Field(description="In the candidates' order.")


def confusions_out(bank, window_days: int, found: list[CandidatePairs]) -> dict:
    return {
        "bank_id": bank.pk,
        "window_days": window_days,
        "candidates": [
            {
                "transcriber": transcriber_ref(entry.transcriber),
                "errors": entry.errors,
                "pairs": [
                    {
                        "kind": p.kind,
                        "expected_word": p.expected_word or None,
                        "heard_word": p.heard_word or None,
                        "count": p.n,
                        "pair": p.token,
                    }
                    for p in entry.pairs
                ],
            }
            for entry in found
        ],
    }


class AgreementOut(Schema):
    text: str = Field(description="What they agree on, as the first of them wrote it.")
    agreeing: list[str] = Field(
        description='Who agrees: the candidates\' display names, with "live (<name>)" first when the production '
        "transcript agrees too."
    )
    with_production: bool = Field(description="The production transcript agrees as well.")


class EditOut(Schema):
    at: datetime
    by: str | None
    field: Literal["expected_text", "tags", "note"]
    old: str
    new: str


class ContradictionOut(Schema):
    transcriber: str
    wer: float


class ExpectedCheckOut(Schema):
    flag_id: int
    control_id: int | None = Field(
        description="A control line of the flag: its expected text is its production transcript (flag the line to "
        "type what was said); null for the flagged line itself."
    )
    contradicted_by: list[ContradictionOut] = Field(
        description="Where every candidate contradicts the expected text badly (a WER of 1 or more each): each "
        "one's WER; empty otherwise."
    )
    line_id: int
    call_id: int
    expected_text: str
    production_text: str
    joined_at: datetime
    agreements: list[AgreementOut]
    flagged_by: str | None = Field(
        description="Who made the flag (a user name, or an API key); null if unknown."
    )
    typed_by: str | None = Field(description="Who typed the current expected text; null if unknown.")
    history: list[EditOut] = Field(
        description="The flag's latest edits (at most five), oldest first: GET /flags/{flag_id}/history has all."
    )
    history_count: int = Field(description="How many edits the flag has had in all.")


def expected_check_out(c: ExpectedCheck) -> dict:
    return {
        "flag_id": c.flag_id,
        "control_id": c.control_id,
        "contradicted_by": [{"transcriber": name, "wer": wer} for name, wer in c.contradicted_by],
        "line_id": c.line_id,
        "call_id": c.call_id,
        "expected_text": c.expected_text,
        "production_text": c.live_text,
        "joined_at": c.joined_at,
        "agreements": [
            {"text": a.text, "agreeing": a.who, "with_production": a.with_live} for a in c.agreements
        ],
        "flagged_by": c.history.flagged_by or None,
        "typed_by": c.typed_by or None,
        "history": [
            {"at": e.at, "by": e.by or None, "field": e.field, "old": e.old, "new": e.new}
            for e in c.history.edits
        ],
        "history_count": c.history.count,
    }


class BootstrapOut(Schema):
    estimate: float | None = Field(description="The figure on the window's calls as they are.")
    low: float | None = Field(description="95% percentile interval, calls resampled whole.")
    high: float | None
    calls: int = Field(description="Calls resampled (a call: its flags that joined the bank on one day).")


class TrustRowOut(Schema):
    transcriber: TranscriberRef
    wilson_low: float | None = Field(
        description="95% Wilson interval of the accuracy, lines counted on their own."
    )
    wilson_high: float | None
    calls: BootstrapOut = Field(description="Its accuracy, bootstrapped over calls.")


class PlanOut(Schema):
    state: Literal["clear", "needs", "too_close", "nothing"] = Field(
        description="clear: the lead is already clear; needs: about `flags` more flags; too_close: not within "
        "`limit` more flags at the current rates; nothing: no lines to estimate from."
    )
    flags: int | None = Field(description="More flags (each with the bank's controls) for state needs.")
    flags_about: int | None = Field(description="`flags` as the page says it: exact to 100, then 2 figures.")
    power: float | None = Field(
        description="The chance the lead is clear after `flags` (or `limit`) more flags."
    )
    target_power: float
    alpha: float
    items_per_flag: int = Field(description="Lines a flag brings: itself and the bank's control lines.")
    leader_only_rate: float | None = Field(
        description="Share of the lines both scored that only the leader got right."
    )
    runner_up_only_rate: float | None
    limit: int
    method: Literal["exact"] = Field(
        description="The McNemar test's power is computed exactly, not simulated."
    )


class ModeDifferenceOut(Schema):
    streaming: TranscriberRef = Field(description="The model's streaming candidate.")
    batch: TranscriberRef = Field(description="The same provider and model, replayed in batch.")
    lines_both_scored: int
    streaming_only_right: int
    batch_only_right: int
    difference: float | None = Field(
        description="The streaming candidate's accuracy less the batch one's on the lines both scored; null with "
        "none."
    )
    lines_low: float | None = Field(description="95% percentile interval of the difference, lines resampled.")
    lines_high: float | None
    calls: BootstrapOut = Field(description="The difference, calls resampled whole.")
    mcnemar_p: float = Field(description="Exact McNemar test of the two modes on the lines both scored.")


class TrustOut(Schema):
    bank_id: int
    window_days: int
    resamples: int
    seed: int
    candidates: list[TrustRowOut]
    leader_id: int | None
    runner_up_id: int | None
    lead: BootstrapOut | None = Field(
        description="The leader's accuracy less the runner-up's on the lines both scored, calls resampled."
    )
    mcnemar_p: float | None = Field(
        description="The exact McNemar test of the lead, lines counted on their own."
    )
    mcnemar_clear: bool | None
    disagreement: str = Field(
        description='Where the call-level figures and the line-level ones disagree, and why; "" when they agree.'
    )
    lines: int = Field(description="Lines (flags and controls) of the window.")
    lines_both_scored: int = Field(
        description="Lines both the leader and the runner-up scored, that the plan's rates are per."
    )
    pending: int = Field(
        description="The bank's line transcriptions still waiting when these figures were computed; while any "
        "are, the plan is provisional."
    )
    more_flags: PlanOut | None = Field(description="How many more flags would make the lead clear.")
    figures: FiguresOut = Field(description="How new these figures are.")
    provisional: bool = Field(
        description="The leader rests on too few lines to trust, whatever the tests say (the results' rule): the "
        "verdict every screen gives first."
    )
    modes: list[ModeDifferenceOut] = Field(
        [],
        description="Each model the bank holds in both modes (same provider and model, streaming and batch): the "
        "paired difference in accuracy between the two.",
    )


def _bootstrap(b) -> dict | None:
    if b is None:
        return None
    return {"estimate": b.estimate, "low": b.low, "high": b.high, "calls": b.calls}


def trust_out(bank, t: Trust, about, figures) -> dict:
    """The trust figures of a snapshot (`figures`: snapshots.Read, whose data holds `t`)."""
    plan = t.plan
    return {
        "figures": figures_out(figures),
        "provisional": t.provisional,
        "bank_id": bank.pk,
        "window_days": t.window_days,
        "resamples": t.resamples,
        "seed": t.seed,
        "candidates": [
            {
                "transcriber": transcriber_ref(row.transcriber),
                "wilson_low": row.wilson[0] if row.wilson else None,
                "wilson_high": row.wilson[1] if row.wilson else None,
                "calls": _bootstrap(row.calls),
            }
            for row in t.rows
        ],
        "modes": [
            {
                "streaming": transcriber_ref(m.streaming),
                "batch": transcriber_ref(m.batch),
                "lines_both_scored": m.difference.both,
                "streaming_only_right": m.difference.first_only,
                "batch_only_right": m.difference.second_only,
                "difference": m.difference.estimate,
                "lines_low": m.difference.lines.low,
                "lines_high": m.difference.lines.high,
                "calls": _bootstrap(m.difference.calls),
                "mcnemar_p": m.difference.p_value,
            }
            for m in t.modes
        ],
        "leader_id": t.leader.pk if t.leader else None,
        "runner_up_id": t.runner_up.pk if t.runner_up else None,
        "lead": _bootstrap(t.lead_calls),
        "mcnemar_p": t.lead.p_value if t.lead else None,
        "mcnemar_clear": t.lead.clear if t.lead else None,
        "disagreement": t.sentence,
        "lines": t.items,
        "lines_both_scored": t.plan_lines,
        "pending": t.pending,
        "more_flags": None
        if plan is None
        else {
            "state": plan.state,
            "flags": plan.flags,
            "flags_about": about(plan.flags) if plan.flags is not None else None,
            "power": plan.power,
            "target_power": plan.target,
            "alpha": plan.alpha,
            "items_per_flag": plan.items_per_flag,
            "leader_only_rate": plan.leader_only_rate,
            "runner_up_only_rate": plan.runner_up_only_rate,
            "limit": plan.limit,
            "method": plan.method,
        },
    }
