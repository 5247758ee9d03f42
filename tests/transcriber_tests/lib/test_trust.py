"""The call-level bootstrap, the planner of more flags and a run's fixes and breaks (transcriber_tests/lib/trust.py): checked against
scipy.stats.bootstrap on the same calls and resamples' size, against known cases, and the planner's number
against a simulation of the exact McNemar test. Seeded figures are compared with a tolerance, never exactly: a
machine's numpy may differ in its last bits."""

import numpy as np
import pytest
from scipy import stats

from transcriber_tests.lib import scoring
from transcriber_tests.lib import trust as uncertainty


def _calls(histogram):
    """The calls one by one: (scored, matches) per call."""
    return [(s, m) for s, m, n in histogram for _ in range(n)]


HISTOGRAM = [(1, 1, 60), (1, 0, 25), (2, 2, 40), (2, 1, 18), (2, 0, 12), (3, 3, 9), (3, 1, 6)]


def _scipy_interval(per_call, statistic):
    data = np.arange(len(per_call))

    def stat(index, axis=-1):
        picked = per_call[np.asarray(index)]
        return statistic(picked)

    result = stats.bootstrap(
        (data,),
        lambda index: stat(index),
        n_resamples=uncertainty.RESAMPLES,
        method="percentile",
        vectorized=False,
        rng=np.random.default_rng(7),
    )
    return result.confidence_interval.low, result.confidence_interval.high


def test_the_accuracy_bootstrap_agrees_with_scipy_on_the_same_calls():
    per_call = np.array(_calls(HISTOGRAM))
    mine = uncertainty.accuracy_bootstrap(HISTOGRAM)
    low, high = _scipy_interval(per_call, lambda picked: picked[:, 1].sum() / picked[:, 0].sum())
    assert mine.calls == len(per_call) and mine.resamples == 10_000
    assert mine.estimate == pytest.approx(per_call[:, 1].sum() / per_call[:, 0].sum())
    assert mine.low == pytest.approx(low, abs=0.01)
    assert mine.high == pytest.approx(high, abs=0.01)


def test_the_lead_bootstrap_agrees_with_scipy_on_the_same_calls():
    lead = [
        (1, 0, 0, 80),
        (1, 1, 0, 14),
        (1, 0, 1, 6),
        (2, 0, 0, 30),
        (2, 2, 0, 5),
        (2, 1, 0, 9),
        (2, 0, 1, 4),
    ]
    per_call = np.array([(b, lo, ro) for b, lo, ro, n in lead for _ in range(n)])
    mine = uncertainty.lead_bootstrap(lead)
    low, high = _scipy_interval(per_call, lambda p: (p[:, 1].sum() - p[:, 2].sum()) / p[:, 0].sum())
    assert mine.low == pytest.approx(low, abs=0.01)
    assert mine.high == pytest.approx(high, abs=0.01)
    assert mine.excludes_zero


def test_known_cases():
    # One kind of call: every resample is the same.
    same = uncertainty.accuracy_bootstrap([(2, 1, 50)])
    assert (same.estimate, same.low, same.high) == (0.5, 0.5, 0.5)
    # Nothing to resample.
    assert uncertainty.accuracy_bootstrap([]) == uncertainty.Bootstrap(None, None, None, 0)
    # One line a call: the ordinary bootstrap of a proportion, close to the normal interval p +- 1.96 sd.
    single = uncertainty.accuracy_bootstrap([(1, 1, 300), (1, 0, 300)])
    half_width = 1.959964 * (0.25 / 600) ** 0.5
    assert single.low == pytest.approx(0.5 - half_width, abs=0.01)
    assert single.high == pytest.approx(0.5 + half_width, abs=0.01)
    # Ten lines a call, all right or all wrong: the evidence of 60 calls, not 600 lines (about sqrt(10) wider).
    clustered = uncertainty.accuracy_bootstrap([(10, 10, 30), (10, 0, 30)])
    assert clustered.estimate == 0.5
    assert (clustered.high - clustered.low) == pytest.approx(2 * 1.959964 * (0.25 / 60) ** 0.5, abs=0.02)
    wilson = scoring.wilson_interval(300, 600)
    assert clustered.high - clustered.low > 2.5 * (wilson[1] - wilson[0])


def test_it_gives_the_same_figures_on_every_call_whatever_the_order():
    first = uncertainty.accuracy_bootstrap(HISTOGRAM)
    again = uncertainty.accuracy_bootstrap(list(reversed(HISTOGRAM)))
    assert (first.low, first.high) == (again.low, again.high)
    other = uncertainty.accuracy_bootstrap(HISTOGRAM, seed=99)
    assert other.low == pytest.approx(first.low, abs=0.01)


def test_a_call_must_count_a_line():
    with pytest.raises(ValueError):
        uncertainty.ratio_bootstrap([(0, 0, 3)])


