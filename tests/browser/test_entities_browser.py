"""Entity accuracy on the organization's own callers (issue 37, item 2), looked at in Chromium at 1280 and 390 px:
a candidate's card reads its entities right with n, by category, beside the public benchmark's place; the turn
table marks each expected entity kept or lost in words, with its legend. axe-clean; screenshots of the card and a
turn-table row at both widths go to test-artifacts/screenshots/entity-*.png."""

import pytest
from django.db import transaction

from tests.benchmark.entity.test_views import BETA, make_dataset, make_run, scored
from tests.transcriber_tests.queries.test_entities import build_callers
from transcriber_tests.queries import snapshots

from .test_walk_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_entities_right_read_right_at_both_widths(
    browser, live_server, screenshots, settings, admin_user, org, tenant, live_transcriber, axe
):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False  # the live server speaks plain HTTP
    callers = build_callers(org, tenant, live_transcriber)
    with (
        transaction.atomic()
    ):  # Sloppy's run on the public benchmark, whose tier-A figure the card puts beside
        scored(make_run(make_dataset(), "sloppy", BETA, transcriber=callers.sloppy))
    bank, base = callers.bank, live_server.url
    snapshots.drain()
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        log_in(page, base)
        page.goto(f"{base}/banks/{bank.pk}/")
        card = page.locator("article[aria-label='Sloppy']")
        said = card.inner_text()
        assert "Entities right on your callers:" in said and "entities on" in said
        assert "Entity benchmark: 66.7% (MLCommons subset, tier A, n=3)" in said
        for label in ("names", "times", "dates", "numbers", "ids"):
            assert label in said
        figure = card.locator(".card-entities")
        figure.scroll_into_view_if_needed()
        card.screenshot(path=str(screenshots / f"entity-card-{width}.png"))
        axe(page, f"entity results {width}")

        page.goto(f"{base}/banks/{bank.pk}/turns/")
        legend = page.locator(".entity-legend").inner_text()
        assert "✓ kept, the text has it; ✗ lost, it does not" in legend
        row = page.locator("tr", has_text="My name is Maria Lopez").first
        text = row.inner_text()
        assert "Maria Lopez" in text and "Bank of America" in text
        row.scroll_into_view_if_needed()
        page.locator(".entity-legend").screenshot(path=str(screenshots / f"entity-legend-{width}.png"))
        row.screenshot(path=str(screenshots / f"entity-turns-{width}.png"))
        axe(page, f"entity turns {width}")

        page.goto(f"{base}/banks/")
        board = page.locator("table.leaderboard").inner_text()
        assert "entities right" in board
        context.close()
