"""The dashboard in a real browser, on the demo data with the real local engines: log in, open a call, play a line,
move through it with the keys, open the flag form (its bank the one remembered), see the confirmation asked when the
text is the live transcript's, flag the line and watch its results per candidate, and its control line's, complete
while the page polls; read the leaderboard, the results with the weekly trend and the tag breakdown, the turn table
and its CSV; see a run whose candidate is the calls' live transcriber warn before it starts; fit every page at a
phone's width (390 px); see a member's home page and the member refused. axe-core checks every page (no serious or
critical violation) and no page breaks the Content-Security-Policy."""

import csv
import io
import json
import re
from importlib import import_module
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.core.management import call_command

from oncore.calls.models import Line
from oncore.transcribers.models import Transcriber
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.lib import scoring
from transcriber_tests.models import Bank, Flag, Run
from transcriber_tests.queries import snapshots
from transcriber_tests.queries.lines import why_not_flaggable
from transcriber_tests.work import tasks
from transcriber_tests.work import tasks as run_tasks

from .figures import (
    check_cards,
    check_filtered_cards,
    check_marks,
    check_tenant_table,
    check_tradeoff,
    check_trust,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# How long a candidate took on a line, under its score in a cell (a streaming one: its time to final).
TOOK = r"\s*(took|time to final) \d[\d.,]* (ms|s)"
ENTITIES = r"(\s*[✓✗]\s*(kept|lost):\s*[^\n]+ (name|time|date|number|id))+"  # each entity said, kept or lost


def restore_the_seeded_catalogue():
    """A transactional test run before this one empties every table, the catalogue its migrations seeded
    included; the demo needs it. (serialized_rollback cannot bring it back: the content types that the empty
    tables' post_migrate signal made again collide with the saved ones.)"""
    if Transcriber.objects.exists():
        return
    for migration, step in (
        ("0002_seed_catalogue", "seed"),
        ("0004_catalogue_2026_11", "update"),
        ("0005_streaming", "seed"),  # the demo's streaming candidate
    ):
        getattr(import_module(f"oncore.transcribers.migrations.{migration}"), step)(apps, None)


# Every page reports a Content-Security-Policy violation as a console error, which the test collects.
REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", function (e) {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " on " + e.documentURI);
});
"""


def watch_for_errors(context) -> list[str]:
    """Console errors (CSP violations included, as Chromium reports them and as the script above does) and
    uncaught page errors of every page the context opens."""
    errors = []
    context.add_init_script(REPORT_CSP_VIOLATIONS)

    def on_page(page):
        page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))

    context.on("page", on_page)
    return errors


def figures_land(page, selector: str) -> None:
    """The queue computes the figures the page asked for (snapshots.py: a worker does it in production; here the
    test's own drain), and the page's poll shows them."""
    for _ in range(40):
        snapshots.drain()
        if page.locator(selector).count():
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"{selector} never showed")


def log_in(page, base, username, password):
    page.goto(f"{base}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")


def said(line) -> str:
    """What the demo's caller really said on this line (the script the audio was made from)."""
    data = json.loads((Path(settings.BASE_DIR) / "fixtures" / "demo" / "calls.json").read_text())
    spec = next(c for c in data["calls"] if c["external_id"] == line.call.external_id)
    return spec["lines"][line.position]["said"]


def flaggable_line():
    """The first caller line the live transcriber got wrong that can be flagged, in a call nobody flagged yet (so its
    flag draws a control line)."""
    for line in (
        Line.objects.filter(speaker="caller", flag__isnull=True)
        .exclude(call__lines__flag__isnull=False)
        .select_related("call")
        .order_by("call_id", "position")
    ):
        if why_not_flaggable(line) is None and not scoring.score_line(said(line), line.text).match:
            return line
    raise AssertionError("the demo has no flaggable caller line that the live transcriber got wrong")


WIDER_THAN_THE_WINDOW = """() => {
  const width = window.innerWidth, wide = [];
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    let inside = false;  // inside a box that scrolls (or clips) on its own
    for (let p = el.parentElement; p && !inside; p = p.parentElement) {
      inside = ["auto", "scroll", "hidden"].includes(getComputedStyle(p).overflowX);
    }
    if (box.right > width + 1 && !inside) { wide.push(`${el.tagName.toLowerCase()}.${el.className} ${Math.round(box.right)}px`); }
  }
  return wide;
}"""


def too_wide(page) -> list[str]:
    """What sticks out past the window's right edge (nothing should: tables scroll inside their own box)."""
    if page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"):
        return []
    return page.evaluate(WIDER_THAN_THE_WINDOW) or ["the page is wider than the window"]


def doc_picture(page, screenshots, name):
    """The dashboard guide's picture of this screen (docs/dashboard.md shows the copies under docs/images/): the
    window's first 1280 x 760 pixels, so it stays small. `scripts/dashboard_pictures.sh` copies them there."""
    folder = screenshots.parent / "docs"
    folder.mkdir(exist_ok=True)
    page.screenshot(path=str(folder / name), clip={"x": 0, "y": 0, "width": 1280, "height": 760})


def test_it_walks_the_admin_and_supervisor_flow_axe_clean_at_desktop_and_phone_widths(
    browser, live_server, screenshots, settings, tmp_path, axe
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False  # the live server speaks plain HTTP
    restore_the_seeded_catalogue()
    call_command("load_demo", flags=4, no_runs=True)  # the demo's four oldest flags, made by demo-admin
    bank = Bank.objects.get(name="English")
    org = bank.organization
    actions.do_create_bank(
        org, name="Spare"
    )  # two more banks: the form's default is remembered, not the only one
    live_check = actions.do_create_bank(org, name="Live check", controls_per_flag=0)
    actions.do_add_candidate(live_check, Transcriber.objects.get(slug="whisper-tiny-en"), confirmed=True)
    tasks.drain()  # the demo's flags scored by the real local engines
    base = live_server.url
    line = flaggable_line()
    truth = said(line)
    row_id = f"#line-{line.pk}"

    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    errors = watch_for_errors(context)
    page = context.new_page()
    log_in(page, base, "demo-admin", "demo-admin-pass")
    assert "/calls/" in page.url
    axe(page, "calls")

    page.goto(f"{base}/calls/{line.call_id}/")
    assert "script-src 'self'" in page.evaluate(
        "() => fetch(location.href).then(r => r.headers.get('content-security-policy'))"
    )
    assert "j / k next / previous caller line" in page.inner_text("#keys-help")
    axe(page, "call")
    row = page.locator(row_id)
    with page.expect_response(lambda r: f"/lines/{line.pk}/audio.wav" in r.url) as played:
        row.get_by_role("button", name=f"Play line {line.position + 1}").click()
    assert played.value.status in (200, 206)
    assert played.value.headers["content-type"] == "audio/wav"

    # Keyboard: the line just played is the current one; j moves to the next caller line, k back; f opens its
    # flag form with the cursor in the expected-text box; Esc closes it; p plays it.
    def current() -> str:
        return page.evaluate("() => document.querySelector('li.line.current').id")

    assert current() == row_id[1:]
    page.keyboard.press("j")
    assert current() != row_id[1:] and "caller" in page.locator("li.line.current").get_attribute("class")
    page.keyboard.press("k")
    assert current() == row_id[1:]
    form = page.locator(f"{row_id} form.flag-form")

    def press_f() -> None:
        """f opens the form in place, and htmx has settled it (the cursor is in the box) before anything clicks it."""
        page.keyboard.press("f")
        form.wait_for()
        page.wait_for_function(
            "() => document.activeElement && document.activeElement.name === 'expected_text'"
        )
        assert page.url == f"{base}/calls/{line.call_id}/"

    press_f()
    # The bank is the one demo-admin flagged into last (the demo's flags), not "No bank"; no bank is one choice away.
    assert form.locator("select[name=bank]").input_value() == str(bank.pk)
    assert form.locator("select[name=bank] option", has_text="No bank").count() == 1
    axe(page, "call with the flag form")
    page.keyboard.press("Escape")
    form.wait_for(state="detached")
    # f at once, before htmx has settled the row it swapped back in, still opens the form in place (it once
    # followed the link as a page load).
    press_f()
    page.keyboard.press("Escape")
    form.wait_for(state="detached")
    page.keyboard.press("p")  # plays the current line: its button turns into Stop
    assert page.locator(f"{row_id} button.play").get_attribute("aria-pressed") == "true"
    page.keyboard.press("p")
    assert page.locator(f"{row_id} button.play").get_attribute("aria-pressed") == "false"
    press_f()

    # The form opens with the live transcript: saved as it is, the line would not be wrong. It says so first.
    assert form.locator("textarea[name=expected_text]").input_value() == line.text
    form.get_by_role("button", name="Flag line").click()
    confirm = page.locator(f"{row_id} .confirm-live")
    confirm.wait_for()
    page.wait_for_function("() => document.activeElement && document.activeElement.name === 'expected_text'")
    assert "The live transcript already says this" in page.locator(row_id).inner_text()
    assert confirm.get_by_role("checkbox").is_visible() and not Flag.objects.filter(line=line).exists()
    page.screenshot(path=str(screenshots / "flag-form-matches-live.png"), full_page=True)
    form.locator("textarea[name=expected_text]").fill(truth)
    form.locator("input[value=name]").check()
    assert form.locator("select[name=bank]").input_value() == str(bank.pk)  # still the remembered bank
    page.screenshot(path=str(screenshots / "call-page-flag-form.png"), full_page=True)
    form.get_by_role("button", name="Flag line").click()
    page.locator(f"{row_id} .flag-box").wait_for()
    flag = Flag.objects.get(line=line, bank=bank)

    # The request wrote the flag; the queue draws its control line, and the line's results per candidate and its
    # control line's arrive while the page polls.
    results = page.locator(f"#flag-results-{flag.pk}")
    assert "pending" in results.inner_text() and "Transcribing and scoring" in results.inner_text()
    assert not flag.settled and "No control line" not in results.inner_text()
    axe(page, "call with results pending")
    page.screenshot(path=str(screenshots / "call-page-flag-made.png"), full_page=True)
    tasks.drain()  # the queue runs while the page polls
    results.locator(".progress").wait_for(state="detached", timeout=60_000)
    control = flag.controls.select_related("line").get()
    text = results.inner_text()
    assert f"Control: line {control.line.position + 1}" in text
    # Whisper base, plain and with the demo's vocabulary, on the line and on its control.
    assert "pending" not in text and text.count("Whisper base (local)") == 4
    assert text.count("Whisper base (local) + Names and menu") == 2
    assert "<span" not in text and "&lt;" not in text  # markup is drawn, never shown as text
    for cell in results.locator("tbody tr td").all_inner_texts():  # each reads as a person expects
        assert re.fullmatch(
            rf"(?s).*(✓ match|WER \d+\.\d\d|✗ (error|no text|failed).*)({ENTITIES})?({TOOK})?", cell.strip()
        ), cell
    axe(page, "call with results")
    page.screenshot(path=str(screenshots / "call-page.png"), full_page=True)
    doc_picture(page, screenshots, "call-page.png")

    # The leaderboard, then the bank's results with the trend and the tag breakdown.
    page.goto(f"{base}/banks/")
    board = page.locator("table.leaderboard").inner_text()
    english = page.locator(
        "table.leaderboard tbody tr", has=page.locator(f'a[href="/banks/{bank.pk}/?window=30"]')
    ).inner_text()
    assert "★" in english and "n=2" in english and "1 of 5" in english, (
        english
    )  # today's flag and its control
    assert "nothing scored yet" in board and "no candidates" in board  # Live check, Spare
    # Where the lead comes from, as a newcomer reads it on the demo's own data.
    assert re.search(r"fixed \d+ of \d+ flagged lines? · kept \d+ of \d+ controls?", english), english
    axe(page, "leaderboard")
    page.screenshot(path=str(screenshots / "leaderboard.png"), full_page=True)
    doc_picture(page, screenshots, "leaderboard.png")
    page.goto(f"{base}/banks/{bank.pk}/?window=90")
    # Whisper base, PocketSphinx and the streaming Whisper tiny.en: the demo bank's candidates.
    assert page.locator(".result-card").count() == bank.candidates.count() >= 2
    assert "Leader" in page.locator(".verdict").inner_text()
    lead = " ".join(page.locator("#lead-source").inner_text().split())
    leader_name = Bank.objects.get(pk=bank.pk).candidates.first().transcriber.display_name
    assert lead.startswith("Where the lead comes from: ") and re.search(
        r"fixed \d+ of \d+ flagged lines? · kept \d+ of \d+ controls?", lead
    ), lead
    assert leader_name in lead or "PocketSphinx" in lead, lead
    for card in page.locator(".result-card").all():
        assert re.search(r"fixed \d+ of \d+ flagged lines? · kept \d+ of \d+ controls?", card.inner_text())
    trends = page.locator("figure.trend")
    assert trends.count() == bank.candidates.count() and trends.first.locator("svg circle.point").count() >= 2
    assert "Week ending" in trends.first.locator("desc").text_content()
    tags = page.locator("table.tag-table").inner_text()
    assert "name" in tags and "time" in tags and "n=" in tags
    # Accuracy beside latency and cost: each card's figures, the chart with its text alternative and its table,
    # and the per-tenant table, whose figures are a direct count of the scores.
    names = [n.strip() for n in page.locator(".result-card header h2").all_inner_texts()]
    check_cards(page, names)
    check_tradeoff(page, names)
    tenants = check_tenant_table(page, bank, names)
    volume = " ".join(page.locator("section.tradeoff p.volume").inner_text().split())
    assert re.match(r"Your volume: \d+ calls? with [\d.,]+ minutes? of caller audio", volume), volume
    page.locator("section.tradeoff").screenshot(path=str(screenshots / "tradeoff-1280.png"))
    (screenshots.parent / "docs").mkdir(exist_ok=True)
    box = page.locator(
        "section.tradeoff"
    ).bounding_box()  # the chart and its table, not the catalogue's prices
    top = box["y"] + page.evaluate("() => window.scrollY")
    page.screenshot(
        path=str(screenshots.parent / "docs" / "tradeoff.png"),
        clip={"x": 0, "y": top, "width": 1280, "height": min(box["height"], 860)},
        full_page=True,
    )
    page.locator('section.group-breakdown[aria-labelledby="by-tenant-title"]').screenshot(
        path=str(screenshots / "tenants-1280.png")
    )
    # The trust figures and the confusion pairs load after the page, computed by the queue the first time.
    figures_land(page, "section#trust")
    axe(page, "results")
    page.screenshot(path=str(screenshots / "results.png"), full_page=True)
    doc_picture(page, screenshots, "results.png")

    # The filter by tenant recomputes the cards on that tenant's calls: their n are the tenant's row.
    tenant, row = max(tenants.items(), key=lambda kv: int(kv[1][0]))
    with page.expect_navigation():
        page.locator("select[name=tenant]").select_option(label=tenant)
    assert "tenant=" in page.url
    check_filtered_cards(page, tenant, row, names)
    axe(page, "results of one tenant")
    page.screenshot(path=str(screenshots / "results-one-tenant.png"), full_page=True)

    # How far to trust the lead, and what each candidate gets wrong, on a page of their own.
    page.goto(f"{base}/banks/{bank.pk}/trust/?window=90")
    check_trust(page, names)
    axe(page, "trust")
    page.screenshot(path=str(screenshots / "trust.png"), full_page=True)
    doc_picture(page, screenshots, "trust.png")
    # A confusion pair opens the turn-table lines where it happens, each marked in that candidate's cell.
    pair = page.locator("#confusions td.pair a").first
    pair_of = (
        page.locator("#confusions td.pair a")
        .first.locator("xpath=ancestor::table")
        .get_attribute("aria-label")
        .removeprefix("Confusion pairs of ")
    )
    label = pair.inner_text().strip()
    pair.click()
    page.wait_for_load_state("networkidle")
    note = " ".join(page.locator("p.caution", has_text="Only the lines where").inner_text().split())
    assert f"Only the lines where {pair_of}" in note, note
    shown = page.locator("table.turns tbody tr")
    assert shown.count() >= 1 and check_marks(page, [pair_of]) == shown.count(), label
    expected_word, heard = (w.strip() for w in label.split("→"))
    cells = page.locator(f'table.turns tbody td[data-label="{pair_of}"]')
    for i in range(cells.count()):
        if heard == "(left out)":
            words = [w.lower() for w in cells.nth(i).locator("del.missed").all_inner_texts()]
            assert any(expected_word in w for w in words), (label, words)
        elif expected_word == "(added)":
            words = [w.lower() for w in cells.nth(i).locator("ins.added").all_inner_texts()]
            assert any(heard in w for w in words), (label, words)
        else:
            subs = [" ".join(s.lower().split()) for s in cells.nth(i).locator(".sub").all_inner_texts()]
            assert any(expected_word in s and heard in s for s in subs), (label, subs)
    axe(page, "turn table of one confusion pair")

    page.get_by_role("link", name="Turn by turn").click()
    page.wait_for_load_state("networkidle")
    table = page.locator("table.turns")
    assert truth in table.inner_text() and "<span" not in table.inner_text()
    # the time each candidate took is under its score: read apart (it varies), present under every text
    cells = [c.strip() for c in table.locator("tbody td[data-label]").all_inner_texts()]
    took = [c for c in cells if re.search(rf"{TOOK}$", c)]
    cells = [re.sub(rf"({ENTITIES})?$", "", re.sub(rf"{TOOK}$", "", c).strip()).strip() for c in cells]
    assert took, cells
    matched = [c for c in cells if c.endswith("✓ match")]
    wer = [c for c in cells if re.search(r"WER \d+\.\d\d$", c)]
    assert matched and wer, cells  # the demo's flags: some lines matched, some not
    assert all(not c.startswith("<") for c in cells)
    # The words of each cell that did not match are marked: the marks are its S, D and I, and give its WER.
    assert check_marks(page, names) >= 1
    assert (
        "struck through, a word that was said but missed or misheard"
        in page.locator(".marks-legend").inner_text()
    )
    axe(page, "turn table")
    page.screenshot(path=str(screenshots / "turn-table.png"), full_page=True)
    doc_picture(page, screenshots, "turn-table.png")

    with page.expect_download() as download:
        page.get_by_role("link", name="Export turn table CSV").click()
    text = open(download.value.path(), encoding="utf-8-sig").read()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["source"] for r in rows} == {"live", "candidate"}
    assert any(r["expected_text"] == truth for r in rows)

    # A run whose candidate is the calls' live transcriber says so before it starts.
    page.goto(f"{base}/banks/{live_check.pk}/runs/new/?call={line.call_id}")
    page.locator("#id_candidate").select_option(label="Whisper tiny.en (local)")
    page.get_by_role("button", name="Estimate cost").click()
    page.wait_for_load_state("networkidle")
    note = page.locator(".warning-note")
    assert "is the live transcriber of this call" in note.inner_text()
    assert "can only measure the recording path" in note.inner_text()
    axe(page, "run estimate")
    page.screenshot(path=str(screenshots / "run-estimate-live-candidate.png"), full_page=True)

    # A full-call run of Whisper base over the flagged call, with no judge configured: its page says its lines
    # are not labelled (never "Breaks 0") and shows each calibration replay's text.
    run = run_actions.do_start_run(
        bank, [line.call_id], candidate=Transcriber.objects.get(slug="whisper-base"), confirmed=True
    )
    assert run_tasks.drain_run(run.pk, max_seconds=300) == Run.DONE
    page.goto(f"{base}/runs/{run.pk}/")
    breaks = " ".join(page.get_by_role("article", name="Breaks").inner_text().split())
    if run.lines.filter(differs=True, label="").exists():  # lines the judge would label: not a zero
        assert "not labelled" in breaks and "the judge is not configured on this server" in breaks, breaks
    assert "Replay through the live transcriber" in page.locator("main").inner_text()
    axe(page, "run")
    page.screenshot(path=str(screenshots / "run.png"), full_page=True)
    doc_picture(page, screenshots, "run.png")

    for path, name in [
        ("/benchmark/", "benchmark"),
        ("/settings/api-keys/", "API keys"),
    ]:
        page.goto(f"{base}{path}")
        axe(page, name)
    page.goto(f"{base}/benchmark/")
    page.get_by_role("link", name="Code-switching").click()
    page.wait_for_load_state("networkidle")
    assert "/benchmark/codeswitch/" in page.url
    axe(page, "code-switching")
    context.close()

    # A phone's width: every page of the walk fits, tables scroll inside their box, cards stack.
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    errors += watch_for_errors(phone)
    page = phone.new_page()
    log_in(page, base, "demo-admin", "demo-admin-pass")
    for path, name, shot in [
        (f"/banks/{bank.pk}/?window=90", "results at 390 px", "results-390.png"),
        (f"/calls/{line.call_id}/", "call at 390 px", "call-page-390.png"),
        ("/banks/", "leaderboard at 390 px", "leaderboard-390.png"),
        (f"/banks/{bank.pk}/turns/", "turn table at 390 px", "turn-table-390.png"),
        (f"/banks/{bank.pk}/trust/?window=90", "trust at 390 px", "trust-390.png"),
        (f"/runs/{run.pk}/", "run at 390 px", "run-390.png"),
        ("/calls/", "calls at 390 px", None),
        (f"/banks/{live_check.pk}/runs/new/?call={line.call_id}", "new run at 390 px", None),
    ]:
        page.goto(f"{base}{path}")
        page.wait_for_load_state("networkidle")
        assert not too_wide(page), (name, too_wide(page))
        if "turn table" in name:  # its rows stack: every cell is on screen, under its column's name
            for cell in page.locator("table.turns tbody td[data-label]").all()[:12]:
                box = cell.bounding_box()
                assert box and box["x"] >= 0 and box["x"] + box["width"] <= 391, box
        if (
            name == "results at 390 px"
        ):  # the chart and the tenant table, and their text alternatives, on a phone
            check_tradeoff(page, names)
            check_tenant_table(page, bank, names)
            page.locator("section.tradeoff").screenshot(path=str(screenshots / "tradeoff-390.png"))
            page.locator('section.group-breakdown[aria-labelledby="by-tenant-title"]').screenshot(
                path=str(screenshots / "tenants-390.png")
            )
            page.locator("section#trust").wait_for()
        if name == "trust at 390 px":
            check_trust(page, names)
        axe(page, name)
        if shot:
            page.screenshot(path=str(screenshots / shot), full_page=True)
    phone.close()

    member = browser.new_context()
    errors += watch_for_errors(member)
    page = member.new_page()
    log_in(page, base, "demo-member", "demo-member-pass")
    assert "What you can do" in page.inner_text("main") and "demo-admin" in page.inner_text("main")
    assert page.locator("nav a").count() == 0  # nothing of transcriber testing
    axe(page, "member home")
    response = page.goto(f"{base}/banks/{bank.pk}/")
    assert response.status == 403
    assert "for organization admins" in page.inner_text("main")
    member.close()
    # The pages ran under the Content-Security-Policy (no inline script or style) without a violation.
    violations = [e for e in errors if "Content Security Policy" in e or "CSP violation" in e]
    assert not violations, "\n".join(violations)
    # 403 and 422 answers are by design; a 500 (htmx reports it as "Response Status Error Code 500") is not.
    others = [e for e in errors if "Failed to load resource" not in e]
    assert not others, "\n".join(others)
