"""Choosing a transcriber the way voice-agent teams choose: each candidate's accuracy (the results' cards) beside
its latency (p50 and p95 with n, the real-time factor of a local engine), its cost (the catalogue price per 1,000
minutes with its source and date, the cost per scored line, and what switching to it would cost a month at the
organization's volume, beside what the calls cost now), the picture of accuracy against p95 latency with the
Pareto front, and the catalogue's other priced entries at the same volume (prices only: never called on these
lines). A streaming candidate's latency is its time to final (from the end of the caller's speech to the final
text) and reads so wherever it is shown. Read from the per-day totals and the cached call volume (queries.cost):
a few queries whatever the bank's size; cached with the results."""

from dataclasses import dataclass, replace
from decimal import Decimal

from django.db.models import Q, Sum

from oncore.templatetags.oncore_tags import dollars
from oncore.transcribers.models import Transcriber

from ..lib import tradeoff as lib_tradeoff
from ..lib.charts import TradeoffChart, tradeoff_chart
from ..models import GroupTotal, Score, ScoreTotal
from ..models.totals import MICROS
from . import cost, latency, pacing
from .cached import cached
from .window import period_bounds

CACHE_SECONDS = 60  # as the results cards (queries.results.RESULTS_CACHE_SECONDS), whose key it shares

LATENCY_MEANING = (
    "A batch candidate's latency is the time from sending a line's clip to its text. A streaming candidate is "
    "replayed as a live call (the clip in 20 ms frames paced in real time), and its figure is its time to final: "
    "from the end of the caller's speech to the final text. Both are measured on this server, network included "
    "for a vendor: not the vendor's latency from your callers' region."
)
LEFT_OFF_CHART = "no latency measured yet"
STREAMING_LEFT_OFF_CHART = "no time to final measured yet"


def measure_of(transcriber) -> str:
    """What a candidate's latency figures are, as a person reads them: "time to final" (streaming) or "latency"."""
    return latency.TIME_TO_FINAL if transcriber.mode == Transcriber.STREAMING else latency.LATENCY


@dataclass(frozen=True)
class Choice:
    """One candidate's figures beside its accuracy."""

    transcriber: object
    summary: object  # scoring.CandidateSummary of the results' card
    latency: lib_tradeoff.Latency | None
    local: bool
    window_cost: Decimal  # its audio cost on the window's scored items
    cost_per_line: Decimal | None  # window_cost / scored lines; None with none scored
    projection: lib_tradeoff.Projection
    on_front: bool
    is_leader: bool
    pacing: object | None = None  # queries.pacing.Pacing of a streaming candidate's replays; None for batch

    # what tradeoff_chart reads
    @property
    def key(self):
        return self.transcriber.pk

    @property
    def accuracy(self):
        return self.summary.accuracy

    @property
    def p95_s(self):
        return self.latency.p95_s if self.latency else None

    @property
    def label(self) -> str:
        """The longest line of its label on the chart (its name, with ★ on the front)."""
        return f"★ {self.transcriber.display_name}"

    @property
    def charted(self) -> bool:
        return self.summary.accuracy is not None and self.latency is not None

    @property
    def off_schedule(self) -> str:
        """Beside a streaming candidate's time to final when its replays were paced off schedule: why the figure is
        not a live call's; "" when they were on schedule (or it is a batch candidate)."""
        return self.pacing.words if self.latency and self.pacing and self.pacing.off else ""

    @property
    def streaming(self) -> bool:
        return self.transcriber.mode == Transcriber.STREAMING

    @property
    def first_partial(self) -> lib_tradeoff.Latency | None:
        """A streaming candidate's time to first partial; None for a batch one or before one is measured."""
        return self.pacing.first_partial if self.streaming and self.pacing else None

    @property
    def stability_words(self) -> str:
        """A streaming candidate's partial stability as a person reads it ("0.4 revisions per line; 3 of 40 finals
        (7.5%) differ from the last partial shown"); "" before a replay recorded it."""
        paced = self.pacing if self.streaming else None
        if not paced or not paced.stable_lines:
            return ""
        said = f"{paced.revisions_per_line:.1f} revisions per line"
        if paced.final_segments:
            said += (
                f"; {paced.finals_revised:,} of {paced.final_segments:,} finals "
                f"({paced.finals_revised_share:.1%}) differ from the last partial shown"
            )
        return said

    @property
    def measure(self) -> str:
        """ "time to final" (a streaming candidate) or "latency" (a batch one)."""
        return measure_of(self.transcriber)

    @property
    def heading(self) -> str:
        return self.measure[:1].upper() + self.measure[1:]

    @property
    def real_time_factor(self) -> float | None:
        """Processing seconds per audio second: a local batch engine's (a vendor's latency includes the network; a
        streaming session lasts as long as its audio)."""
        return self.latency.real_time_factor if self.local and self.latency and not self.streaming else None

    @property
    def price_words(self) -> str:
        return price_words(self.transcriber)

    @property
    def switch_words(self) -> str:
        return switch_words(self.transcriber, self.projection)

    @property
    def chart_label(self) -> str:
        """The cost beside the point: its price per 1,000 minutes, or free."""
        if self.local:
            return "free (local)"
        return f"{dollars(self.projection.price_per_minute * 1000)}/1,000 min"


