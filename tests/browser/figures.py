"""What a person reads on the results page's decision figures (accuracy beside latency and cost, the trade-off
chart and its text table, the per-tenant table and its filter), on the trust page (call-level intervals, the flags
planner, the confusion pairs) and in the turn table's word marks, checked in the browser walk
(test_dashboard_browser.py). Each helper reads the page as it is drawn and asserts what the words and numbers say,
against each other and, where a person would check them by hand, against a direct count of the rows."""

import re

from django.db.models import Count, Q

from oncore.templatetags.oncore_tags import percent
from transcriber_tests.lib import scoring
from transcriber_tests.models import Score

LATENCY = r"\d+ ms|\d+\.\d\d s|\d+\.\d s"  # tradeoffs.seconds_words
INTERVAL = r"(\d+(?:\.\d)?)–(\d+(?:\.\d)?)%"


def boxes_overlap(a, b, slack=4) -> bool:
    """Two text boxes cross by more than `slack` pixels both ways (a text's box holds its line's ascent and
    descent, so lines that only touch are not an overlap a person sees)."""
    across = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    down = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return across > slack and down > slack


def _sentence_of(desc: str, name: str, names: list[str]) -> str:
    """The part of the chart's description about one candidate: from its name to the next one's, or to the end."""
    start = desc.index(f"{name}: ")
    ends = [desc.find(f"{other}: ", start + 1) for other in names if other != name]
    ends = [e for e in ends if e > start] + [desc.index("The same figures are in the table below.")]
    return desc[start : min(ends)]


def row_header(page, name: str):
    """The row header that names this candidate whole (with a leader's star): "Whisper base (local)" is also
    the start of "Whisper base (local) + Names and menu"."""
    return page.locator("th").filter(has_text=re.compile(rf"^\s*(★ )?{re.escape(name)}(\s*★ leader)?\s*$"))


def check_tradeoff(page, names: list[str]) -> dict:
    """The trade-off section: the chart's title and description (its text alternative) name every candidate with
    the figures of its row in the table beside it; each drawn point has a label that stays inside the chart and
    overlaps no other label; each row reads accuracy with n, p50, p95 with n, a price and a monthly figure.
    Returns {candidate: its table row's cells}."""
    section = page.locator("section.tradeoff")
    chart = section.locator("svg.tradeoff-chart")
    assert chart.get_attribute("role") == "img"
    assert chart.get_attribute("aria-labelledby") == "tradeoff-chart-title tradeoff-chart-desc"
    title = chart.locator("#tradeoff-chart-title").text_content()
    desc = " ".join(chart.locator("#tradeoff-chart-desc").text_content().split())
    assert re.match(r"Accuracy against p95 (latency|time to final)", title), title
    assert desc.endswith("The same figures are in the table below."), desc
    assert (
        section.locator("table.tradeoff-table caption")
        .inner_text()
        .startswith("Each candidate's accuracy, latency and cost")
    )
    rows = {}
    for name in names:
        row = section.locator("table.tradeoff-table tbody tr", has=row_header(page, name))
        assert row.count() == 1, name
        cells = [" ".join(c.split()) for c in row.locator("td").all_inner_texts()]
        accuracy, p50, p95, _rtf, price, _per_lines, month, _against, _best = cells
        assert re.fullmatch(r"\d+\.\d% n=\d+", accuracy), (name, accuracy)
        # a streaming one's says so, and says when its replays were paced off schedule (a busy machine)
        assert re.fullmatch(rf"({LATENCY})( time to final)?( Measured off schedule: .+)?", p50), (name, p50)
        assert re.fullmatch(rf"({LATENCY}) n=\d+", p95), (name, p95)
        assert price == "free (runs on this server)" or re.fullmatch(r"\$[\d,.]+ per 1,000 min", price), price
        assert month.startswith("free") or month.startswith("$"), month
        # The text alternative says what the table says: the same accuracy, n and p95 for this candidate.
        sentence = _sentence_of(desc, name, names)
        assert f"{accuracy.split()[0]} accurate on {accuracy.split('=')[1]} line" in sentence, (
            sentence,
            accuracy,
        )
        p95_value, p95_n = p95.split(" n=")
        assert re.search(rf"p95 (latency|time to final) {p95_value} \(n={p95_n}\)", sentence), (sentence, p95)
        assert price in sentence, (sentence, price)
        rows[name] = cells
    # The drawn points: one per candidate with a latency, each labelled with its name; labels inside the chart.
    frame = chart.bounding_box()
    labels = chart.locator("text.point-label")
    assert chart.locator("circle.point").count() == labels.count() == len(rows)
    label_boxes = []
    for i in range(labels.count()):
        text = labels.nth(i).text_content()
        assert any(name in text for name in names), text
        box = labels.nth(i).bounding_box()
        inside = (
            box["x"] >= frame["x"] - 1
            and box["x"] + box["width"] <= frame["x"] + frame["width"] + 1
            and box["y"] >= frame["y"] - 1
            and box["y"] + box["height"] <= frame["y"] + frame["height"] + 1
        )
        assert inside, f"the chart's label {text!r} sticks out of the chart: {box} outside {frame}"
        label_boxes.append((text, box))
    overlaps = [
        f"the chart's labels {a_text!r} and {b_text!r} overlap"
        for i, (a_text, a) in enumerate(label_boxes)
        for b_text, b in label_boxes[i + 1 :]
        if boxes_overlap(a, b)
    ]
    assert not overlaps, overlaps
    return rows


