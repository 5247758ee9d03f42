"""The dashboard in a real browser, on the demo data with the real local engines: log in, open a call, play
a line, try to flag it with the live transcript's own text and see the confirmation asked, flag it into a bank,
run the queue, watch the card update, open the turn table, export the CSV and read it back, and see a member's
home page and the member refused."""

import csv
import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from oncore.calls.models import Line
from transcriber_tests import actions, scoring, tasks
from transcriber_tests.models import Bank, Flag

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


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
    """The first caller line the live transcriber got wrong that can be flagged."""
    for line in (
        Line.objects.filter(speaker="caller", flag__isnull=True)
        .select_related("call")
        .order_by("call_id", "position")
    ):
        if actions.why_not_flaggable(line) is None and not scoring.score_line(said(line), line.text).match:
            return line
    raise AssertionError("the demo has no flaggable caller line that the live transcriber got wrong")


def test_it_walks_the_admin_flow_and_refuses_a_member(browser, live_server, screenshots, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False  # the live server speaks plain HTTP
    call_command("load_demo", flags=0, no_runs=True)
    base = live_server.url
    line = flaggable_line()
    truth = said(line)
    bank = Bank.objects.get(name="English")

    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    errors = watch_for_errors(context)
    page = context.new_page()
    log_in(page, base, "demo-admin", "demo-admin-pass")
    assert "/calls/" in page.url

    page.goto(f"{base}/calls/{line.call_id}/")
    assert "script-src 'self'" in page.evaluate(
        "() => fetch(location.href).then(r => r.headers.get('content-security-policy'))"
    )
    row = page.locator(f"#line-{line.pk}")
    with page.expect_response(lambda r: f"/lines/{line.pk}/audio.wav" in r.url) as played:
        row.get_by_role("button", name=f"Play line {line.position + 1}").click()
    assert played.value.status in (200, 206)
    assert played.value.headers["content-type"] == "audio/wav"

    row.get_by_role("link", name="⚑ Flag this line").click()
    form = page.locator(f"#line-{line.pk} form.flag-form")
    form.wait_for()
    # The form opens with the live transcript: saved as it is, the line would not be wrong. It says so first.
    assert form.locator("textarea[name=expected_text]").input_value() == line.text
    form.locator("select[name=bank]").select_option(label="English")
    form.get_by_role("button", name="Flag line").click()
    confirm = page.locator(f"#line-{line.pk} .confirm-live")
    confirm.wait_for()
    assert "The live transcript already says this" in page.locator(f"#line-{line.pk}").inner_text()
    assert confirm.get_by_role("checkbox").is_visible() and not Flag.objects.filter(line=line).exists()
    page.screenshot(path=str(screenshots / "flag-form-matches-live.png"), full_page=True)
    form.locator("textarea[name=expected_text]").fill(truth)
    form.locator("input[value=name]").check()
    form.locator("select[name=bank]").select_option(label="English")
    page.screenshot(path=str(screenshots / "call-page-flag-form.png"), full_page=True)
    form.get_by_role("button", name="Flag line").click()
    page.locator(f"#line-{line.pk} .flag-box").wait_for()
    assert "Flagged" in page.locator(f"#line-{line.pk}").inner_text()
    assert Flag.objects.filter(line=line, bank=bank).exists()
    page.screenshot(path=str(screenshots / "call-page.png"), full_page=True)

    page.goto(f"{base}/banks/{bank.pk}/")
    assert "waiting for this bank" in page.locator("#results-body").inner_text()
    tasks.drain()  # the queue runs while the page polls
    page.locator(".progress").wait_for(state="detached", timeout=30_000)
    cards = page.locator(".result-card")
    assert cards.count() == 2  # Whisper base and PocketSphinx
    assert "scored line" in cards.first.inner_text()
    assert "Leader" in page.locator(".verdict").inner_text()
    page.screenshot(path=str(screenshots / "results.png"), full_page=True)

    page.get_by_role("link", name="Turn by turn").click()
    page.wait_for_load_state("networkidle")
    table = page.locator("table.turns")
    assert truth in table.inner_text()
    page.screenshot(path=str(screenshots / "turn-table.png"), full_page=True)

    with page.expect_download() as download:
        page.get_by_role("link", name="Export turn table CSV").click()
    text = open(download.value.path(), encoding="utf-8-sig").read()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["source"] for r in rows} == {"live", "candidate"}
    assert any(r["expected_text"] == truth for r in rows)
    page.goto(f"{base}/benchmark/")
    page.goto(f"{base}/settings/api-keys/")
    context.close()

    member = browser.new_context()
    errors += watch_for_errors(member)
    page = member.new_page()
    log_in(page, base, "demo-member", "demo-member-pass")
    assert "What you can do" in page.inner_text("main") and "demo-admin" in page.inner_text("main")
    assert page.locator("nav a").count() == 0  # nothing of transcriber testing
    response = page.goto(f"{base}/banks/{bank.pk}/")
    assert response.status == 403
    assert "for organization admins" in page.inner_text("main")
    member.close()
    # The pages ran under the Content-Security-Policy (no inline script or style) without a violation.
    violations = [e for e in errors if "Content Security Policy" in e or "CSP violation" in e]
    assert not violations, "\n".join(violations)
    # Script errors too. HTTP answers are not the policy's business: 403 and 422 are by design, and on SQLite a
    # poll can meet the test thread's queue writes on the shared in-memory database ("table is locked").
    http = ("Failed to load resource", "Response Status Error Code")
    others = [e for e in errors if not any(h in e for h in http)]
    assert not others, "\n".join(others)