def test_it_says_when_the_call_level_and_line_level_figures_disagree():
    lead = scoring.lead_test(400, 30, 12)
    assert lead.clear
    wide = uncertainty.Bootstrap(0.045, -0.004, 0.094, 40)
    sentence = uncertainty.disagreement(lead, wide)
    assert "disagree" in sentence and "includes zero" in sentence and "40" in sentence
    assert uncertainty.disagreement(lead, uncertainty.Bootstrap(0.045, 0.01, 0.08, 300)) == ""
    unclear = scoring.lead_test(60, 5, 1)
    assert not unclear.clear
    assert "excludes zero" in uncertainty.disagreement(unclear, uncertainty.Bootstrap(0.07, 0.01, 0.13, 30))
    # The leader's own interval much wider by calls than by lines.
    wider = uncertainty.disagreement(None, None, (0.6, 0.7), uncertainty.Bootstrap(0.65, 0.5, 0.8, 20))
    assert "times as wide" in wider
    # A handful of calls: the bootstrap's interval is too narrow to read (here narrower than Wilson's).
    few = uncertainty.disagreement(
        scoring.lead_test(10, 2, 0), uncertainty.Bootstrap(0.2, 0.0, 0.5, 3), (0.17, 0.69), None
    )
    assert few.startswith("Only 3 calls in this window") and "too narrow to trust" in few
    assert "at least 10" in few


def test_the_critical_counts_are_those_of_the_exact_test():
    d = np.arange(0, 300)
    found = uncertainty.critical(d)
    for n in range(300):
        expected = next(
            (b for b in range(n // 2 + 1, n + 1) if 2 * b > n and scoring.mcnemar_exact(b, n - b) < 0.05),
            n + 1,
        )
        assert found[n] == expected, n


def _simulated_power(plan_flags, per_flag, leader_only, runner_up_only, items, rounds=4000, seed=3):
    rng = np.random.default_rng(seed)
    more = plan_flags * per_flag
    p = [leader_only / items, runner_up_only / items]
    counts = rng.multinomial(more, [p[0], p[1], 1 - p[0] - p[1]], size=rounds)
    clear = 0
    for b, c, _ in counts:
        test = scoring.lead_test(items + more, leader_only + int(b), runner_up_only + int(c))
        clear += test.clear
    return clear / rounds


def test_the_planners_number_holds_in_a_simulation():
    # 200 items (100 flags with one control each): the leader alone right on 12, the runner-up alone on 4.
    plan = uncertainty.flags_needed(12, 4, 200, 1)
    assert plan.state == uncertainty.NEEDS and plan.method == "exact"
    assert 10 < plan.flags < 1000
    simulated = _simulated_power(plan.flags, 2, 12, 4, 200)
    assert simulated == pytest.approx(plan.power, abs=0.025)
    assert simulated >= 0.77
    assert _simulated_power(plan.flags // 2, 2, 12, 4, 200) < 0.75  # half as many are not enough
    assert uncertainty.power(plan.flags * 2, 12, 4, 0.06, 0.02) == pytest.approx(plan.power, abs=1e-12)


def test_the_planner_says_when_it_is_clear_or_too_close():
    assert uncertainty.flags_needed(40, 10, 300, 1).state == uncertainty.CLEAR
    assert uncertainty.flags_needed(10, 10, 300, 1).state == uncertainty.TOO_CLOSE
    assert uncertainty.flags_needed(4, 9, 300, 1).state == uncertainty.TOO_CLOSE
    close = uncertainty.flags_needed(31, 29, 600, 2)
    assert close.state == uncertainty.TOO_CLOSE and close.power < 0.8
    assert uncertainty.flags_needed(0, 0, 0, 1).state == uncertainty.NOTHING
    # More controls per flag: fewer flags for the same lines.
    assert uncertainty.flags_needed(12, 4, 200, 2).flags < uncertainty.flags_needed(12, 4, 200, 0).flags


def test_about_rounds_as_a_page_says_it():
    assert [uncertainty.about(n) for n in (7, 100, 101, 143, 999, 1234)] == [7, 100, 110, 150, 1000, 1300]


def test_a_runs_fixes_and_breaks_with_their_intervals_and_sign_test():
    tally = uncertainty.run_tally(14, 4, 120)
    assert tally.net == 10
    assert tally.fix_interval == scoring.wilson_interval(14, 120)
    assert tally.break_interval == scoring.wilson_interval(4, 120)
    assert tally.sign_p == scoring.mcnemar_exact(14, 4)
    assert tally.sign_p < 0.05 and tally.net_clear
    even = uncertainty.run_tally(3, 3, 10)
    assert even.net == 0 and not even.net_clear
    none = uncertainty.run_tally(0, 0, 0)
    assert none.fix_interval is None and none.sign_p == 1.0
    with pytest.raises(ValueError):
        uncertainty.run_tally(5, 6, 10)
