"""How far to trust a bank's lead over a window: each candidate's accuracy and the leader's lead over the
runner-up with call-level bootstrap intervals (lib/trust.py: calls resampled whole, 10,000 times, seeded),
beside the Wilson intervals and the exact McNemar test of the results cards; a sentence where the two disagree;
about how many more flags would make the lead clear; and, for a model the bank holds in both modes, the
streaming candidate's accuracy less the batch one's on the lines both scored, lines and calls resampled. Read
from the per-day totals (aggregates.detail: a few rows per candidate, day and kind of call, whatever the bank's
size) and cached with the results until the bank's results change. The results page loads it after the page (the bootstrap takes tens of milliseconds), the
API serves it on its own."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Sum

from oncore.transcribers.models import Transcriber

from ..lib import scoring
from ..lib import trust as lib_trust
from ..models import Bank, CallPairTotal, CallTotal
from . import totals
from .cached import cached
from .results import RESULTS_CACHE_SECONDS, BankResults, bank_results
from .window import clamp_window, period_bounds


@dataclass(frozen=True)
class TrustRow:
    transcriber: object
    wilson: tuple[float, float] | None
    calls: lib_trust.Bootstrap
    scored: int = 0  # its scored lines of the window


@dataclass(frozen=True)
class ModePair:
    """A model the bank holds in both modes: its streaming candidate's accuracy less its batch candidate's on the
    lines both scored (lib_trust.PairedDifference)."""

    streaming: object  # transcriber
    batch: object
    difference: lib_trust.PairedDifference


@dataclass(frozen=True)
class Trust:
    window_days: int
    rows: list  # TrustRow per candidate, in the bank's order
    leader: object | None  # transcriber
    runner_up: object | None
    lead: object | None  # scoring.LeadTest of the results
    lead_calls: lib_trust.Bootstrap | None  # the leader's accuracy less the runner-up's, calls resampled
    plan: lib_trust.FlagPlan | None
    sentence: str  # where the call-level and the line-level figures disagree, and why; "" when they agree
    items: int  # items (flags and controls) in the window
    controls_per_flag: int
    plan_lines: int = 0  # lines both the leader and the runner-up scored: the plan's rates are per these
    pending: int = (
        0  # the bank's line transcriptions waiting when these figures were computed: the plan is provisional
    )
    # The leader rests on too few lines to trust whatever the tests say (the results' rule, scoring.TRUST_RULE):
    # the one verdict every page gives first.
    provisional: bool = False
    leader_scored: int = 0
    resamples: int = lib_trust.RESAMPLES
    seed: int = lib_trust.SEED
    trust_rule: str = scoring.TRUST_RULE
    modes: tuple = ()  # ModePair per model the bank holds in both modes

    @property
    def scored(self) -> dict:
        """{transcriber id: its scored lines of the window}."""
        return {row.transcriber.pk: row.scored for row in self.rows}


def _histograms(bank_id: int, since, until, transcriber_ids) -> dict[int, list]:
    rows = CallTotal.objects.filter(
        bank_id=bank_id, day__gte=since.date(), transcriber_id__in=transcriber_ids
    )
    if until is not None:
        rows = rows.filter(day__lt=until.date())
    found = defaultdict(list)
    for tid, scored, matches, calls in (
        rows.values("transcriber_id", "scored", "matches")
        .annotate(n=Sum("calls"))
        .values_list("transcriber_id", "scored", "matches", "n")
    ):
        if calls:
            found[tid].append((scored, matches, int(calls)))
    return found


def _pair_histogram(bank_id: int, since, until, leader_id: int, runner_up_id: int) -> list:
    """(both scored, only the leader right, only the runner-up right, calls) of the window's calls."""
    low, high = sorted((leader_id, runner_up_id))
    rows = CallPairTotal.objects.filter(bank_id=bank_id, low_id=low, high_id=high, day__gte=since.date())
    if until is not None:
        rows = rows.filter(day__lt=until.date())
    out = []
    for both, low_only, high_only, calls in (
        rows.values("both", "low_only", "high_only")
        .annotate(n=Sum("calls"))
        .values_list("both", "low_only", "high_only", "n")
    ):
        if calls:
            lo, ro = (low_only, high_only) if leader_id == low else (high_only, low_only)
            out.append((both, lo, ro, int(calls)))
    return out


