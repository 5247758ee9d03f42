"""A flag made by a request is written unsettled and the queue does the rest (actions.flags.settle): retires the
controls its line served, draws its own, scores it (reusing finished transcriptions) and counts it in its bank.
Until then it counts nowhere, and whatever happens to it meanwhile (moved, retagged, deleted, its line transcribed)
leaves the totals equal to a rebuild."""

import random
import re

from django.urls import reverse

from tests.fixtures import make_call
from tests.transcriber_tests.actions.test_flags import assert_controls_sound, caller_lines, demo_org
from transcriber_tests import actions, aggregates
from transcriber_tests.models import ControlLine, Flag, Score, Transcription
from transcriber_tests.work import tasks


def test_a_flag_made_later_counts_nowhere_until_the_queue_settles_it(
    org, tenant, live_transcriber, make_transcriber
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("x", "three four"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one two", "three four", "five six"])
    first, second, third = caller_lines(call)
    a = actions.do_flag_line(first, "one too", bank=bank, rng=random.Random(0))
    control = a.controls.get()
    tasks.drain()

    # The control's line is flagged by a request: only the flag is written.
    b = actions.do_flag_line(control.line, "tree for", bank=bank, later=True)
    assert not b.settled and not b.controls.exists() and not Score.objects.filter(flag=b).exists()
    assert ControlLine.objects.filter(pk=control.pk).exists()  # retired when the flag settles
    assert not aggregates.rebuild(fix=False).any  # the totals do not count it, nor does the rebuild

    assert actions.settle(b.pk, rng=random.Random(0))
    assert not actions.settle(b.pk)  # once
    b.refresh_from_db()
    assert b.settled
    # As a flag made at once: the candidate's transcription of the line as a control is reused, not paid again.
    assert Transcription.objects.filter(line=control.line).count() == 1
    scored = Score.objects.get(flag=b, control=None, source=Score.CANDIDATE)
    assert (scored.hypothesis, scored.wer) == ("three four", 1.0)
    assert not ControlLine.objects.filter(pk=control.pk).exists()
    assert {a.controls.get().line_id} == {second.pk, third.pk} - {control.line_id}  # from the same call
    assert not aggregates.rebuild(fix=False).any


def test_a_line_transcribed_before_its_flag_settles_is_scored_once_it_does(
    org, tenant, live_transcriber, make_transcriber
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=0)
    actions.do_add_candidate(bank, make_transcriber("x", "one two"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one two", "three four"])
    first, _ = caller_lines(call)
    flag = actions.do_flag_line(first, "one too", bank=bank, later=True)
    # Another bank's flag on the same line is not possible (one flag per line), so the line is queued by hand, as
    # a candidate added to the bank would queue it.
    Transcription.objects.create(organization=org, line=first, transcriber=bank.candidates.get().transcriber)
    tasks.drain()  # settles the flag first, then transcribes: scored once, counted once
    flag.refresh_from_db()
    assert flag.settled
    assert Score.objects.filter(flag=flag, source=Score.CANDIDATE).count() == 1
    assert not aggregates.rebuild(fix=False).any


def test_a_flag_moved_or_deleted_before_it_settles(org, tenant, live_transcriber, make_transcriber):
    a, b = (actions.do_create_bank(org, name=n, controls_per_flag=1) for n in ("A", "B"))
    actions.do_add_candidate(b, make_transcriber("x", "hello"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one two", "three four", "five six"])
    first, second, _ = caller_lines(call)
    moved = actions.do_flag_line(first, "one too", bank=a, later=True)
    actions.do_move_flag(moved, b)
    retagged = actions.do_flag_line(second, "tree for", bank=b, later=True, tags=["name"])
    actions.do_edit_flag(retagged, tags=["time"], expected_text="three for")
    assert not aggregates.rebuild(fix=False).any
    assert actions.settle_waiting() == 2
    moved.refresh_from_db()
    assert moved.bank == b and moved.controls.count() == 1 and not a.flags.exists()
    assert (
        Score.objects.filter(flag=retagged, control=None, source=Score.LIVE).get().hypothesis == "three four"
    )
    assert not aggregates.rebuild(fix=False).any
    assert_controls_sound()

    gone = actions.do_flag_line(caller_lines(call)[2], "five sicks", bank=b, later=True)
    actions.do_delete_flag(gone)
    assert not actions.settle(gone.pk)
    assert not aggregates.rebuild(fix=False).any


def test_flagging_every_demo_line_later_in_random_order_keeps_the_totals_and_controls_sound(
    org, make_transcriber
):
    lines = demo_org(org)
    banks = [actions.do_create_bank(org, name=n, controls_per_flag=2) for n in ("A", "B")]
    actions.do_add_candidate(banks[0], make_transcriber("x", "hello there"), confirmed=True)
    rng = random.Random(7)
    for i, line in enumerate(rng.sample(lines, len(lines))):
        flag = actions.do_flag_line(line, "what was said", bank=rng.choice([*banks, None]), later=True)
        if rng.random() < 0.3:
            actions.do_move_flag(flag, rng.choice([*banks, None]), rng=rng)
        if rng.random() < 0.3:
            waiting = list(Flag.objects.filter(settled=False).values_list("pk", flat=True))
            for pk in rng.sample(waiting, len(waiting) // 2):
                actions.settle(pk, rng=rng)
        if i % 10 == 0:
            assert not aggregates.rebuild(fix=False).any
    tasks.drain()
    assert not Flag.objects.filter(settled=False).exists()
    assert not aggregates.rebuild(fix=False).any
    assert_controls_sound()


def test_the_queues_schedule_settles_a_flag_whose_task_was_lost(org, tenant, live_transcriber):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    call = make_call(tenant, live_transcriber, caller_texts=["one two", "three four"])
    flag = actions.do_flag_line(caller_lines(call)[0], "one too", bank=bank, later=True)
    tasks.pump_all()
    assert not Flag.objects.get(pk=flag.pk).settled  # its task may still be on its way
    Flag.objects.filter(pk=flag.pk).update(created_at=flag.created_at.replace(year=2020))
    tasks.pump_all()
    assert Flag.objects.get(pk=flag.pk).settled and flag.controls.count() == 1


def test_the_flag_posted_from_the_call_page_shows_it_is_being_made_then_its_results(
    admin_client, org, recorded_call, make_transcriber
):
    bank = actions.do_create_bank(org, name="Flags", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("a", "hello there"), confirmed=True)
    line = recorded_call.lines.filter(speaker="caller").first()
    response = admin_client.post(
        reverse("tt:flag_line", args=[line.pk]),
        {"expected_text": "hello there friend", "bank": bank.pk},
        HTTP_HX_REQUEST="true",
    )
    page = response.content.decode()
    assert "Transcribing and scoring: this updates by itself." in page
    assert "No control line was drawn" not in page
    tasks.drain()
    page = admin_client.get(reverse("tt:call", args=[recorded_call.pk])).content.decode()
    assert "Transcribing and scoring" not in page and "hello there" in page
    assert Flag.objects.get(line=line).controls.count() == 1


def test_the_flag_posts_answer_is_the_line_as_the_call_page_shows_it(
    admin_client, admin_user, org, recorded_call, make_transcriber, rf
):
    """The answer is built from what the request holds (queries.new_flag_screen), not read again: it must say
    what a fresh read of the line says."""
    from transcriber_tests import queries
    from transcriber_tests.views.calls import lines_html

    bank = actions.do_create_bank(org, name="Flags", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("a", "hello there"), confirmed=True)
    line = recorded_call.lines.filter(speaker="caller").first()
    response = admin_client.post(
        reverse("tt:flag_line", args=[line.pk]),
        {"expected_text": "hello there friend", "bank": bank.pk, "tags": "name", "note": "said slowly"},
        HTTP_HX_REQUEST="true",
    )
    request = rf.get("/")
    request.user = admin_user
    fresh = lines_html(request, queries.line_screen(line))

    def page(html):
        return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)

    answer = response.content.decode()
    assert page(answer) == page(fresh)
    assert "said slowly" in answer and "Flagged by ada on " in answer and "Transcribing and scoring" in answer


def test_a_flag_written_by_a_host_on_the_release_before_is_settled(org, recorded_call):
    """During a rolling upgrade, hosts still on the release before write flags without the column, made whole in
    their request: the database's default says settled, so the queue never settles them twice."""
    from django.db import connection
    from django.utils import timezone

    line = recorded_call.lines.filter(speaker="caller").first()
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO transcriber_tests_flag (organization_id, line_id, expected_text, tags, note, created_at,"
            " updated_at, joined_at, check_expected) VALUES (%s, %s, 'what was said', '', '', %s, %s, %s, %s)",
            [org.pk, line.pk, now, now, now, False],
        )
    assert Flag.objects.get(line=line).settled
    assert actions.settle_waiting() == 0