@dataclass(frozen=True)
class Tradeoff:
    choices: list  # Choice, in the candidates' order
    chart: TradeoffChart
    volume: cost.Volume
    catalogue: list  # (transcriber, lib_tradeoff.Projection): priced entries not in the bank, cheapest first
    resolution: str = lib_tradeoff.RESOLUTION_WORDS
    latency_meaning: str = LATENCY_MEANING

    @property
    def by_id(self) -> dict:
        """{transcriber id: Choice}: what each results card looks up."""
        return {c.key: c for c in self.choices}

    @property
    def charted(self) -> list:
        return [c for c in self.choices if c.charted]

    @property
    def left_off(self) -> list:
        """Candidates not on the chart, each with why."""
        return [
            (
                c,
                "nothing scored"
                if c.summary.accuracy is None
                else (STREAMING_LEFT_OFF_CHART if c.streaming else LEFT_OFF_CHART),
            )
            for c in self.choices
            if not c.charted
        ]

    @property
    def modes(self) -> set:
        return {c.transcriber.mode for c in self.choices}

    @property
    def axis_measure(self) -> str:
        """What the chart's x axis measures: "latency", "time to final", or both for a mixed bank."""
        measures = {c.measure for c in self.charted}
        if measures == {latency.TIME_TO_FINAL}:
            return latency.TIME_TO_FINAL
        if latency.TIME_TO_FINAL in measures:
            return "latency or time to final (streaming)"
        return latency.LATENCY

    @property
    def front(self) -> list:
        return [c for c in self.choices if c.on_front]


def price_words(transcriber) -> str:
    """The catalogue price as pages compare vendors: "$4.30 per 1,000 min", or "free (runs on this server)"."""
    if cost.is_local(transcriber) or not transcriber.price_per_minute:
        return "free (runs on this server)"
    return f"{dollars(Decimal(str(transcriber.price_per_minute)) * 1000)} per 1,000 min"


def switch_words(transcriber, p: lib_tradeoff.Projection) -> str:
    """ "Switching to X: about $Y a month at your last 30 days' volume (Z minutes), $W more than now." A local
    engine says it is free, with the hours it would run here at its real-time factor; a local streaming engine
    listens as long as the calls last."""
    volume = f"your last {cost.VOLUME_DAYS} days' volume ({lib_tradeoff.minutes_words(p.minutes)})"
    name = transcriber.display_name
    if p.local and transcriber.mode == Transcriber.STREAMING:
        hours = p.minutes / 60
        return (
            f"Switching to {name}: free (runs on this server), streaming: it listens for as long as the calls last, "
            f"{lib_tradeoff.about_hours(hours)} of sessions a month at {volume}."
        )
    if p.local:
        hours = p.processing_hours
        run = (
            f", real-time factor {p.real_time_factor:.2f}: {lib_tradeoff.about_hours(hours)} of processing a month "
            f"at {volume}"
            if hours is not None
            else f" at {volume}; its real-time factor is not measured yet"
        )
        return f"Switching to {name}: free (runs on this server){run}."
    amount = dollars(p.cost)
    sentence = f"Switching to {name}: {amount if amount.startswith('under') else 'about ' + amount} a month at {volume}"
    if p.difference is None:
        rest = (
            f"{lib_tradeoff.minutes_words(p.unpriced_minutes)} ran on a live transcriber that is not in the catalogue (named "
            "on the calls only)"
        )
        known = p.known_difference
        if known is None:
            return f"{sentence}; what it costs now is not known: {rest}."
        said = (
            "the same as now"
            if known == 0
            else f"{dollars(abs(known))} {'more' if known > 0 else 'less'} than now"
        )
        return f"{sentence}: on the {lib_tradeoff.minutes_words(p.priced_minutes)} whose cost now is known, {said}; the other {rest}."
    if p.difference == 0:
        return f"{sentence}, the same as now."
    more = "more" if p.difference > 0 else "less"
    return f"{sentence}, {dollars(abs(p.difference))} {more} than now."


