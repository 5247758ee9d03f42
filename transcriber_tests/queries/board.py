"""The banks screen (the leaderboard) and the lists of banks and candidates: each bank's leader over the window,
in a fixed number of queries whatever the number of banks."""

from collections import defaultdict
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, OuterRef, Prefetch, Sum

from ..lib import scoring
from ..lib import tradeoff as lib_tradeoff
from ..models import Bank, Candidate, ControlLine, Flag, PairTotal, Score, ScoreTotal, Transcription
from . import cost, latency, totals
from .window import clamp_window, window_start


def banks_list(organization):
    """The organization's banks by name, each with its number of flags (from the per-day totals) and of
    candidates."""
    return (
        Bank.objects.filter(organization=organization)
        .annotate(n_flags=totals.flags_in(OuterRef("pk")), n_candidates=Count("candidates", distinct=True))
        .order_by("name", "id")
    )


def banks_of(organization):
    """The organization's banks as the API shows them (shapes.banks.bank_out): with their counts and their
    candidates in order."""
    ordered = Candidate.objects.select_related("transcriber").order_by("position")
    return banks_list(organization).prefetch_related(Prefetch("candidates", queryset=ordered))


def candidates_of(bank: Bank):
    """The bank's candidates in their order, with their transcribers."""
    return bank.candidates.select_related("transcriber__base", "transcriber__vocabulary").order_by("position")


@dataclass(frozen=True)
class BoardRow:
    """A bank on the leaderboard: its leader over the window (None when nothing is scored), whether it clears
    the bank's threshold, its lead over the runner-up, the transcriptions still waiting and the window's flags."""

    bank: Bank  # with n_candidates, n_flags (any day) and n_window (flags in the window)
    leader: object | None  # the leading candidate's transcriber
    summary: scoring.CandidateSummary | None
    interval: tuple[float, float] | None
    clears_threshold: bool
    runner_up: object | None
    lead: scoring.LeadTest | None
    pending: int
    all_failed: tuple = ()  # (transcriber, failed lines) of candidates whose every line in the window failed
    latency: lib_tradeoff.Latency | None = None  # the leader's over the window (queries.latency)
    projection: lib_tradeoff.Projection | None = (
        None  # the leader a month at the organization's volume (queries.cost)
    )
    local: bool = False  # the leader runs on this server
    runner_up_summary: scoring.CandidateSummary | None = None
    live_model: bool = (
        False  # the leader runs the provider and model of a live transcriber of the bank's calls
    )
    # The leader's entities right on the bank's own lines (lib.entities.EntityAccuracy), as the bank's results
    # snapshot of the window holds them (snapshots.with_entities); None where none was computed yet.
    entities: object | None = None

    @property
    def lead_from(self) -> str:
        """Which part alone carries the lead over the runner-up (scoring.lead_from), "" if none."""
        if self.summary is None or self.runner_up_summary is None:
            return ""
        return scoring.lead_from(self.summary, self.runner_up_summary)

    @property
    def provisional(self) -> bool:
        """The leader's accuracy rests on too few lines to trust (scoring.too_few_to_trust)."""
        return self.summary is not None and scoring.too_few_to_trust(
            self.summary.matches, self.summary.scored
        )


_PENDING = """
SELECT b.bank_id, COUNT(DISTINCT t.id)
FROM {transcription} t
JOIN (
  SELECT f.line_id, f.bank_id FROM {flag} f WHERE f.organization_id = %s AND f.bank_id IS NOT NULL
  UNION
  SELECT c.line_id, f.bank_id FROM {control} c JOIN {flag} f ON f.id = c.flag_id
  WHERE f.organization_id = %s AND f.bank_id IS NOT NULL
) b ON b.line_id = t.line_id
JOIN {candidate} k ON k.bank_id = b.bank_id AND k.transcriber_id = t.transcriber_id
WHERE t.organization_id = %s AND t.status IN ({active})
GROUP BY b.bank_id
"""


def _pending(organization_id: int) -> dict[int, int]:
    """Transcriptions waiting per bank: its candidates' on its flags' lines and their control lines (as
    queries.pending_for_bank counts them, for every bank at once)."""
    sql = _PENDING.format(
        transcription=Transcription._meta.db_table,
        flag=Flag._meta.db_table,
        control=ControlLine._meta.db_table,
        candidate=Candidate._meta.db_table,
        active=", ".join(["%s"] * len(Transcription.ACTIVE)),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [organization_id] * 3 + list(Transcription.ACTIVE))
        return {int(bank_id): int(n) for bank_id, n in cursor.fetchall()}


