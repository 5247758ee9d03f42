"""What supervisors read at a glance: the banks as a leaderboard, each candidate's accuracy week by week, and its
accuracy per error tag. The leaderboard and the trend read the per-day totals (aggregates: a few rows per bank,
candidate and day, whatever the number of flags); the tag breakdown counts the window's flagged lines. Each is a
fixed number of queries, whatever the number of banks, weeks or tags. Reads the dashboard and the API share
otherwise live in queries.py."""

import math
from dataclasses import dataclass
from datetime import UTC, timedelta

from django.core.cache import cache
from django.db import connection
from django.db.models import OuterRef, Sum
from django.utils import timezone

from . import aggregates, jobs, scoring
from .models import (
    STANDARD_TAGS,
    Bank,
    Candidate,
    ControlLine,
    Flag,
    PairTotal,
    Score,
    ScoreTotal,
    Transcription,
)
from .queries import RESULTS_CACHE_SECONDS, banks_list, clamp_window, window_start


def _cached(kind: str, bank: Bank, window_days: int, compute):
    key = f"bank-{kind}:{bank.pk}:{window_days}:{bank.results_changed_at.isoformat()}"
    found = cache.get(key)
    if found is None:
        found = compute()
        cache.set(key, found, RESULTS_CACHE_SECONDS)  # as the results cards
    return found


# ---------------------------------------------------------------- the leaderboard


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
        active=", ".join(["%s"] * len(jobs.ACTIVE)),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [organization_id] * 3 + list(jobs.ACTIVE))
        return {int(bank_id): int(n) for bank_id, n in cursor.fetchall()}


def _lead(pairs: dict, bank_id: int, leader: int, runner_up: int) -> scoring.LeadTest:
    """Exact McNemar of the leader against the runner-up, from the window's pair totals."""
    low, high = sorted((leader, runner_up))
    both, low_only, high_only = pairs.get((bank_id, low, high), (0, 0, 0))
    b, c = (low_only, high_only) if leader == low else (high_only, low_only)
    return scoring.lead_test(both, b, c)


def leaderboard(organization, window_days: int) -> list[BoardRow]:
    """Every bank of the organization by name with its leader over the window, in five queries: the banks (with
    their flag counts), their candidates, the window's score totals, its pair totals and the waiting work."""
    since = window_start(clamp_window(window_days))
    banks = list(banks_list(organization).annotate(n_window=aggregates.flags_in(OuterRef("pk"), since=since)))
    candidates: dict[int, list] = {}
    for c in Candidate.objects.filter(bank__in=banks).select_related("transcriber").order_by("position"):
        candidates.setdefault(c.bank_id, []).append(c.transcriber)
    window = {"bank__in": banks, "day__gte": aggregates.day_of(since)}
    counts = {
        (r["bank_id"], r["transcriber_id"]): (int(r["s"]), int(r["m"]), int(r["f"]), int(r["u"]))
        for r in ScoreTotal.objects.filter(source=Score.CANDIDATE, **window)
        .values("bank_id", "transcriber_id")
        .annotate(s=Sum("scored"), m=Sum("matches"), f=Sum("failed"), u=Sum("wer_units"))
    }
    pairs = {
        (r["bank_id"], r["low_id"], r["high_id"]): (int(r["b"]), int(r["lo"]), int(r["hi"]))
        for r in PairTotal.objects.filter(**window)
        .values("bank_id", "low_id", "high_id")
        .annotate(b=Sum("both"), lo=Sum("low_only"), hi=Sum("high_only"))
    }
    pending = _pending(organization.pk) if banks else {}
    board = []
    for bank in banks:
        transcribers = candidates.get(bank.pk, [])
        rows = [scoring.summary_row(t.pk, *counts.get((bank.pk, t.pk), (0, 0, 0, 0))) for t in transcribers]
        ranked = scoring.rank(rows, bank.threshold)
        by_id = {t.pk: t for t in transcribers}
        best = next((r for r in rows if r.candidate == ranked.leader), None)
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
            )
        )
    return board


# ---------------------------------------------------------------- accuracy week by week


@dataclass(frozen=True)
class Chart:
    """A trend drawn in a viewBox of WIDTH x HEIGHT (see chart): the weekly points, a path through them (broken
    over weeks with nothing scored) and the 95% interval as a band."""

    points: list  # (x, y, WeekPoint) of the weeks with scored lines
    line: str  # an SVG path
    bands: list  # SVG polygon point lists: the interval over each run of weeks (a narrow bar for a lone week)
    ticks: list  # (x, day): each week's last day
    threshold_y: float  # where the bank's threshold lies


@dataclass(frozen=True)
class Trend:
    transcriber: object
    weeks: list  # scoring.WeekPoint, oldest first
    chart: Chart

    @property
    def scored(self) -> int:
        return sum(w.scored for w in self.weeks)


