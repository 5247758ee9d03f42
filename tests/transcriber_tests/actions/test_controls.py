"""Expected texts that cannot be trusted (issue 34): a caller line whose live text is degenerate (a repetition loop,
more words than its duration allows, or no words) is never drawn as a control; controls drawn on such lines before
are retired and replaced as a flagged control is (the recount migration does it for existing data); and "Check
these expected texts" lists any scored line, control or flag, whose expected text every candidate contradicts
badly, with a link to it."""

import random

import pytest
from django.urls import reverse

from oncore.transcribers.models import Transcriber
from tests.fixtures import make_call
from transcriber_tests import actions, aggregates
from transcriber_tests.actions import controls, scores
from transcriber_tests.lib import scoring
from transcriber_tests.models import ControlLine, Score, Transcription
from transcriber_tests.queries import reference_check
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db

# The demo's own line: Whisper repeating itself on "Great, cheers." (112 tokens).
LOOP = ", ".join(["3", "2"] * 56)


def test_it_says_why_a_live_text_is_degenerate():
    assert "repeats itself" in scoring.degenerate(LOOP, 1.2)
    assert "no words" in scoring.degenerate(" ... ", 1.0)
    assert "more than a caller says" in scoring.degenerate(
        "one two three four five six seven eight nine ten", 1.0
    )
    assert scoring.degenerate("a table for four at eight thirty please", 2.5) == ""
    assert scoring.degenerate("yes yes", 0.6) == ""  # short texts compress badly: no false loop


@pytest.fixture
def looped_call(tenant, live_transcriber):
    return make_call(
        tenant,
        live_transcriber,
        caller_texts=["table for for at ate", LOOP, "see you tuesday", "thank you bye"],
    )


def test_a_degenerate_live_text_is_never_drawn_as_a_control(org, looped_call, live_transcriber, tenant):
    bank = actions.do_create_bank(org, name="Two controls", controls_per_flag=2)
    lines = list(looped_call.lines.filter(speaker="caller").order_by("position"))
    loop_line = lines[1]
    for seed in range(12):
        call = make_call(tenant, live_transcriber, caller_texts=["a b c", LOOP, "see you", "thanks"])
        first = call.lines.filter(speaker="caller").order_by("position").first()
        actions.do_flag_line(first, "what was said", bank=bank, rng=random.Random(seed))
    actions.do_flag_line(lines[0], "table for four at eight", bank=bank, rng=random.Random(1))
    used = set(ControlLine.objects.filter(flag__bank=bank).values_list("line__text", flat=True))
    assert LOOP not in used and used  # controls were drawn, never the loop
    assert not ControlLine.objects.filter(line=loop_line).exists()


def test_existing_controls_on_degenerate_lines_are_retired_and_replaced(org, looped_call):
    bank = actions.do_create_bank(org, name="Before the rule", controls_per_flag=1)
    lines = list(looped_call.lines.filter(speaker="caller").order_by("position"))
    flag = actions.do_flag_line(lines[0], "table for four at eight", bank=bank, rng=random.Random(3))
    # As drawn before the rule: the loop line serves as the flag's control.
    flag.controls.all().delete()
    ControlLine.objects.create(flag=flag, line=lines[1], expected_text=lines[1].text)
    assert controls.retire_degenerate_controls() == 1
    drawn = list(flag.controls.values_list("line_id", flat=True))
    assert lines[1].pk not in drawn and len(drawn) == 1  # a replacement from the same call
    assert not Score.objects.filter(control__line=lines[1]).exists()


def test_a_line_every_candidate_contradicts_is_listed_to_check(
    admin_client, org, looped_call, live_transcriber
):
    """A control drawn on the loop before the rule: every candidate hears the two words said, and the line is
    listed (with each WER and a way to flag it) until it is retired."""
    heard = [
        Transcriber.objects.create(
            slug=f"h{i}", provider=Transcriber.GENERIC, model=f"h{i}", display_name=f"H{i}"
        )
        for i in range(2)
    ]
    bank = actions.do_create_bank(org, name="Checked", controls_per_flag=0)
    for t in heard:
        actions.do_add_candidate(bank, t, confirmed=True)
    lines = list(looped_call.lines.filter(speaker="caller").order_by("position"))
    flag = actions.do_flag_line(lines[0], "table for four at eight", bank=bank)
    control = ControlLine.objects.create(flag=flag, line=lines[1], expected_text=lines[1].text)
    aggregates.flag_leaving(flag.pk)
    scores.enter_items(flag, [control], [t.pk for t in heard])
    for t in Transcription.objects.filter(status="queued").select_related("line"):
        text = "Great, cheers." if t.line_id == lines[1].pk else "table for four at eight"
        Transcription.objects.filter(pk=t.pk).update(status=Transcription.DONE, text=text)
        t.refresh_from_db()
        scores.score_transcription(t)
    tasks.drain()
    found, total = reference_check.expected_checks(bank, 30)
    assert total == 1 and found[0].control_id == control.pk
    assert [name for name, _ in found[0].contradicted_by] == ["H0", "H1"]
    assert all(wer >= 1 for _, wer in found[0].contradicted_by)
    html = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    section = html[html.index('id="check-expected"') :]
    section = section[: section.index("</section>")]
    assert "Every candidate is far from it: H0 WER 1.00, H1 WER 1.00." in section
    assert "its live transcript" in section and "Flag this line" in section
    assert f"?line={lines[1].pk}#line-{lines[1].pk}" in section
