"""Streaming's head latency and its tail (issue 37, item 3), looked at in Chromium at 1280 and 390 px: the streaming
candidate's card reads its time to final, time to first partial and partial stability with n; the trust section
reads the model's streaming-less-batch difference with both intervals. axe-clean; screenshots of the card and the
section at both widths go to test-artifacts/screenshots/stream-*.png."""

import pytest

from tests.transcriber_tests.queries.test_stream_head import modes  # noqa: F401  (the fixture)
from transcriber_tests.queries import snapshots

from .test_walk_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_streaming_figures_read_right_at_both_widths(
    browser,
    live_server,
    screenshots,
    settings,
    admin_user,
    modes,  # noqa: F811
    axe,  # noqa: F811
):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False  # the live server speaks plain HTTP
    bank, base = modes.bank, live_server.url
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        log_in(page, base)
        page.goto(f"{base}/banks/{bank.pk}/")
        snapshots.drain()
        page.goto(f"{base}/banks/{bank.pk}/")
        card = page.locator("article", has_text="M1 streaming").filter(has_text="Time to first partial").first
        said = card.inner_text()
        assert "Time to first partial p50 / p95" in said and "Partial stability" in said
        assert "revisions per line" in said and "differ from the last partial shown" in said
        assert "p99" not in said  # under 100 lines
        card.scroll_into_view_if_needed()
        card.screenshot(path=str(screenshots / f"stream-card-{width}.png"))
        axe(page, f"stream results {width}")

        page.goto(f"{base}/banks/{bank.pk}/trust/")
        snapshots.drain()
        page.goto(f"{base}/banks/{bank.pk}/trust/")
        pair = page.locator(".mode-pair")
        text = pair.inner_text()
        assert "m1 streamed against the same model in batch" in text
        assert "resampling lines" in text and "resampling the 8 calls" in text and "exact McNemar" in text
        pair.screenshot(path=str(screenshots / f"stream-modes-{width}.png"))
        axe(page, f"stream trust {width}")
        context.close()
