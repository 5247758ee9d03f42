"""Vocabulary candidates (issue 37, item 1), looked at in Chromium at 1280 and 390 px: the vocabularies page with who
changed what; the results card of a transcriber with a vocabulary, naming it, its size and the vendor option it
travels in; the turn table marking the words from the vocabulary in text. axe-clean; screenshots go to
test-artifacts/screenshots/vocab-*.png."""

from types import SimpleNamespace

import pytest

from oncore.transcribers.engines import faster_whisper as fw
from oncore.transcribers.models import Transcriber
from transcriber_tests import actions
from transcriber_tests.actions import vocabularies as va
from transcriber_tests.queries import snapshots
from transcriber_tests.work import tasks

from .test_walk_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SAID = "Siobhan O'Brien, a table at Bistro Verde"


class FakeWhisper:
    """faster-whisper hearing the names only when they are among its hotwords."""

    def transcribe(self, audio, **kwargs):
        hinted = "Siobhan" in (kwargs.get("hotwords") or "")
        text = SAID if hinted else "Shivon O'Brian, a table at bistro very"
        return [SimpleNamespace(text=text, start=0.0, end=1.0)], SimpleNamespace(
            language="en", language_probability=1.0
        )


@pytest.fixture
def vocab_bank(org, admin_user, recorded_call, monkeypatch):
    monkeypatch.setattr(fw, "load_model", lambda *args: FakeWhisper())
    whisper = Transcriber.objects.create(
        slug="whisper-base-fake", provider="faster_whisper", model="base", display_name="Whisper base (local)"
    )
    menu = va.do_create_vocabulary(
        org, name="Names and menu", terms=["Siobhan O'Brien", "Bistro Verde", "coeliac"], user=admin_user
    )
    va.do_update_vocabulary(
        menu, terms=["Siobhan O'Brien", "Bistro Verde", "coeliac", "Cuddihy"], user=admin_user
    )
    bank = actions.do_create_bank(org, name="English")
    actions.do_add_candidate(bank, whisper, confirmed=True)
    va.do_add_vocabulary_candidate(bank, whisper, menu, confirmed=True)
    actions.do_flag_line(recorded_call.lines.get(position=0), SAID, bank=bank, tags=["name"])
    tasks.drain()
    return bank


def test_vocabulary_candidates_read_right_at_both_widths(
    browser, live_server, screenshots, settings, admin_user, vocab_bank, axe
):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False  # the live server speaks plain HTTP
    bank, base = vocab_bank, live_server.url
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        log_in(page, base)

        page.goto(f"{base}/vocabularies/")
        text = page.locator("main").inner_text()
        assert "Names and menu" in text and "Whisper base (local) + Names and menu in English" in text
        assert "ada changed Names and menu: added Cuddihy" in text
        page.screenshot(path=str(screenshots / f"vocab-list-{width}.png"), full_page=True)
        axe(page, f"vocabularies {width}")

        page.goto(f"{base}/banks/{bank.pk}/")
        snapshots.drain()
        page.goto(f"{base}/banks/{bank.pk}/")
        card = page.locator("article", has_text="+ Names and menu").first
        said = card.inner_text()
        assert "Names and menu, 4 terms, sent as hotwords" in said
        card.scroll_into_view_if_needed()
        card.screenshot(path=str(screenshots / f"vocab-card-{width}.png"))
        axe(page, f"vocabulary results {width}")

        page.goto(f"{base}/banks/{bank.pk}/turns/")
        table = page.locator("table").first
        assert "raised “voc”" in page.locator(".marks-legend").inner_text()
        marked = page.locator(".vocab-word")
        assert marked.count() >= 3  # Siobhan, O'Brien, Bistro, Verde in the vocabulary candidate's cell
        assert "voc" in marked.first.inner_text()
        table.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshots / f"vocab-turns-{width}.png"), full_page=width == 390)
        axe(page, f"vocabulary turns {width}")
        context.close()