NONE = (0, 0, 0, 0, 0, 0)  # the counts of a candidate with no totals in the window


def _lead(pairs: dict, bank_id: int, leader: int, runner_up: int) -> scoring.LeadTest:
    """Exact McNemar of the leader against the runner-up, from the window's pair totals."""
    low, high = sorted((leader, runner_up))
    both, low_only, high_only = pairs.get((bank_id, low, high), (0, 0, 0))
    b, c = (low_only, high_only) if leader == low else (high_only, low_only)
    return scoring.lead_test(both, b, c)


def leaderboard(organization, window_days: int) -> list[BoardRow]:
    """Every bank of the organization by name with its leader over the window, its latency and what it would cost
    a month at the organization's volume, in a fixed number of queries: the banks (with their flag counts),
    their candidates, the window's score totals, its pair totals, the waiting work, the leaders' latency totals
    and the call volume (cached, queries.cost)."""
    since = window_start(clamp_window(window_days), organization.zone)
    banks = list(banks_list(organization).annotate(n_window=totals.flags_in(OuterRef("pk"), since=since)))
    candidates: dict[int, list] = {}
    for c in Candidate.objects.filter(bank__in=banks).select_related("transcriber").order_by("position"):
        candidates.setdefault(c.bank_id, []).append(c.transcriber)
    window = {"bank__in": banks, "day__gte": since.date()}
    counts = {
        (r["bank_id"], r["transcriber_id"]): tuple(int(r[k] or 0) for k in ("s", "m", "f", "u", "cs", "cm"))
        for r in ScoreTotal.objects.filter(source=Score.CANDIDATE, **window)
        .values("bank_id", "transcriber_id")
        .annotate(
            s=Sum("scored"),
            m=Sum("matches"),
            f=Sum("failed"),
            u=Sum("wer_units"),
            cs=Sum("control_scored"),
            cm=Sum("control_matches"),
        )
    }
    live_models = defaultdict(set)  # each bank's live transcribers' (provider, model), from their live scores
    for bank_id, provider, model in (
        ScoreTotal.objects.filter(source=Score.LIVE, **window)
        .values_list("bank_id", "transcriber__provider", "transcriber__model")
        .distinct()
    ):
        live_models[bank_id].add((provider, model))
    pairs = {
        (r["bank_id"], r["low_id"], r["high_id"]): (int(r["b"]), int(r["lo"]), int(r["hi"]))
        for r in PairTotal.objects.filter(**window)
        .values("bank_id", "low_id", "high_id")
        .annotate(b=Sum("both"), lo=Sum("low_only"), hi=Sum("high_only"))
    }
    pending = _pending(organization.pk) if banks else {}
    leaders = {}
    for bank in banks:
        rows = [
            scoring.summary_row(t.pk, *counts.get((bank.pk, t.pk), NONE)) for t in candidates.get(bank.pk, [])
        ]
        leaders[bank.pk] = scoring.rank(rows, bank.threshold).leader
    timed = latency.board_latencies(
        [b.pk for b in banks], since, [(b, t) for b, t in leaders.items() if t is not None]
    )
    volume = cost.call_volume(organization) if any(t is not None for t in leaders.values()) else None
    board = []
    for bank in banks:
        transcribers = candidates.get(bank.pk, [])
        rows = [scoring.summary_row(t.pk, *counts.get((bank.pk, t.pk), NONE)) for t in transcribers]
        ranked = scoring.rank(rows, bank.threshold)
        by_id = {t.pk: t for t in transcribers}
        best = next((r for r in rows if r.candidate == ranked.leader), None)
        second = next((r for r in rows if r.candidate == ranked.runner_up), None)
        leader = by_id.get(ranked.leader)
        found = timed.get((bank.pk, ranked.leader))
        board.append(
            BoardRow(
                bank=bank,
                leader=by_id.get(ranked.leader),
                summary=best,
                interval=scoring.wilson_interval(best.matches, best.scored) if best else None,
                clears_threshold=ranked.leader_clears_threshold,
                runner_up=by_id.get(ranked.runner_up),
                lead=_lead(pairs, bank.pk, ranked.leader, ranked.runner_up) if ranked.runner_up else None,
                pending=pending.get(bank.pk, 0),
                all_failed=tuple((by_id[r.candidate], r.failed) for r in rows if r.failed and not r.scored),
                latency=found,
                projection=cost.projection_of(leader, volume, found.real_time_factor if found else None)
                if leader is not None and volume is not None
                else None,
                local=leader is not None and cost.is_local(leader),
                runner_up_summary=second,
                live_model=leader is not None and (leader.provider, leader.model) in live_models[bank.pk],
            )
        )
    return board
