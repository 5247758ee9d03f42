"""The code-switching report's pictures, drawn on the server as SVG: heat maps of per-language WER and of where
errors fall, and the bars of the code-switching cost. Every text in them is escaped here, so the page may mark
them safe.

    pictures = report_pictures(report)   # {"per_language", "location", "cost"}: SVG strings
"""

import math
from html import escape

from oncore.templatetags.oncore_tags import percent

from .report import Report

NOT_SPOKEN = "not spoken"  # a heat map cell of a language outside the row's pair: "—"


def _color(value: float | None) -> str:
    """White (0) through orange to red (1 or more); grey when there is no figure."""
    if value is None:
        return "#eeeeee"
    t = max(0.0, min(value, 1.0))
    green_blue = int(255 - 200 * t), int(255 - 230 * t)
    return f"rgb(255,{green_blue[0]},{green_blue[1]})"


def heat_map_svg(title: str, row_labels: list, column_labels: list, values: list) -> str:
    """A table of coloured cells: values[i][j] (fractions, None for no figure, NOT_SPOKEN for a language outside
    the row's pair: "—") for row i, column j."""
    left, top, cell_w, cell_h = 260, 46, 90, 28
    width = left + cell_w * max(len(column_labels), 1) + 10
    height = top + cell_h * max(len(row_labels), 1) + 10
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<text x="4" y="16" font-weight="bold">{escape(title)}</text>',
    ]
    for j, column in enumerate(column_labels):
        x = left + j * cell_w + cell_w / 2
        parts.append(f'<text x="{x:.0f}" y="{top - 8}" text-anchor="middle">{escape(str(column))}</text>')
    for i, row in enumerate(row_labels):
        y = top + i * cell_h
        parts.append(f'<text x="{left - 8}" y="{y + 18}" text-anchor="end">{escape(str(row))}</text>')
        for j, value in enumerate(values[i]):
            x = left + j * cell_w
            if value == NOT_SPOKEN:
                figure, fill, said = "—", "#f7f7f7", "not spoken in this pair"
            else:
                figure = said = percent(value, 0)
                fill = _color(value)
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{fill}">'
                f"<title>{escape(str(row))}, {escape(str(column_labels[j]))}: {said}</title></rect>"
                f'<text x="{x + cell_w / 2 - 1:.0f}" y="{y + 18}" text-anchor="middle">{figure}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def cost_bars_svg(title: str, labels: list, series: dict) -> str:
    """Horizontal bars around a zero line: for each label one bar per series ({name: [value or None]}),
    in WER points; positive (to the right) means code-switching costs accuracy. The scale stops at 100 points,
    so one hallucinated clip does not flatten every other bar: a longer bar ends in an arrow, its figure
    written beside it."""
    names = list(series)
    colors = ["#d9822b", "#4a7ebb", "#6aa84f"]
    finite = [abs(v) for values in series.values() for v in values if v is not None and math.isfinite(v)]
    scale_max = min(max(finite + [0.05]), 1.0)
    left, top, bar_h, half = 260, 50, 14, 180
    group_h = bar_h * len(names) + 10
    width = left + 2 * half + 70
    height = top + group_h * max(len(labels), 1) + 10
    zero = left + half
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<text x="4" y="16" font-weight="bold">{escape(title)}</text>',
    ]
    for k, name in enumerate(names):
        x = left + k * 170
        parts.append(
            f'<rect x="{x}" y="26" width="10" height="10" fill="{colors[k % 3]}"/>'
            f'<text x="{x + 14}" y="35">{escape(name)}</text>'
        )
    parts.append(f'<line x1="{zero}" y1="{top - 4}" x2="{zero}" y2="{height - 6}" stroke="#333"/>')
    for i, label in enumerate(labels):
        y0 = top + i * group_h
        parts.append(
            f'<text x="{left - 8}" y="{y0 + bar_h + 2}" text-anchor="end">{escape(str(label))}</text>'
        )
        for k, name in enumerate(names):
            value = series[name][i]
            y = y0 + k * bar_h
            if value is None:
                parts.append(f'<text x="{zero + 4}" y="{y + bar_h - 3}" fill="#777">no pairs</text>')
                continue
            length = half * min(abs(value), scale_max) / scale_max
            sign = 1 if value >= 0 else -1
            x = zero if value >= 0 else zero - length
            end = zero + sign * length
            text_x = end + sign * (12 if abs(value) > scale_max else 4)
            anchor = "start" if value >= 0 else "end"
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{length:.1f}" height="{bar_h - 2}" fill="{colors[k % 3]}">'
                f"<title>{escape(str(label))}, {escape(name)}: {value * 100:+.1f} points</title></rect>"
            )
            if abs(value) > scale_max:  # off the scale: an arrow head past the bar's end
                tip, mid = end + sign * 8, y + (bar_h - 2) / 2
                parts.append(
                    f'<polygon points="{end:.1f},{y - 1} {tip:.1f},{mid:.1f} {end:.1f},{y + bar_h - 1}" '
                    f'fill="{colors[k % 3]}"/>'
                )
            parts.append(
                f'<text x="{text_x:.1f}" y="{y + bar_h - 3}" text-anchor="{anchor}">{value * 100:+.1f}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def report_pictures(report: Report) -> dict:
    labels = [row.name for row in report.rows]
    return {
        "per_language": heat_map_svg(
            "Per-language WER, code-switched clips",
            labels,
            report.languages,
            [
                [
                    row.per_language.get(lang) if lang in row.pair_languages else NOT_SPOKEN
                    for lang in report.languages
                ]
                for row in report.rows
            ],
        ),
        "location": heat_map_svg(
            "Errors per word, matrix vs embedded language",
            labels,
            ["matrix", "embedded"],
            [[row.matrix_wer, row.embedded_wer] for row in report.rows],
        ),
        "cost": cost_bars_svg(
            "Code-switching cost: mean delta WER (points)",
            labels,
            {
                "vs matrix language": [row.cost_vs_matrix.mean_delta for row in report.rows],
                "vs English": [row.cost_vs_english.mean_delta for row in report.rows],
            },
        ),
    }
