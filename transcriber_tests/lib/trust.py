"""How far to trust a lead: uncertainty that respects calls, how many more flags would settle the lead, and a
full-call run's fixes and breaks with their intervals and sign test. Pure: numpy and scipy, no Django; every
function returns a frozen dataclass and is tested without a database.

Call-level (cluster) bootstrap. The Wilson interval and the exact McNemar test (scoring.py) count every line on
its own, although a flag and its control lines come from one call, one caller, one recording: lines of a call
tend to be right or wrong together. The bootstrap here resamples calls instead, keeping each call's flags and
controls together, `RESAMPLES` times with a fixed seed (a page shows the same figures on every reload), and
reads the 95% percentile interval of the statistic:

- a candidate's accuracy: its matches over its scored items, summed over the resampled calls;
- the lead: the leader's accuracy less the runner-up's on the items both scored, summed likewise;
- a paired difference (one candidate less another on the items both scored: a model streamed less the same model
  in batch), resampling calls as the lead does, and resampling lines (each line a call of its own).

A call enters as its numbers only (items scored and matched, or both scored and only-one-right), so calls are
given as a histogram {numbers: how many calls}: resampling N calls with replacement draws how many times each
kind of call is picked from a multinomial of N trials with the kinds' shares, exactly the distribution of
picking calls one by one, at a cost set by the kinds of call rather than their number. The resamples are drawn in
chunks so what it holds at once stays under MEMORY_BOUND (8 MiB, and 8 bytes a resample for the statistics)
however many kinds of call there are; the
bootstrap runs in the queue's rebuild of a bank's figures (queries/snapshots.py), never inside a request.

How many more flags. From the current rates of the lines only the leader gets right and only the runner-up gets
right (per line both scored: a line still waiting for one of them counts for neither), the number of further
flags, each bringing 1 + the bank's control lines, after which the exact McNemar test on all the items would
find the lead clear at p < 0.05 with an 80% chance if those rates hold: the test's power, computed exactly (a
sum over the binomial numbers of further discordant items, no simulation); "too close" when even `FLAG_LIMIT`
more flags would not do it."""

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from . import scoring

RESAMPLES = 10_000
SEED = 28  # fixed: the same figures on every reload
LEVEL = 0.95
ALPHA = 0.05
POWER = 0.8
FLAG_LIMIT = 1000
FEW_CALLS = 10  # below it, the call-level bootstrap is not to be read (disagreement says so)
MEMORY_BOUND = 8 * 2**20  # bytes a bootstrap holds at once, besides 8 bytes a resample for its statistics


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """The statistic on the calls as they are (`estimate`) and its 95% percentile interval from `resamples`
    resamples of `calls` calls; all None without a call."""

    estimate: float | None
    low: float | None
    high: float | None
    calls: int
    resamples: int = RESAMPLES

    @property
    def excludes_zero(self) -> bool:
        return self.low is not None and (self.low > 0 or self.high < 0)