def check_cards(page, names: list[str]) -> None:
    """Each result card reads its latency p50 / p95 with n, its price, and what switching to it would cost."""
    for name in names:
        card = " ".join(page.locator(f'article.result-card[aria-label="{name}"]').inner_text().split())
        assert re.search(rf"(Latency|Time to final) p50 / p95 ({LATENCY}) / ({LATENCY}) n=\d+", card), card
        assert f"Switching to {name}:" in card and "a month at your last 30 days' volume" in card, card


def direct_counts(bank) -> dict:
    """{(tenant name, candidate name): (scored, matched)}: the bank's candidate scores counted straight from the
    rows, by the tenant of the line's call."""
    rows = (
        Score.objects.filter(flag__bank=bank, source=Score.CANDIDATE, failed=False)
        .values("flag__line__call__tenant__name", "transcriber__display_name")
        .annotate(scored=Count("id"), matched=Count("id", filter=Q(match=True)))
    )
    return {
        (r["flag__line__call__tenant__name"], r["transcriber__display_name"]): (r["scored"], r["matched"])
        for r in rows
    }


def check_tenant_table(page, bank, names: list[str]) -> dict:
    """The per-tenant table: a row per tenant of the window's calls, each candidate's accuracy with n equal to a
    direct count of the scores, ★ on the best of a row where one got a line right. Returns {tenant: row}."""
    section = page.locator('section.group-breakdown[aria-labelledby="by-tenant-title"]')
    table = section.locator("table.group-table")
    assert table.locator("caption").text_content().startswith("Each candidate's accuracy by tenant")
    headers = [" ".join(h.split()) for h in table.locator("thead th").all_inner_texts()]
    assert headers == ["Tenant", "Lines", *names], headers
    counts = direct_counts(bank)
    found = {}
    for row in table.locator("tbody tr").all():
        tenant = row.locator("th a").inner_text().strip()
        cells = [" ".join(c.split()) for c in row.locator("td").all_inner_texts()]
        found[tenant] = cells
        for name, cell in zip(names, cells[1:], strict=True):
            scored, matched = counts.get((tenant, name), (0, 0))
            if scored:
                assert cell.removeprefix("★ ") == f"{percent(matched / scored, 0)} n={scored}", (
                    tenant,
                    name,
                    cell,
                )
            else:
                assert cell == "—", (tenant, name, cell)
        stars = sum(c.startswith("★") for c in cells[1:])
        any_right = any(counts.get((tenant, n), (0, 0))[1] for n in names)
        assert stars == (1 if any_right else 0), (tenant, cells)
    assert len(found) >= 2, found  # the demo's flags come from more than one tenant's calls
    return found


def check_filtered_cards(page, tenant: str, row: list[str], names: list[str]) -> None:
    """Under a tenant filter the page says so, and each card's scored lines are that tenant's row's n."""
    note = " ".join(page.locator("p.caution", has_text="Showing the lines of").inner_text().split())
    assert f"Showing the lines of tenant {tenant}'s calls only" in note, note
    for name, cell in zip(names, row[1:], strict=True):
        card = " ".join(page.locator(f'article.result-card[aria-label="{name}"]').inner_text().split())
        if cell == "—":
            assert "no scored lines yet" in card or "every line failed" in card, card
        else:
            n = int(cell.split("n=")[1])
            assert f"on {n} scored line" in card, (name, cell, card)
            assert f"{cell.removeprefix('★ ').split()[0].removesuffix('%')}" in card, (cell, card)


