"""manage.py compare_vocabulary: a local Whisper engine plain and with a vocabulary as hotwords on the flagged lines
and their control lines, scored as the product scores them, nothing written."""

import io
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from oncore.transcribers.engines import faster_whisper as fw
from oncore.transcribers.models import Transcriber
from transcriber_tests import actions
from transcriber_tests.actions import vocabularies as va
from transcriber_tests.models import Score

pytestmark = pytest.mark.django_db


class Whisper:
    """Hears the flagged line right only with the name among its hotwords, and the control line wrong with it."""

    def transcribe(self, audio, **kwargs):
        hinted = "Siobhan" in (kwargs.get("hotwords") or "")
        text = "Siobhan O'Brien" if hinted else "Shivon O'Brian"
        return [SimpleNamespace(text=text, start=0, end=1)], SimpleNamespace(
            language="en", language_probability=1
        )


def test_it_counts_flagged_lines_fixed_and_control_lines_kept_plain_and_with_the_vocabulary(
    org, tenant, recorded_call, monkeypatch
):
    monkeypatch.setattr(fw, "load_model", lambda *args: Whisper())
    assert Transcriber.catalogue().filter(slug="whisper-base", provider="faster_whisper").exists()  # seeded
    va.do_create_vocabulary(org, name="Names", terms=["Siobhan O'Brien"])
    bank = actions.do_create_bank(org, name="English", controls_per_flag=1)
    flag = actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan O'Brien", bank=bank)
    flag.controls.update(
        expected_text="Shivon O'Brian"
    )  # the control's live text, as this engine hears it plain
    scores_before = Score.objects.count()
    out = io.StringIO()
    call_command("compare_vocabulary", "--org", org.slug, "--lines", stdout=out)
    said = out.getvalue()
    assert "flagged lines fixed: 0 of 1 plain, 1 of 1 with the vocabulary (1 gained, 0 lost)" in said
    assert "control lines kept: 1 of 1 plain, 0 of 1 with the vocabulary (0 gained, 1 lost)" in said
    assert "fixed by the vocabulary" in said and "broken by the vocabulary" in said
    assert Score.objects.count() == scores_before  # nothing written
    with pytest.raises(CommandError, match="not a faster-whisper entry"):
        call_command("compare_vocabulary", "--org", org.slug, "--transcriber", "nope")