def ratio_bootstrap(
    calls: Iterable[tuple[int, int, int]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Bootstrap:
    """Bootstrap of sum(numerator) / sum(denominator) over calls, the calls resampled with replacement.

    `calls`: (numerator, denominator, how many calls) for each kind of call; every denominator at least 1 (a call
    that counts nothing is no call here). Seeded: the same calls give the same interval on any machine's numpy
    (to its last bits, which pages never show)."""
    kinds = sorted((int(x), int(y), int(n)) for x, y, n in calls if n > 0)
    if any(y < 1 for _, y, _ in kinds):
        raise ValueError("Every call must count at least one item (a denominator of 1 or more).")
    total = sum(n for _, _, n in kinds)
    if total == 0:
        return Bootstrap(None, None, None, 0, resamples)
    x = np.array([k[0] for k in kinds], dtype=float)
    y = np.array([k[1] for k in kinds], dtype=float)
    n = np.array([k[2] for k in kinds], dtype=float)
    estimate = float(n @ x / (n @ y))
    if len(kinds) == 1:
        return Bootstrap(estimate, estimate, estimate, total, resamples)
    rng = np.random.default_rng(seed)
    shares = n / total
    # Drawn in chunks, so memory stays under MEMORY_BOUND whatever the kinds of call (a chunk's counts, 8 bytes
    # each, and their copy as floats for the products): the draws are those of one draw of every resample at once
    # (the generator gives the same numbers either way).
    chunk = max(1, min(resamples, MEMORY_BOUND // (16 * len(kinds))))
    stats = np.empty(resamples)
    for start in range(0, resamples, chunk):
        picked = rng.multinomial(total, shares, size=min(chunk, resamples - start))
        stats[start : start + len(picked)] = (picked @ x) / (picked @ y)
    alpha = (1 - level) / 2
    low, high = np.quantile(stats, [alpha, 1 - alpha])
    return Bootstrap(estimate, float(low), float(high), total, resamples)


def accuracy_bootstrap(histogram, **kwargs) -> Bootstrap:
    """A candidate's accuracy over calls: `histogram` holds (items scored, items matched, calls)."""
    return ratio_bootstrap(((m, s, n) for s, m, n in histogram), **kwargs)


def lead_bootstrap(histogram, **kwargs) -> Bootstrap:
    """The leader's accuracy less the runner-up's on the items both scored, over calls: `histogram` holds
    (items both scored, only the leader right, only the runner-up right, calls)."""
    return ratio_bootstrap(((lo - ro, both, n) for both, lo, ro, n in histogram), **kwargs)


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """One candidate's accuracy less another's on the lines both scored (the first's less the second's: `both`
    lines, `first_only` right for the first alone, `second_only` for the second alone), with its 95% interval
    resampling lines (`lines`) and resampling calls (`calls`), and the exact McNemar p-value of the two."""

    both: int
    first_only: int
    second_only: int
    lines: Bootstrap
    calls: Bootstrap
    p_value: float

    @property
    def estimate(self) -> float | None:
        return (self.first_only - self.second_only) / self.both if self.both else None


def paired_difference(
    both: int, first_only: int, second_only: int, call_histogram, **kwargs
) -> PairedDifference:
    """A PairedDifference from the lines' counts and the calls' histogram (items both scored, only the first
    right, only the second right, calls), as lead_bootstrap takes it; lines are resampled as calls of one line."""
    line_kinds = [(1, 1, 0, first_only), (1, 0, 1, second_only), (1, 0, 0, both - first_only - second_only)]
    return PairedDifference(
        both,
        first_only,
        second_only,
        lead_bootstrap(line_kinds, **kwargs),
        lead_bootstrap(call_histogram, **kwargs),
        scoring.mcnemar_exact(first_only, second_only),
    )


def _points(x: float) -> str:
    return f"{x * 100:+.1f}"


def disagreement(
    lead: scoring.LeadTest | None,
    lead_calls: Bootstrap | None,
    leader_wilson: tuple[float, float] | None = None,
    leader_calls: Bootstrap | None = None,
) -> str:
    """One sentence saying where the call-level bootstrap and the line-level figures (the exact McNemar test, the
    Wilson interval) disagree, and why; "" when they agree. With fewer than FEW_CALLS calls it says that the
    bootstrap cannot be trusted yet: resampling a handful of calls sees only their few mixes, so its interval is
    too narrow (with three calls it can be narrower than the Wilson interval of their lines)."""
    calls = next((b.calls for b in (lead_calls, leader_calls) if b is not None and b.low is not None), None)
    if calls is not None and calls < FEW_CALLS:
        return (
            f"Only {calls} call{'s' if calls != 1 else ''} in this window: resampling so few calls gives intervals "
            f"too narrow to trust, so read the Wilson intervals and the exact McNemar test until there are at "
            f"least {FEW_CALLS}."
        )
    if lead is not None and lead_calls is not None and lead_calls.low is not None:
        clear_by_calls = lead_calls.low > 0
        interval = f"{_points(lead_calls.low)} to {_points(lead_calls.high)} points"
        if lead.clear and not clear_by_calls:
            return (
                f"The two disagree: the exact McNemar test counts each line on its own and finds the lead clear "
                f"(p = {lead.p_value:.3f}), but resampling whole calls the lead's 95% interval ({interval}) "
                f"includes zero, because a call's lines tend to be right or wrong together: the leader's wins "
                f"rest on fewer calls ({lead_calls.calls}) than lines. Trust the lead only once both agree."
            )
        if clear_by_calls and not lead.clear and lead.leader_only_right > lead.runner_up_only_right:
            return (
                f"The two disagree: resampling whole calls the lead's 95% interval ({interval}) excludes zero, "
                f"but the exact McNemar test (p = {lead.p_value:.3f}) does not find it clear: it weighs only the "
                f"{lead.leader_only_right + lead.runner_up_only_right} lines where exactly one of them is right, "
                f"and with so few the bootstrap's approximate interval is the less strict of the two."
            )
    if leader_wilson is not None and leader_calls is not None and leader_calls.low is not None:
        wilson_width = leader_wilson[1] - leader_wilson[0]
        calls_width = leader_calls.high - leader_calls.low
        if wilson_width > 0 and calls_width > 1.25 * wilson_width:
            return (
                f"The leader's call-level interval is {calls_width / wilson_width:.1f} times as wide as its "
                f"Wilson interval: a call's lines tend to be right or wrong together, so its "
                f"{leader_calls.calls} calls carry less evidence than as many separate lines would."
            )
    return ""


# ---------------------------------------------------------------- how many more flags


CLEAR = "clear"  # the lead is already clear
NEEDS = "needs"  # about `flags` more flags
TOO_CLOSE = "too_close"  # not within FLAG_LIMIT more flags at the current rates
NOTHING = "nothing"  # no items to estimate from


@dataclass(frozen=True, slots=True)
class FlagPlan:
    """How many more flags would make the lead clear. `power` is the chance that the exact McNemar test on all
    the items then finds it clear (p < alpha, leader ahead), if the current per-item rates hold."""

    state: str  # CLEAR, NEEDS, TOO_CLOSE or NOTHING
    flags: int | None
    power: float | None
    items_per_flag: int
    leader_only_rate: float | None  # per line both scored
    runner_up_only_rate: float | None
    limit: int = FLAG_LIMIT
    target: float = POWER
    alpha: float = ALPHA
    method: str = "exact"  # the power is computed exactly, not simulated


def critical(discordant, alpha: float = ALPHA) -> np.ndarray:
    """For each number of discordant items D, the fewest the leader must have alone for the two-sided exact
    McNemar test (scoring.mcnemar_exact) to find its lead clear: the least b > D / 2 with 2 P(X >= b) < alpha,
    X ~ Binomial(D, 1/2). D + 1 where no b is enough."""
    d = np.asarray(discordant, dtype=np.int64)
    k = np.maximum(
        np.floor(d / 2).astype(np.int64) + 1, np.ceil(binom.isf(alpha / 2, d, 0.5)).astype(np.int64)
    )

    def ok(b):
        return (2 * binom.sf(b - 1, d, 0.5) < alpha) & (2 * b > d)

    for _ in range(64):  # isf is within a step or two; step down while one fewer still clears, up while not
        down = (k - 1 > d // 2) & ok(k - 1)
        up = ~ok(k) & (k <= d)
        if not down.any() and not up.any():
            break
        k = k - down + up
    return np.where(ok(k), k, d + 1)


def power(
    more_items: int,
    leader_only: int,
    runner_up_only: int,
    p_leader: float,
    p_runner_up: float,
    alpha: float = ALPHA,
) -> float:
    """The chance the lead is clear once `more_items` further items are in, exactly: the current counts plus
    the further discordant items, D' ~ Binomial(more_items, p_leader + p_runner_up), of which the leader's
    B' ~ Binomial(D', p_leader / (p_leader + p_runner_up))."""
    q = p_leader + p_runner_up
    d = np.arange(more_items + 1)
    weights = binom.pmf(d, more_items, q) if q > 0 else (d == 0).astype(float)
    need = critical(d + leader_only + runner_up_only, alpha) - leader_only  # B' >= need
    theta = p_leader / q if q > 0 else 0.0
    chance = np.where(need <= 0, 1.0, binom.sf(need - 1, d, theta))
    return float(np.clip(weights @ chance, 0.0, 1.0))


def flags_needed(
    leader_only: int,
    runner_up_only: int,
    items: int,
    controls_per_flag: int,
    *,
    alpha: float = ALPHA,
    target: float = POWER,
    limit: int = FLAG_LIMIT,
) -> FlagPlan:
    """How many more flags (each with `controls_per_flag` controls) would make the lead clear with a `target`
    chance, at the current rates: `leader_only` and `runner_up_only` of the `items` both candidates scored. The least number of
    flags found by bisection on the exact power (which creeps up with the flags, with the small steps of a
    discrete test)."""
    per_flag = 1 + controls_per_flag
    if items <= 0:
        return FlagPlan(NOTHING, None, None, per_flag, None, None, limit, target, alpha)
    p_b, p_c = leader_only / items, runner_up_only / items
    now = scoring.lead_test(items, leader_only, runner_up_only, alpha)
    if now.clear:
        return FlagPlan(CLEAR, 0, 1.0, per_flag, p_b, p_c, limit, target, alpha)
    if p_b <= p_c:
        return FlagPlan(TOO_CLOSE, None, None, per_flag, p_b, p_c, limit, target, alpha)

    def chance(flags: int) -> float:
        return power(flags * per_flag, leader_only, runner_up_only, p_b, p_c, alpha)

    at_limit = chance(limit)
    if at_limit < target:
        return FlagPlan(TOO_CLOSE, None, at_limit, per_flag, p_b, p_c, limit, target, alpha)
    low, high = 0, limit  # chance(high) >= target
    while high - low > 1:
        mid = (low + high) // 2
        if chance(mid) >= target:
            high = mid
        else:
            low = mid
    return FlagPlan(NEEDS, high, chance(high), per_flag, p_b, p_c, limit, target, alpha)


# ---------------------------------------------------------------- a full-call run's fixes and breaks


@dataclass(frozen=True, slots=True)
class RunTally:
    """A full-call run's fixes and breaks out of the lines whose outcome is known (`lines`: identical ones and
    labelled differing ones), each with its 95% Wilson interval, and the net (fixes - breaks) with the exact
    two-sided sign test of fixes against breaks (McNemar's: the lines that are neither carry no sign)."""

    fixes: int
    breaks: int
    lines: int
    fix_interval: tuple[float, float] | None
    break_interval: tuple[float, float] | None
    net: int
    sign_p: float

    @property
    def fix_rate(self) -> float | None:
        return self.fixes / self.lines if self.lines else None

    @property
    def break_rate(self) -> float | None:
        return self.breaks / self.lines if self.lines else None

    @property
    def net_clear(self) -> bool:
        return self.sign_p < ALPHA and self.net != 0


def run_tally(fixes: int, breaks: int, lines: int) -> RunTally:
    if not 0 <= fixes + breaks <= lines:
        raise ValueError(f"Need 0 <= fixes + breaks <= lines, got {fixes} + {breaks} of {lines}.")
    return RunTally(
        fixes,
        breaks,
        lines,
        scoring.wilson_interval(fixes, lines),
        scoring.wilson_interval(breaks, lines),
        fixes - breaks,
        scoring.mcnemar_exact(fixes, breaks),
    )


def about(n: int) -> int:
    """A count as "about N" says it: exact up to 100, then to two significant figures, rounded up."""
    if n <= 100:
        return n
    step = 10 ** (int(math.log10(n)) - 1)
    return -(-n // step) * step
