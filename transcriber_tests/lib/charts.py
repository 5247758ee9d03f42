"""The results page's charts as SVG coordinates (drawn on the server: no chart library, no inline style): the
weekly trend, and accuracy against p95 latency with the Pareto front. Pure: figures in, coordinates out."""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Chart:
    """A trend drawn in a viewBox of WIDTH x HEIGHT (see chart): the weekly points, a path through them (broken
    over weeks with nothing scored) and the 95% interval as a band."""

    points: list  # (x, y, WeekPoint) of the weeks with scored lines
    line: str  # an SVG path
    bands: list  # SVG polygon point lists: the interval over each run of weeks (a narrow bar for a lone week)
    ticks: list  # (x, day): each week's last day
    threshold_y: float  # where the bank's threshold lies


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


# ---------------------------------------------------------------- accuracy against latency

# The trade-off chart's viewBox (T_WIDTH x T_HEIGHT): the plot spans T_LEFT..T_WIDTH-T_RIGHT across and
# T_TOP..T_HEIGHT-T_BOTTOM down; p95 latency runs left to right on a log scale, accuracy bottom to top.
T_WIDTH, T_HEIGHT, T_LEFT, T_RIGHT, T_TOP, T_BOTTOM = 640, 320, 52, 24, 16, 48
LABEL_GAP = 13  # half the least vertical distance between two labels (each has two lines)
# The lowest accuracy drawn sits this far above the x axis, so a point there (a candidate at 0%, say) and its two
# lines of label stay clear of the axis and of its tick labels below it.
Y_PAD = 24
LABEL_LINES = 13  # the label's second line (its cost) is this far below its first


@dataclass(frozen=True)
class TradeoffPoint:
    """One candidate on the chart: where it is drawn, where its label goes and on which side."""

    x: float
    y: float
    label_x: float
    label_y: float
    anchor: str  # "start" (label to the right) or "end" (to the left)
    item: object  # what the caller passed: its key, name, cost words, accuracy, p95


@dataclass(frozen=True)
class TradeoffChart:
    points: list  # TradeoffPoint, in the order given
    front: str  # an SVG path: the staircase through the Pareto front, fastest first
    x_ticks: list  # (x, seconds)
    y_ticks: list  # (y, accuracy fraction)
    plot: tuple  # (left, top, right, bottom) of the plot area
    width: int = T_WIDTH
    height: int = T_HEIGHT

    @property
    def middle(self) -> float:
        """The plot's middle across: where the x axis's title goes."""
        return (self.plot[0] + self.plot[2]) / 2


def _latency_ticks(low: float, high: float) -> list:
    """1-2-5 steps of seconds within [low, high]."""
    ticks = []
    for exponent in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        for m in (1, 2, 5):
            value = m * 10.0**exponent
            if low <= value <= high:
                ticks.append(round(value, 6))
    return ticks


def _label_y(py: float, taken: list, highest: float, lowest: float) -> float:
    """Where the first line of a point's label goes (its second, the cost, is LABEL_LINES below): above the point,
    clear of the dashed front that runs level from it, moved up past the labels already placed; where that
    leaves the plot, below the point, moved down past them; never lower than `lowest` (the second line would reach
    the x axis's ticks) nor higher than `highest`. Beside the point when neither fits."""
    for y, step in ((py - 18, -1), (py + 17, 1)):
        for other in sorted(taken, reverse=step < 0):
            if abs(y - other) < LABEL_GAP * 2:
                y = other + step * LABEL_GAP * 2
        if highest <= y <= lowest:
            return y
    return min(max(py + 4, highest), lowest)


def tradeoff_chart(items: list, front_keys) -> TradeoffChart:
    """Coordinates of accuracy against p95 latency. `items`: objects with `.key`, `.accuracy` (a fraction) and
    `.p95_s` (seconds, > 0), each drawn as a point; `front_keys`: the keys on the Pareto front (lib/tradeoff.py), joined
    by a staircase from the fastest to the most accurate. Pure: no Django, no template."""
    left, top, right, bottom = T_LEFT, T_TOP, T_WIDTH - T_RIGHT, T_HEIGHT - T_BOTTOM
    if not items:
        return TradeoffChart([], "", [], [], (left, top, right, bottom))
    latencies = [max(i.p95_s, 1e-3) for i in items]
    low, high = min(latencies) / 1.6, max(latencies) * 1.6
    span = math.log10(high) - math.log10(low)
    lowest = min(i.accuracy for i in items)
    floor_acc = max(0.0, math.floor((lowest - 0.05) * 10) / 10)

    def x(seconds: float) -> float:
        return round(left + (math.log10(max(seconds, 1e-3)) - math.log10(low)) / span * (right - left), 1)

    def y(accuracy: float) -> float:
        return round(bottom - Y_PAD - (accuracy - floor_acc) / (1 - floor_acc) * (bottom - Y_PAD - top), 1)

    step = 0.2 if 1 - floor_acc > 0.5 else 0.1
    y_ticks = [(y(v), v) for v in (round(floor_acc + k * step, 2) for k in range(11)) if v <= 1.0001]
    x_ticks = [(x(v), v) for v in _latency_ticks(low, high)]

    # Every label is kept LABEL_GAP * 2 from those placed before it, whichever side of its point it runs: a label
    # running right from a fast point and one running left from a slow point can meet in between.
    placed, taken = [], []
    for item in sorted(items, key=lambda i: (-i.accuracy, i.p95_s)):
        px, py = x(item.p95_s), y(item.accuracy)
        # a label runs to the right of its point unless it would leave the chart: about 7 units a character
        width = 7 * max(len(getattr(item, "label", "")), 24)
        anchor = "end" if px + 8 + width > T_WIDTH else "start"
        label_y = _label_y(py, taken, highest=top + 10, lowest=bottom - 4 - LABEL_LINES)
        taken.append(label_y)
        placed.append(
            (item, TradeoffPoint(px, py, px + (8 if anchor == "start" else -8), label_y, anchor, item))
        )
    order = {id(item): n for n, item in enumerate(items)}
    points = [p for _, p in sorted(placed, key=lambda pair: order[id(pair[0])])]

    front = sorted((p for p in points if p.item.key in front_keys), key=lambda p: p.x)
    path = ""
    for n, p in enumerate(front):
        path += f"M{p.x} {p.y}" if n == 0 else f" H{p.x} V{p.y}"
    return TradeoffChart(points, path, x_ticks, y_ticks, (left, top, right, bottom))
