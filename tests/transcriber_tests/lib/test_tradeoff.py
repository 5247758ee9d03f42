"""The pure core of latency and cost beside accuracy (transcriber_tests/lib/tradeoff.py), without a database: the
buckets, percentiles read from them within the stated resolution of the exact ones, the real-time factor, the
Pareto front and the monthly projection's arithmetic. Latencies here are constructed, never measured."""

import random
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from transcriber_tests.lib import tradeoff as tradeoffs
from transcriber_tests.lib.charts import tradeoff_chart


def _counts(latencies_us):
    counts = {}
    for us in latencies_us:
        b = tradeoffs.bucket_of(us)
        counts[b] = counts.get(b, 0) + 1
    return counts


def test_it_states_a_resolution_that_bounds_every_bucket():
    assert 0.02 < tradeoffs.RESOLUTION < 0.023
    assert tradeoffs.RESOLUTION_WORDS == "within 2.3%"
    assert list(tradeoffs.BOUNDS) == sorted(set(tradeoffs.BOUNDS))  # strictly increasing
    assert tradeoffs.BOUNDS[0] == 1_000 and 990_000_000 < tradeoffs.BOUNDS[-1] < 1_010_000_000
    for b in range(1, tradeoffs.TOP + 1):
        lo, hi, mid = tradeoffs.BOUNDS[b - 1], tradeoffs.BOUNDS[b], tradeoffs.MIDDLES[b]
        assert lo <= mid < hi
        assert (
            tradeoffs.bucket_of(lo) == b
            and tradeoffs.bucket_of(hi - 1) == b
            and tradeoffs.bucket_of(hi) == b + 1
        )


def test_it_puts_the_ends_in_open_buckets():
    assert tradeoffs.bucket_of(0) == 0 and tradeoffs.bucket_of(999) == 0
    assert tradeoffs.bucket_of(10**12) == tradeoffs.TOP + 1
    assert tradeoffs.percentile_us({0: 3}, 50) == 1_000  # under 1 ms reads as 1 ms


def test_it_reads_nearest_rank_percentiles():
    assert tradeoffs.nearest_rank(20, 95) == 19
    assert tradeoffs.nearest_rank(100, 95) == 95
    assert tradeoffs.nearest_rank(1, 95) == 1
    assert tradeoffs.nearest_rank(3, 50) == 2
    assert tradeoffs.exact_percentile([5, 1, 4, 2, 3], 50) == 3
    assert tradeoffs.exact_percentile([], 50) is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=1_000, max_value=600_000_000), min_size=1, max_size=300),
    st.sampled_from([50, 90, 95, 99]),
)
def test_a_percentile_from_the_buckets_is_within_the_resolution_of_the_exact_one(latencies_us, percent):
    exact = tradeoffs.exact_percentile(latencies_us, percent)
    read = tradeoffs.percentile_us(_counts(latencies_us), percent)
    assert abs(read - exact) <= tradeoffs.RESOLUTION * exact


def test_it_merges_rows_of_one_bucket_and_sums_exactly():
    rng = random.Random(7)
    lines = [(rng.randrange(100_000, 3_000_000), 2_500_000) for _ in range(500)]
    rows = [(tradeoffs.bucket_of(lat), 1, lat, aud) for lat, aud in lines]  # one row per line: repeats merge
    found = tradeoffs.latency(rows)
    latencies = [lat for lat, _ in lines]
    assert found.lines == 500
    assert abs(found.p50_s * 1e6 - tradeoffs.exact_percentile(latencies, 50)) <= tradeoffs.RESOLUTION * 3e6
    assert found.mean_s == sum(latencies) / 500 / 1e6
    assert found.real_time_factor == sum(latencies) / (500 * 2_500_000)
    assert tradeoffs.latency([]) is None
    assert tradeoffs.latency([(3, 0, 0, 0)]) is None


def test_it_reads_seconds_as_whole_microseconds():
    assert tradeoffs.micros(1.5) == 1_500_000
    assert tradeoffs.micros(None) is None
    assert tradeoffs.micros(float("nan")) is None
    assert tradeoffs.micros(-1) is None
    assert tradeoffs.micros("x") is None


def test_it_writes_latencies_as_people_read_them():
    assert tradeoffs.seconds_words(0.18) == "180 ms"
    assert tradeoffs.seconds_words(1.2449) == "1.24 s"
    assert tradeoffs.seconds_words(12.44) == "12.4 s"
    assert tradeoffs.seconds_words(None) == "n/a"


def test_the_front_holds_the_points_nothing_beats_on_both():
    points = [
        ("fast", 0.70, 0.3),
        ("accurate", 0.90, 1.2),
        ("balanced", 0.80, 0.6),
        ("worse", 0.75, 0.9),  # balanced is more accurate and faster
        ("tie", 0.80, 0.6),  # ties with balanced: neither beats the other
        ("unknown", None, 0.1),
    ]
    assert tradeoffs.pareto_front(points) == {"fast", "accurate", "balanced", "tie"}
    assert tradeoffs.pareto_front([]) == frozenset()


