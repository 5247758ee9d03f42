"""A transcription that failed on its last attempt says so (issue 34, 5.6): the engine's "it will be tried again"
is left out of the reason a person reads and the attempts are counted; a streaming candidate's failure is kept as
a streaming replay (its mode was written as batch)."""

import pytest
from django.urls import reverse

from oncore.transcribers.engines.streaming import session
from tests.transcriber_tests.support import read
from tests.transcriber_tests.work.test_replay_streaming import SAID, streaming_entry, vendor  # noqa: F401
from transcriber_tests import actions
from transcriber_tests.models import Transcription
from transcriber_tests.work import tasks
from transcriber_tests.work.replay import last_attempt_error

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_pacing(monkeypatch):
    monkeypatch.setattr(session, "SPEED", 20.0)


def test_a_stalled_streaming_candidate_reads_failed_for_good_and_stays_streaming(
    admin_client,
    org,
    recorded_call,
    vendor,  # noqa: F811
):
    vendor.scenario = "stall"
    bank = actions.do_create_bank(org, name="Live", controls_per_flag=0)
    live = streaming_entry(vendor, final_timeout_s=0.3)
    actions.do_add_candidate(bank, live, confirmed=True)
    line = recorded_call.lines.get(position=0)
    actions.do_flag_line(line, SAID, bank=bank)

    tasks.drain(max_seconds=60)

    t = Transcription.objects.get(line=line, transcriber=live)
    assert (t.status, t.mode, t.attempts) == (Transcription.FAILED, Transcription.STREAMING, 4)
    assert "tried again" not in t.error.replace("not tried again", "")
    assert t.error.endswith("Failed on each of its 4 attempts: not tried again.")
    page = read(admin_client.get(reverse("tt:call", args=[recorded_call.pk])).content)
    assert "✗ failed Deepgram sent no final transcript within 0.3 s of the end of the audio" in page
    assert "Failed on each of its 4 attempts: not tried again." in page
    assert "it will be tried again" not in page


def test_the_last_attempts_reason_drops_the_engines_promise_of_a_retry():
    assert last_attempt_error(
        "Deepgram closed the session (1011: overloaded): it will be tried again.", 3
    ) == (
        "Deepgram closed the session (1011: overloaded). Failed on each of its 3 attempts: not tried again."
    )
    assert last_attempt_error(
        "No final within 2.0 s of the end of the audio: it will be tried again; raise the final_timeout_s option "
        "if it is slow, not stalled.",
        2,
    ) == (
        "No final within 2.0 s of the end of the audio; raise the final_timeout_s option if it is slow, not "
        "stalled. Failed on each of its 2 attempts: not tried again."
    )
    assert last_attempt_error("The vendor answered 503", 1) == (
        "The vendor answered 503. Failed on its only attempt: not tried again."
    )