def mode_pairs(transcribers) -> list[tuple]:
    """(streaming, batch) candidates that run the same provider and model in the two modes, in the bank's
    order."""
    batch = [t for t in transcribers if t.mode == Transcriber.BATCH]
    return [
        (s, b)
        for s in transcribers
        if s.mode == Transcriber.STREAMING
        for b in batch
        if (b.provider, b.model) == (s.provider, s.model)
    ]


def _mode_pair(bank_id: int, since, until, streaming, batch) -> ModePair:
    both, s_only, b_only = totals.pair_counts(bank_id, since, until, streaming.pk, batch.pk)
    calls = _pair_histogram(bank_id, since, until, streaming.pk, batch.pk)
    return ModePair(streaming, batch, lib_trust.paired_difference(both, s_only, b_only, calls))


def _compute(bank: Bank, r: BankResults) -> Trust:
    since, until = period_bounds(r.window_days, r.date_from, r.date_to, bank.organization.zone)
    ids = [card.transcriber.pk for card in r.cards]
    histograms = _histograms(bank.pk, since, until, ids)
    rows = [
        TrustRow(
            card.transcriber,
            card.interval,
            lib_trust.accuracy_bootstrap(histograms.get(card.transcriber.pk, [])),
            card.summary.scored,
        )
        for card in r.cards
    ]
    by_id = {row.transcriber.pk: row for row in rows}
    items = totals.item_count(bank.pk, since, until)
    lead_calls = plan = None
    plan_lines = r.lead.both_scored if r.lead is not None else 0
    if r.lead is not None and r.leader is not None and r.runner_up is not None:
        leader_id, runner_up_id = r.leader.transcriber.pk, r.runner_up.transcriber.pk
        lead_calls = lib_trust.lead_bootstrap(_pair_histogram(bank.pk, since, until, leader_id, runner_up_id))
        # The rates over the lines both scored (those McNemar counts), not over every line of the window: a line
        # still waiting for one of them is neither's yet.
        plan = lib_trust.flags_needed(
            r.lead.leader_only_right, r.lead.runner_up_only_right, plan_lines, bank.controls_per_flag
        )
    leader_row = by_id.get(r.leader.transcriber.pk) if r.leader else None
    sentence = lib_trust.disagreement(
        r.lead,
        lead_calls,
        leader_row.wilson if leader_row else None,
        leader_row.calls if leader_row else None,
    )
    return Trust(
        r.window_days,
        rows,
        r.leader.transcriber if r.leader else None,
        r.runner_up.transcriber if r.runner_up else None,
        r.lead,
        lead_calls,
        plan,
        sentence,
        items,
        bank.controls_per_flag,
        plan_lines,
        r.pending,
        r.provisional,
        r.leader.summary.scored if r.leader else 0,
        modes=tuple(
            _mode_pair(bank.pk, since, until, s, b)
            for s, b in mode_pairs([card.transcriber for card in r.cards])
        ),
    )


def bank_trust(bank: Bank, window_days: int) -> Trust:
    """The trust figures of the bank's results over the window, cached as the results are (until the bank's
    results change, or a minute): the seeded bootstrap gives the same figures on every reload anyway."""
    window_days = clamp_window(window_days)
    return cached(
        "bank-trust",
        (bank.pk, window_days, bank.controls_per_flag, bank.results_changed_at.isoformat()),
        RESULTS_CACHE_SECONDS,
        lambda: _compute(bank, bank_results(bank, window_days)),
    )
