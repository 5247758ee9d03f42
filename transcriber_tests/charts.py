"""The weekly trend drawn as SVG coordinates (the results page draws them on the server: no chart library, no
inline style). Pure: weeks in, coordinates out."""

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
