"""A streaming candidate's time to final is said to be measured off schedule where its replays sent many frames
off a live call's schedule (issue 34, 5.5: a busy worker, 45% of frames late, read "time to final 16.0 s" on a
one-second line as a fact): from what each replay recorded (frames sent, frames off schedule), beside the figure
on the card, in the trade-off table and chart, and in the API."""

import pytest
from django.urls import reverse

from tests.transcriber_tests.queries.test_latency import world  # noqa: F401  (the fixture)
from tests.transcriber_tests.support import read
from transcriber_tests import queries
from transcriber_tests.models import Transcription

pytestmark = pytest.mark.django_db

SAID = (
    "measured off schedule: 45% of its audio frames were sent late or early (this server was busy), so this time "
    "to final is longer than a live call would see"
)


def paced(world, off: int):  # noqa: F811
    """Each of the streaming candidate's 4 replays sent 100 frames, `off` of them off schedule."""
    Transcription.objects.filter(transcriber=world["streaming"]).update(
        mode=Transcription.STREAMING, frames_sent=100, frames_off_schedule=off
    )


def test_a_time_to_final_measured_off_schedule_says_so_beside_the_figure(admin_client, api, world):  # noqa: F811
    paced(world, 45)
    bank = world["bank"]
    t = queries.tradeoff.bank_tradeoff(bank, queries.bank_results(bank))
    streaming, batch = t.by_id[world["streaming"].pk], t.by_id[world["batch"].pk]
    assert (streaming.pacing.frames, streaming.pacing.off_schedule, streaming.pacing.replays) == (400, 180, 4)
    assert streaming.off_schedule == SAID and batch.off_schedule == ""

    html = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    card = html.split("<dt>Time to final p50 / p95</dt>")[1].split("</dd>")[0]
    assert f'<span class="note">{SAID[0].upper() + SAID[1:]}.</span>' in card
    assert "off schedule" not in html.split("<dt>Latency p50 / p95</dt>")[1].split("</dd>")[0]
    table = read(html.split('<table class="data tradeoff-table">')[1].split("</table>")[0])
    assert f"time to final {SAID[0].upper() + SAID[1:]}." in table
    desc = html.split('<desc id="tradeoff-chart-desc">')[1].split("</desc>")[0]
    assert f"(n=4, {SAID})" in desc

    body = api.get(f"/banks/{bank.pk}/results").json()
    cards = {c["transcriber"]["id"]: c for c in body["candidates"]}
    assert cards[world["streaming"].pk]["latency"]["frames_off_schedule_share"] == 0.45
    assert cards[world["streaming"].pk]["latency"]["off_schedule"] == SAID
    assert cards[world["batch"].pk]["latency"]["off_schedule"] == ""


def test_a_time_to_final_paced_on_schedule_reads_as_measured(admin_client, world):  # noqa: F811
    paced(world, 2)  # 2% of frames: the pacing of a machine with room to spare
    html = admin_client.get(reverse("tt:bank", args=[world["bank"].pk])).content.decode()
    assert "off schedule" not in html