# The viewBox (WIDTH x HEIGHT): the plot spans PAD_X..WIDTH-PAD_X across and TOP..TOP+PLOT_H down (100% at the top);
# the dates of the first and last weeks sit below it.
WIDTH, HEIGHT, PAD_X, TOP, PLOT_H = 300, 132, 34, 10, 100


def chart(weeks: list, threshold) -> Chart:
    """Coordinates of a trend: x spreads the weeks over the width, y is accuracy (0% at the bottom)."""
    step = (WIDTH - 2 * PAD_X) / max(len(weeks) - 1, 1)

    def x(i: float) -> float:
        return round(PAD_X + i * step, 1)

    def y(value: float) -> float:
        return round(TOP + (1 - value) * PLOT_H, 1)

    points, runs, run = [], [], []
    for i, week in enumerate(weeks):
        if week.scored:
            points.append((x(i), y(week.accuracy), week))
            run.append((i, week))
        elif run:
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    line = " ".join(
        ("M" if j == 0 else "L") + f"{x(i)} {y(w.accuracy)}" for run in runs for j, (i, w) in enumerate(run)
    )
    bands = []
    for run in runs:
        if len(run) == 1:  # a week on its own: its interval as a narrow bar
            (i, w), half = run[0], 4
            run = [(i - half / step, w), (i + half / step, w)]
        upper = [f"{x(i)},{y(w.interval[1])}" for i, w in run]
        lower = [f"{x(i)},{y(w.interval[0])}" for i, w in reversed(run)]
        bands.append(" ".join(upper + lower))
    ticks = [(x(i), w.last_day) for i, w in enumerate(weeks)]
    return Chart(points, line, bands, ticks, y(float(threshold)))


def bank_trends(bank: Bank, window_days: int, candidates) -> list[Trend]:
    """Each candidate's (transcribers, in the bank's order) accuracy per week over the window, in weeks of
    seven days ending today (UTC, the totals' days), from the per-day totals: one query."""
    window_days = clamp_window(window_days)

    def compute():
        today = timezone.now().astimezone(UTC).date()
        first = today - timedelta(days=window_days)  # the window's first whole day (queries.window_start)
        days: dict[int, list] = {}
        for tid, day, n, m in ScoreTotal.objects.filter(
            bank=bank, source=Score.CANDIDATE, transcriber__in=candidates, day__gte=first
        ).values_list("transcriber_id", "day", "scored", "matches"):
            days.setdefault(tid, []).append((day, n, m))
        weeks = math.ceil((window_days + 1) / 7)
        trends = []
        for t in candidates:
            points = scoring.weekly(days.get(t.pk, []), today, weeks)
            trends.append(Trend(t, points, chart(points, bank.threshold)))
        return trends

    return _cached("trends", bank, window_days, compute)


# ---------------------------------------------------------------- accuracy per error tag

MAX_TAGS = 12  # the standard tags, then the most used of the others


@dataclass(frozen=True)
class TagRow:
    tag: str
    flags: int  # flags in the window with this tag
    cells: list  # per candidate, in the bank's order: scoring.CandidateSummary
    # The best candidate on the tag (ties: lower mean WER, then listed first); None when none got a line right.
    best: object | None


@dataclass(frozen=True)
class TagTable:
    candidates: list
    rows: list


def bank_tags(bank: Bank, window_days: int, candidates) -> TagTable:
    """Each candidate's (transcribers, in the bank's order) accuracy on the window's flagged lines carrying each
    error tag (control lines have no tags), in two queries of the per-day tag totals: the tags used (with their
    flags), then each candidate's counts per tag."""
    window_days = clamp_window(window_days)

    def compute():
        since = window_start(window_days)
        # Per-tag totals per day (aggregates): the live rows count each tag's flags, the candidate rows score them.
        live = aggregates.tag_summaries(bank.pk, since, source=Score.LIVE)
        used = {tag: sum(s.scored + s.failed for s in rows.values()) for tag, rows in live.items()}
        others = sorted((t for t in used if t not in STANDARD_TAGS), key=lambda t: (-used[t], t))
        tags = ([t for t in STANDARD_TAGS if t in used] + others)[:MAX_TAGS]
        if not tags or not candidates:
            return TagTable(candidates, [])
        per_tag = aggregates.tag_summaries(bank.pk, since)
        rows = []
        for tag in tags:
            found = per_tag.get(tag, {})
            cells = [found.get(t.pk) or scoring.summary_row(t.pk, 0, 0, 0, 0) for t in candidates]
            leader = scoring.rank(cells, 0).leader
            best = next((c for c in cells if c.candidate == leader), None)
            shown = next((t for t in candidates if t.pk == leader), None) if best and best.matches else None
            rows.append(TagRow(tag, used[tag], cells, shown))
        return TagTable(candidates, rows)

    return _cached("tags", bank, window_days, compute)
