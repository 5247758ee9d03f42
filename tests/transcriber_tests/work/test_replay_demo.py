"""End to end on a demo call with a real local engine: flag -> transcriptions -> scores -> summary."""

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from oncore.calls.models import Line
from oncore.transcribers.models import Transcriber
from transcriber_tests import actions, queries
from transcriber_tests.lib import scoring
from transcriber_tests.models import Score, Transcription
from transcriber_tests.queries.lines import why_not_flaggable
from transcriber_tests.work import tasks

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_it_scores_a_demo_flag_with_whisper_tiny_en(settings_media):
    call_command("load_demo", flags=0, no_runs=True)
    data = json.loads((Path(settings.BASE_DIR) / "fixtures" / "demo" / "calls.json").read_text())
    said = {(c["external_id"], i): ln["said"] for c in data["calls"] for i, ln in enumerate(c["lines"])}
    line = next(
        ln
        for ln in Line.objects.filter(speaker="caller").select_related("call").order_by("call_id", "position")
        if why_not_flaggable(ln) is None
        and not scoring.score_line(said[(ln.call.external_id, ln.position)], ln.text).match
    )
    truth = said[(line.call.external_id, line.position)]
    bank = actions.do_create_bank(line.call.tenant.organization, name="Tiny only", controls_per_flag=1)
    tiny = Transcriber.objects.get(slug="whisper-tiny-en")
    actions.do_add_candidate(bank, tiny, confirmed=True)
    flag = actions.do_flag_line(line, truth, bank=bank, tags=["name"])

    assert tasks.drain() == 2  # the flag and its control, once each
    done = Transcription.objects.get(line=line, transcriber=tiny)
    assert done.status == Transcription.DONE and done.text.strip() and done.audio_seconds > 1
    score = Score.objects.get(flag=flag, control=None, transcriber=tiny, source=Score.CANDIDATE)
    assert score.wer == pytest.approx(scoring.score_line(truth, done.text).wer)
    results = queries.bank_results(bank)
    assert results.cards[0].summary.scored == 2 and results.leader.transcriber == tiny


@pytest.fixture
def settings_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
