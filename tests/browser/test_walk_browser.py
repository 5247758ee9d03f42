"""What issue 34's walk found, looked at in Chromium at 1280 and 390 px on a small bank of its own: the flag edit
page's Save and Cancel work; the trade-off chart keeps its labels off the x axis and, on a phone, says that it
scrolls; the navigation fits on one line and marks one item; the API reference is short enough to read on a
phone. Screenshots of the results, trust, leaderboard, run, edit and reference pages at both widths go to
test-artifacts/screenshots/walk-*.png."""

import pytest

from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.queries import snapshots
from transcriber_tests.work import tasks

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SAID = "Siobhan, table for four at eight thirty"

# Each point label's box against each x-axis tick label's box, and the lowest point against the axis.
CHART_OVERLAPS = """() => {
  const svg = document.querySelector("svg.tradeoff-chart");
  const boxes = sel => Array.from(svg.querySelectorAll(sel)).map(e => e.getBoundingClientRect());
  const ticks = boxes("text.label.middle:not(.axis-title)");
  const axisY = Math.max(...Array.from(svg.querySelectorAll("line.axis")).map(l => l.getBoundingClientRect().bottom));
  const hits = [];
  for (const label of boxes("text.point-label")) {
    for (const t of ticks) {
      if (label.left < t.right && t.left < label.right && label.top < t.bottom && t.top < label.bottom) { hits.push("label on a tick"); }
    }
    if (label.bottom > axisY) { hits.push("label below the axis"); }
  }
  for (const c of boxes("circle.point")) { if (c.bottom > axisY) { hits.push("point on the axis"); } }
  return hits;
}"""


def log_in(page, base):
    page.goto(f"{base}/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "pw-for-tests-1")
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")


def shoot(page, screenshots, name):
    """The window's first screen, and the whole page beside it."""
    page.screenshot(path=str(screenshots / f"walk-{name}.png"))
    page.screenshot(path=str(screenshots / f"walk-{name}-full.png"), full_page=True)


def test_the_walks_pages_read_right_at_both_widths(
    browser, live_server, screenshots, settings, tmp_path, admin_user, org, recorded_call, make_transcriber
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False  # the live server speaks plain HTTP
    # The demo's organization name, and a second organization: the switcher shows beside the navigation.
    from oncore.accounts.models import Membership, Organization

    org.name = "Demo Hospitality Group"
    org.save(update_fields=["name"])
    other = Organization.objects.create(name="Northwind Hospitality Partners", slug="northwind")
    Membership.objects.create(user=admin_user, organization=other, role="admin")
    bank = actions.do_create_bank(org, name="English")
    for name, text in (("good", SAID), ("close", "Siobhan table for four at 830"), ("zero", "no no no")):
        actions.do_add_candidate(bank, make_transcriber(name, text), confirmed=True)
    lines = list(recorded_call.lines.filter(speaker="caller").order_by("position"))
    flag = actions.do_flag_line(lines[0], SAID, bank=bank)
    actions.do_flag_line(lines[2], "my number is oh eight seven", bank=bank)
    tasks.drain()
    base = live_server.url

    desk = browser.new_context(viewport={"width": 1280, "height": 900})
    page = desk.new_page()
    log_in(page, base)

    # The navigation fits on one line at 1280 px and marks one item.
    page.goto(f"{base}/flags/unbanked/")
    tops = page.eval_on_selector_all(
        ".topbar nav a", "els => els.map(e => Math.round(e.getBoundingClientRect().top))"
    )
    assert len(set(tops)) == 1, tops
    assert page.eval_on_selector_all(
        ".topbar nav a[aria-current=page]", "els => els.map(e => e.textContent)"
    ) == ["Unbanked flags"]
    shoot(page, screenshots, "unbanked-1280")

    # The flag edit page: Cancel goes back to the line, Save saves.
    edit = f"{base}/flags/{flag.pk}/edit/"
    page.goto(edit)
    assert page.inner_text("h1") == "Edit the flag on line 1"
    shoot(page, screenshots, "edit-1280")
    page.get_by_role("link", name="Cancel").click()
    page.wait_for_load_state("networkidle")
    assert f"/calls/{recorded_call.pk}/" in page.url and f"line={lines[0].pk}" in page.url
    page.goto(edit)
    page.fill("textarea[name=expected_text]", "Siobhan, table for four at eight thirty.")
    page.get_by_role("button", name="Save flag").click()
    page.wait_for_load_state("networkidle")
    assert f"/calls/{recorded_call.pk}/" in page.url and "Flag saved." in page.inner_text("main")
    tasks.drain()

    # The results page: no point label on the x axis's ticks, no point on the axis.
    page.goto(f"{base}/banks/{bank.pk}/")
    page.wait_for_selector("svg.tradeoff-chart")
    assert page.evaluate(CHART_OVERLAPS) == []
    assert not page.is_visible("#tradeoff-cue")
    shoot(page, screenshots, "results-1280")
    page.locator("figure.tradeoff-figure").screenshot(path=str(screenshots / "walk-chart-1280.png"))
    page.goto(f"{base}/banks/{bank.pk}/trust/")
    snapshots.drain()
    page.goto(f"{base}/banks/{bank.pk}/trust/")
    assert "How many more flags" in page.inner_text("main")
    shoot(page, screenshots, "trust-1280")
    page.goto(f"{base}/banks/")
    shoot(page, screenshots, "leaderboard-1280")
    run = run_actions.do_start_run(bank, [recorded_call.pk], confirmed=True)
    page.goto(f"{base}/runs/{run.pk}/")
    assert "Queued" in page.inner_text("dl.facts") and "waiting to start" in page.inner_text("dl.facts")
    shoot(page, screenshots, "run-1280")

    page.goto(f"{base}/api/v1/docs")
    shoot(page, screenshots, "reference-1280")
    page.goto(f"{base}/api/v1/docs?tag=Results")
    page.screenshot(path=str(screenshots / "walk-reference-results-1280.png"))

    # At a phone's width: the chart says it scrolls, and does; the reference is short.
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    page = phone.new_page()
    log_in(page, base)
    page.goto(f"{base}/banks/{bank.pk}/")
    page.wait_for_selector("svg.tradeoff-chart")
    assert page.is_visible("#tradeoff-cue")
    assert "scroll it sideways" in page.inner_text("#tradeoff-cue")
    assert page.evaluate(
        "() => { const b = document.querySelector('.tradeoff-scroll'); return b.scrollWidth > b.clientWidth; }"
    )
    shoot(page, screenshots, "results-390")
    page.locator("figure.tradeoff-figure").screenshot(path=str(screenshots / "walk-chart-390.png"))
    for url, name in (
        (f"/banks/{bank.pk}/trust/", "trust-390"),
        ("/banks/", "leaderboard-390"),
        (f"/runs/{run.pk}/", "run-390"),
        (f"/flags/{flag.pk}/edit/", "edit-390"),
    ):
        page.goto(base + url)
        shoot(page, screenshots, name)
    page.goto(f"{base}/api/v1/docs")
    index_height = page.evaluate("() => document.documentElement.scrollHeight")
    shoot(page, screenshots, "reference-390")
    page.goto(f"{base}/api/v1/docs?tag=Results")
    tag_height = page.evaluate("() => document.documentElement.scrollHeight")
    page.screenshot(path=str(screenshots / "walk-reference-results-390.png"))
    assert index_height < 20_000 and tag_height < 60_000, (index_height, tag_height)  # was 310,677 px
    desk.close()
    phone.close()
