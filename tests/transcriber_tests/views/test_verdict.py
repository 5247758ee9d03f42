"""One verdict on every screen, the provisional rule first (issue 34, 5.3): where the exact McNemar test finds a
lead clear on too few lines, the results page, the leaderboard, the trust page and the API all say the leader is
provisional, and none says that no more flags are needed."""

import random

import pytest
from django.urls import reverse

from oncore.transcribers.models import Transcriber
from tests.fixtures import make_call
from transcriber_tests import actions
from transcriber_tests.actions import scores
from transcriber_tests.models import Transcription
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


@pytest.fixture
def clear_on_few_lines(org, tenant, live_transcriber):
    """Eight flags: one candidate hears every line, the other none (McNemar 8 to 0, p = 0.008) on 8 lines."""
    right, wrong = (
        Transcriber.objects.create(slug=s, provider=Transcriber.GENERIC, model=s, display_name=s.title())
        for s in ("right", "wrong")
    )
    bank = actions.do_create_bank(org, name="Few", controls_per_flag=0)
    for t in (right, wrong):
        actions.do_add_candidate(bank, t, confirmed=True)
    for n in range(8):
        call = make_call(tenant, live_transcriber, caller_texts=[f"line number {n} heard wrong"])
        line = call.lines.get(position=0)
        actions.do_flag_line(line, f"line number {n} said right", bank=bank, rng=random.Random(n))
    for t in Transcription.objects.filter(status="queued").select_related("line__flag", "transcriber"):
        text = t.line.flag.expected_text if t.transcriber.slug == "right" else "something else"
        Transcription.objects.filter(pk=t.pk).update(status=Transcription.DONE, text=text)
        t.refresh_from_db()
        scores.score_transcription(t)
    return bank


def test_a_lead_clear_on_too_few_lines_is_provisional_on_every_screen(admin_client, api, clear_on_few_lines):
    bank = clear_on_few_lines
    admin_client.get(reverse("tt:bank_trust", args=[bank.pk]))  # asks the queue for the trust figures
    tasks.drain()
    results = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    assert "★ Leader (provisional): Right" in results
    assert "the test finds the lead clear, but too few lines to trust it yet" in results
    assert "lead is statistically clear" not in results
    trust = admin_client.get(reverse("tt:bank_trust", args=[bank.pk])).content.decode()
    assert "Provisional: flag more lines before trusting this lead." in trust
    assert "no more flags are needed" not in trust
    board = admin_client.get(reverse("tt:banks")).content.decode()
    row = board[board.index(">Few<") :]
    assert "provisional" in row[: row.index("</tr>")] and '<span class="badge ok">clear</span>' not in row
    body = api.get(f"/banks/{bank.pk}/uncertainty").json()
    assert body["provisional"] is True and body["mcnemar_clear"] is True