def test_the_monthly_projection_is_minutes_times_price():
    minutes = tradeoffs.minutes_of(12_345.6)  # seconds
    assert minutes == Decimal("205.760")
    p = tradeoffs.projection(1, "0.0043", minutes, Decimal("0.50"), Decimal(0), local=False)
    assert p.cost == minutes * Decimal("0.0043") == Decimal("0.884768")
    assert p.difference == Decimal("0.384768")
    unknown = tradeoffs.projection(1, "0.0043", minutes, Decimal("0.50"), Decimal("3"), local=False)
    assert unknown.now is None and unknown.difference is None
    local = tradeoffs.projection(2, "0", minutes, Decimal(0), Decimal(0), local=True, rtf=0.25)
    assert local.cost == 0 and local.processing_hours == float(minutes) * 0.25 / 60
    assert tradeoffs.now_cost([(Decimal("100"), "0.006"), (Decimal("50"), 0)]) == Decimal("0.6")


class _P:
    def __init__(self, key, accuracy, p95_s):
        self.key, self.accuracy, self.p95_s = key, accuracy, p95_s


def test_the_chart_puts_faster_to_the_left_and_more_accurate_higher():
    items = [_P("a", 0.9, 2.0), _P("b", 0.7, 0.3), _P("c", 0.8, 0.6)]
    chart = tradeoff_chart(items, {"a", "b", "c"})
    a, b, c = chart.points
    assert b.x < c.x < a.x and a.y < c.y < b.y  # SVG y grows downwards
    assert chart.front.startswith(f"M{b.x} {b.y}") and chart.front.endswith(f"V{a.y}")
    left, top, right, bottom = chart.plot
    assert all(left <= p.x <= right and top <= p.y <= bottom for p in chart.points)
    assert [round(v, 6) for _, v in chart.x_ticks] == [0.2, 0.5, 1.0, 2.0]
    assert tradeoff_chart([], set()).points == []


def test_a_label_that_would_leave_the_chart_runs_to_the_left_of_its_point():
    slow, fast = _P("slow", 0.1, 5.0), _P("fast", 0.9, 0.5)
    slow.label = fast.label = "★ PocketSphinx en-us (local)"  # 28 characters: about 196 units wide
    chart = tradeoff_chart([slow, fast], set())
    by_key = {p.item.key: p for p in chart.points}
    assert by_key["slow"].anchor == "end" and by_key["slow"].label_x < by_key["slow"].x
    assert by_key["fast"].anchor == "start"


def test_a_candidate_at_zero_and_the_lowest_labels_stay_clear_of_the_x_axis():
    """Issue 34, 5.10: a 0% candidate sat on the axis with its label, and a low point's label ran into the x
    axis's tick labels."""
    from transcriber_tests.lib.charts import LABEL_LINES, Y_PAD

    items = [_P("zero", 0.0, 0.4), _P("low", 0.02, 0.5), _P("mid", 0.45, 3.0), _P("top", 0.9, 1.0)]
    chart = tradeoff_chart(items, {"zero", "top"})
    left, top, right, bottom = chart.plot
    by_key = {p.item.key: p for p in chart.points}
    assert by_key["zero"].y == bottom - Y_PAD  # above the axis, not on it
    for p in chart.points:
        assert top <= p.y < bottom
        assert p.label_y + LABEL_LINES <= bottom - 4, p.item.key  # both lines of its label above the axis
    # Labels sit above their points (below, where the plot's top is too near), clear of the dashed front that
    # runs level from a point.
    assert all(p.label_y + LABEL_LINES < p.y or p.label_y - 10 > p.y for p in chart.points)
    assert by_key["zero"].label_y + LABEL_LINES < by_key["zero"].y and by_key["top"].label_y > by_key["top"].y
    same_side = sorted(p.label_y for p in chart.points if p.anchor == "start")
    assert all(
        b - a >= 26 for a, b in zip(same_side, same_side[1:], strict=False)
    )  # and apart from each other
    assert chart.y_ticks[0] == (bottom - Y_PAD, 0.0)


def test_it_writes_a_months_work_in_the_unit_a_person_reads():
    from transcriber_tests.lib.tradeoff import hours_words

    assert hours_words(12.54) == "12.5 hours"
    assert hours_words(0.045) == "2.7 minutes"  # not "0.0 hours"
    assert hours_words(0.0001) == "under 0.1 minutes"
    # As an estimate in a sentence: "about 2.7 minutes", never "about under 0.1 minutes".
    assert tradeoffs.about_hours(0.045) == "about 2.7 minutes"
    assert tradeoffs.about_hours(0.0001) == "under 0.1 minutes"


def test_labels_running_towards_each_other_from_two_sides_never_meet():
    """A fast point's label runs right and a slow point's (near the chart's edge) runs left: at the same accuracy
    they met in between (the browser walk saw '★ PocketSphinx en-us (local)' over 'Whisper base (local) + Names
    and menu')."""
    fast, slow = _P("fast", 0.5, 0.9), _P("slow", 0.5, 1.6)
    fast.label, slow.label = "★ PocketSphinx en-us (local)", "Whisper base (local) + Names and menu"
    chart = tradeoff_chart([fast, slow], set())
    by_key = {p.item.key: p for p in chart.points}
    assert by_key["fast"].anchor == "start" and by_key["slow"].anchor == "end"
    assert abs(by_key["fast"].label_y - by_key["slow"].label_y) >= 26  # two lines each, one above the other