def _window_costs(bank, results) -> dict:
    """{candidate's transcriber id: its audio cost on the window's items} (of the group's calls, under a filter):
    one query of the per-day totals."""
    since, until = period_bounds(
        results.window_days, results.date_from, results.date_to, bank.organization.zone
    )
    days = Q(day__gte=since.date()) & (Q(day__lt=until.date()) if until else Q())
    if results.group is not None:
        qs = results.group.rows(GroupTotal.objects.filter(bank_id=bank.pk))
    else:
        qs = ScoreTotal.objects.filter(bank_id=bank.pk)
    rows = qs.filter(days, source=Score.CANDIDATE).values("transcriber_id").annotate(c=Sum("cost_micros"))
    return {r["transcriber_id"]: Decimal(int(r["c"] or 0)) / MICROS for r in rows}


def _figures(bank, results) -> tuple[dict, dict, dict]:
    """(latencies, window costs, streaming pacing) of the results' candidates, cached as the results are."""
    group = results.group.key if results.group else ""
    parts = (
        bank.pk,
        results.window_days,
        results.date_from,
        results.date_to,
        group,
        bank.results_changed_at.isoformat(),
    )
    return cached("bank-tradeoff", parts, CACHE_SECONDS, lambda: _compute_figures(bank, results))


def _compute_figures(bank, results) -> tuple[dict, dict, dict]:
    since, until = period_bounds(
        results.window_days, results.date_from, results.date_to, bank.organization.zone
    )
    streaming = [c.transcriber.pk for c in results.cards if c.transcriber.mode == Transcriber.STREAMING]
    return (
        latency.latencies(bank.pk, since, until, results.group),
        _window_costs(bank, results),
        pacing.pacing(bank, since, until, streaming, results.group)
        if streaming
        else {},  # streaming ones' only
    )


def bank_tradeoff(bank, results) -> Tradeoff:
    """The trade-off of the results' candidates (queries.bank_results, filtered or not), with the organization's
    volume (the group's, under a filter)."""
    latencies, window_costs, paced = _figures(bank, results)
    volume = cost.call_volume(bank.organization, results.group)
    choices = []
    for card in results.cards:
        t, s = card.transcriber, card.summary
        found = latencies.get(t.pk)
        local = cost.is_local(t)
        spent = window_costs.get(t.pk, Decimal(0))
        choices.append(
            Choice(
                transcriber=t,
                summary=s,
                latency=found,
                local=local,
                window_cost=spent,
                cost_per_line=(spent / s.scored).quantize(lib_tradeoff.MONEY_PLACES) if s.scored else None,
                projection=cost.projection_of(t, volume, found.real_time_factor if found else None),
                on_front=False,
                is_leader=card.is_leader,
                pacing=paced.get(t.pk),
            )
        )
    front = lib_tradeoff.pareto_front([(c.key, c.accuracy, c.p95_s) for c in choices])
    choices = [replace(c, on_front=c.key in front) for c in choices]
    chart = tradeoff_chart([c for c in choices if c.charted], front)
    catalogue = cost.catalogue_prices(volume, [c.key for c in choices])
    return Tradeoff(choices, chart, volume, catalogue)