def _numbers(interval: str) -> tuple[float, float]:
    low, high = re.fullmatch(INTERVAL, interval).groups()
    return float(low), float(high)


def check_trust(page, names: list[str]) -> None:
    """The trust page: each candidate's accuracy with its Wilson interval and its interval from resampling calls
    (both around the accuracy), the lead in points or why there is none, one planner sentence, and each
    candidate's confusion pairs as "expected → heard" with their counts."""
    trust = page.locator("section#trust")
    table = trust.locator("table")
    headers = " ".join(table.locator("thead").inner_text().split())
    assert "95% interval, calls resampled (bootstrap)" in headers and "(Wilson)" in headers, headers
    for name in names:
        row = table.locator("tbody tr", has=row_header(page, name))
        accuracy, wilson, calls, n_calls = [" ".join(c.split()) for c in row.locator("td").all_inner_texts()]
        if accuracy == "—":
            continue
        value = float(accuracy.removesuffix("%"))
        for interval in (wilson, calls):
            low, high = _numbers(interval)
            assert low <= value <= high, (name, accuracy, interval)
        assert int(n_calls) >= 1, (name, n_calls)
    text = " ".join(trust.inner_text().split())
    assert (
        re.search(
            r"Lead of .+ over .+: [+-]\d+\.\d points, 95% interval [+-]\d+\.\d to [+-]\d+\.\d points", text
        )
        or "No runner-up to compare the leader with." in text
    ), text
    assert "10,000 times with a fixed seed" in text, text
    plan = " ".join(
        trust.locator("h3", has_text="How many more flags")
        .locator("xpath=following-sibling::*")
        .all_inner_texts()
    )
    plan = " ".join(plan.split())
    assert (
        re.search(r"About [\d,]+ more flags? With \d control", plan)
        or "The lead is already clear" in plan
        or "The candidates are too close to separate with fewer than 1,000 flags" in plan
    ), plan
    assert "computed exactly (not simulated)" in plan, plan
    for name in names:
        pairs = page.get_by_role("table", name=f"Confusion pairs of {name}", exact=True)
        caption = " ".join(pairs.locator("caption").inner_text().split())
        errors = int(re.fullmatch(rf"{re.escape(name)} (\d+) word errors?", caption).group(1))
        shown = 0
        for cells in (r.locator("td").all_inner_texts() for r in pairs.locator("tbody tr").all()):
            if len(cells) == 1:
                assert errors == 0 and "No word errors" in cells[0], cells
                continue
            pair, kind, times = (c.strip() for c in cells)
            assert re.fullmatch(r"\S+ → \S+|\S+ → \(left out\)|\(added\) → \S+", pair), pair
            assert kind in ("substitution", "deletion", "insertion"), kind
            shown += int(times.removeprefix("×"))
        assert shown <= errors, (name, shown, errors)


EDITS = re.compile(r"(\d+) (substitution|deletion|insertion)s?")


def check_marks(page, names: list[str]) -> int:
    """Every candidate cell of the turn table that did not match: its marks are the edits it lists (a struck and
    an underlined word for each substitution, a struck word for each deletion, an underlined one for each
    insertion), and those edits over the expected text's words are the WER it prints. Returns the cells read."""
    table = page.locator("table.turns")
    read = 0
    for row in table.locator("tbody tr").all():
        expected = row.locator('td[data-label="Expected"]').inner_text().strip()
        words = len(scoring.normalize(expected).split())
        for name in names:
            cell = row.locator(f'td[data-label="{name}"]')
            if not cell.count() or not cell.locator(".edits").count():
                continue
            listed = {kind: int(n) for n, kind in EDITS.findall(cell.locator(".edits").inner_text())}
            marks = {
                "substitution": cell.locator(".aligned .sub").count(),
                "deletion": cell.locator(".aligned del.missed").count(),
                "insertion": cell.locator(".aligned ins.added").count(),
            }
            assert marks == {k: listed.get(k, 0) for k in marks}, (name, expected, listed, marks)
            wer = float(cell.locator(".wer").inner_text().removeprefix("WER "))
            assert f"{sum(marks.values()) / words:.2f}" == f"{wer:.2f}", (name, expected, marks, words, wer)
            # Without colour: each mark says what it is to a screen reader.
            for sub in cell.locator(".aligned .sub").all():
                assert sub.locator("del > .visually-hidden").text_content() == "said "
                assert sub.locator("ins > .visually-hidden").text_content() == ", heard "
            read += 1
    return read
