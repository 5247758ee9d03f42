"""The call page keeps each flag's box (its bank, tags, expected text, who made and edited it, its results per
candidate) rendered, by the versions of what it shows (queries/boxes.py): stored by the queue once it has changed a
call's flags, or kept by the read that rendered it. After every kind of write, the page read with the boxes kept is
the page read with none kept, and the boxes the queue stores are the boxes a read renders; so are the turn
tables' rows, kept by the same flag versions (views/turns.py)."""

import random
import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.fixtures import make_call
from tests.transcriber_tests.actions.test_vocabularies import vendor_entry
from tests.transcribers.vendor_servers import FakeDeepgram
from transcriber_tests import actions, handles
from transcriber_tests.actions import controls, scores, vocabularies
from transcriber_tests.models import Flag, FlagBox, JudgePick, Score
from transcriber_tests.queries import boxes
from transcriber_tests.work import picks, tasks

pytestmark = pytest.mark.django_db

SAID = "Mary-Kate, table for two"


def page(client, call) -> str:
    return read_page(client, reverse("tt:call", args=[call.pk]))


def read_page(client, url) -> str:
    html = client.get(url).content.decode()
    return re.sub(r'(csrfmiddlewaretoken" value=")[^"]+|("X-CSRFToken": ")[^"]+', r"\1\2", html)


def forget_boxes() -> None:
    cache.clear()
    FlagBox.objects.all().delete()


def assert_kept_is_fresh(client, call, step: str) -> str:
    """The page as read with the boxes kept before `step`, against the page read with nothing kept (which keeps
    the boxes again, for the next step) and the page read with the boxes the queue stores (stored for the next
    step too)."""
    kept = page(client, call)
    forget_boxes()
    fresh = page(client, call)
    assert kept == fresh, f"a box kept from before {step} was served after it"
    boxes.build([call.pk])
    assert page(client, call) == fresh, f"a box the queue stored after {step} is not the box a read renders"
    return fresh


def test_after_every_kind_of_write_a_kept_box_is_the_box_read_afresh(
    admin_client, org, tenant, live_transcriber, make_transcriber, llm_server
):
    bank = actions.do_create_bank(org, name="Names", controls_per_flag=1)
    other = actions.do_create_bank(org, name="Other", controls_per_flag=0)
    for name, text in [("hyphen", SAID), ("lower", "mary kate table for two"), ("wrong", "Marie Kate")]:
        actions.do_add_candidate(bank, make_transcriber(name, text), confirmed=True)
    actions.do_add_candidate(other, make_transcriber("other", SAID), confirmed=True)
    call = make_call(
        tenant, live_transcriber, caller_texts=["Mary Kate table for to", "yes", "no", "bye now"]
    )
    first, second, *_ = call.lines.filter(speaker="caller").order_by("position")
    a = actions.do_flag_line(first, SAID, bank=bank, rng=random.Random(1))
    b = actions.do_flag_line(second, "yes please", bank=bank, later=True)  # unsettled: made by a request
    page(admin_client, call)

    steps = [
        ("the flag settles", lambda: actions.settle(b.pk, rng=random.Random(2))),
        ("the candidates transcribe and score", tasks.drain),
        ("the judge picks", lambda: picks.maybe_pick(a.pk)),
        (  # another flag's write: the line it is made on was this flag's control (no line left to draw instead)
            "its control's line flagged",
            lambda: actions.do_flag_line(a.controls.get().line, "not what was said", bank=None),
        ),
        ("a note", lambda: actions.do_edit_flag(a, note="Caller spelled it.")),
        ("a retag", lambda: actions.do_edit_flag(a, tags=["name", "booking"])),
        ("a new expected text", lambda: actions.do_edit_flag(a, expected_text="Mary Kate, a table for two")),
        ("the judge picks again", lambda: picks.maybe_pick(a.pk)),
        ("the bank renamed", lambda: actions.do_update_bank(bank, name="Names renamed")),
        (
            "a candidate added",
            lambda: actions.do_add_candidate(bank, make_transcriber("mute", ""), confirmed=True),
        ),
        ("its transcriptions (no words: failed)", tasks.drain),
        (
            "a candidate moved up",
            lambda: actions.do_move_candidate(bank, a.bank.candidates.last().transcriber, up=True),
        ),
        (
            "a candidate removed",
            lambda: actions.do_remove_candidate(bank, bank.candidates.last().transcriber),
        ),
        ("two controls per flag", lambda: actions.do_update_bank(bank, controls_per_flag=2)),
        ("the redraw", lambda: controls.do_redraw(bank, confirmed=True, rng=random.Random(3))),
        ("the redraw's transcriptions", tasks.drain),
        ("a flag moved to another bank", lambda: actions.do_move_flag(a, other)),
        ("its scores there", tasks.drain),
        ("a flag moved out of every bank", lambda: actions.do_move_flag(a, None)),
        ("a flag deleted", lambda: actions.do_delete_flag(b)),
    ]
    shown = {}
    for step, write in steps:
        write()
        turns = [read_page(admin_client, reverse("tt:turn_table", args=[b.pk])) for b in (bank, other)]
        shown[step] = assert_kept_is_fresh(admin_client, call, step)  # the cache cleared
        fresh = [read_page(admin_client, reverse("tt:turn_table", args=[b.pk])) for b in (bank, other)]
        assert turns == fresh, f"a turn-table row kept from before {step} was served after it"
    # The steps changed what a person reads.
    assert "… pending" in shown["the flag settles"]
    assert "… pending" not in shown["the candidates transcribe and score"]
    assert "the judge's pick" in shown["the judge picks"] and "Caller spelled it." in shown["a note"]
    assert "No control line was drawn" not in shown["the judge picks"]
    assert "No control line was drawn" in shown["its control's line flagged"]
    assert "Names renamed" in shown["the bank renamed"]
    assert "Its text had no words." in shown["its transcriptions (no words: failed)"]
    assert "Other</a>" in shown["its scores there"] and "no bank" in shown["a flag moved out of every bank"]


def test_a_vocabulary_renamed_renames_its_candidate_in_kept_boxes(
    admin_client, org, recorded_call, monkeypatch
):
    with FakeDeepgram() as fake:
        monkeypatch.setenv(fake.key_env, fake.key)
        bank = actions.do_create_bank(org, name="Vocab", controls_per_flag=0)
        menu = vocabularies.do_create_vocabulary(org, name="Menu", terms="Siobhan")
        vocabularies.do_add_vocabulary_candidate(bank, vendor_entry(fake, "dg"), menu, confirmed=True)
        actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan, table for four", bank=bank)
        tasks.drain()
    assert "+ Menu</th>" in page(admin_client, recorded_call)
    vocabularies.do_update_vocabulary(menu, name="Guests")
    assert "+ Guests</th>" in assert_kept_is_fresh(admin_client, recorded_call, "the vocabulary renamed")


def test_a_pick_the_judge_withdraws_leaves_no_kept_box_showing_it(
    admin_client, org, tenant, live_transcriber, make_transcriber, llm_server
):
    bank = actions.do_create_bank(org, name="Names", controls_per_flag=0)
    for name, text in [("hyphen", SAID), ("lower", "mary kate table for two")]:
        actions.do_add_candidate(bank, make_transcriber(name, text), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["Mary Kate table for to", "bye"])
    flag = actions.do_flag_line(call.lines.get(position=0), SAID, bank=bank)
    tasks.drain()
    assert picks.maybe_pick(flag.pk).chosen_id
    # One of the two matching versions no longer matches: the score's write moves the bank's results...
    lower = bank.candidates.get(transcriber__slug="test-lower").transcriber_id
    scores.write_score(flag, None, lower, Score.CANDIDATE, "Marie Kate", flag.expected_text)
    turns = reverse("tt:turn_table", args=[bank.pk])
    assert "the judge's pick" in page(admin_client, call)  # kept with the pick, at the new version
    assert "Judge's pick" in admin_client.get(turns).content.decode()  # the turn table's page too
    # ... and the judge's task then withdraws the pick (one version is left), which must move a version too.
    picks.maybe_pick(flag.pk)
    assert not JudgePick.objects.filter(flag=flag).exists()
    assert "Judge's pick" not in admin_client.get(turns).content.decode()
    assert "the judge's pick" not in assert_kept_is_fresh(admin_client, call, "the pick withdrawn")


def test_a_page_read_again_reads_no_results_of_its_kept_boxes_whatever_its_bank_does_elsewhere(
    admin_client, org, tenant, live_transcriber, make_transcriber
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("x", "one two"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one too", "three four", "five six"])
    actions.do_flag_line(call.lines.get(position=0), "one two", bank=bank)
    actions.do_flag_line(call.lines.get(position=2), "three for", bank=bank, later=True)  # pending, kept too
    tasks.drain()
    first = page(admin_client, call)
    # Another call of the bank is flagged and scored: the bank's results move, this call's boxes do not.
    elsewhere = make_call(tenant, live_transcriber, caller_texts=["seven eight", "nine ten"])
    actions.do_flag_line(elsewhere.lines.get(position=0), "seven ate", bank=bank)
    tasks.drain()
    with CaptureQueriesContext(connection) as read:
        again = page(admin_client, call)
    assert again == first and "✓" in again
    touched = " ".join(q["sql"] for q in read.captured_queries)
    for table in ("score", "controlline", "judgepick", "flagedit", "candidate"):
        assert f"transcriber_tests_{table}" not in touched, table


def test_a_call_read_after_the_queue_scored_its_flags_reads_the_boxes_it_stored(
    admin_client, org, tenant, live_transcriber, make_transcriber
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("x", "one two"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one too", "three four", "five six"])
    actions.do_flag_line(call.lines.get(position=0), "one two", bank=bank, later=True)
    actions.do_flag_line(call.lines.get(position=2), "five sick", bank=bank, later=True)
    assert "… pending" in page(admin_client, call)  # read while the flags wait for the queue
    tasks.drain()  # the queue settles, transcribes and scores them, and stores the call's boxes
    assert FlagBox.objects.filter(flag__line__call=call).count() == 2
    cache.clear()  # a web process that never rendered them
    with CaptureQueriesContext(connection) as read:
        html = page(admin_client, call)
    assert "… pending" not in html and "✓" in html and "five sick" in html
    touched = " ".join(q["sql"] for q in read.captured_queries)
    for table in ("score", "controlline", "judgepick", "flagedit", "candidate"):
        assert f"transcriber_tests_{table}" not in touched, table
    forget_boxes()
    assert page(admin_client, call) == html


def test_a_persons_edit_hands_the_calls_boxes_to_the_queue(
    admin_client,
    org,
    tenant,
    live_transcriber,
    make_transcriber,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("x", "one two"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one too", "three four", "five six"])
    flag = actions.do_flag_line(call.lines.get(position=0), "one two", bank=bank)
    other = actions.do_flag_line(call.lines.get(position=2), "five sick", bank=bank)
    tasks.drain()
    kept = FlagBox.objects.get(flag=other).html
    handed = []
    monkeypatch.setattr(handles.BUILD_BOXES, "enqueue", handed.append)
    with django_capture_on_commit_callbacks(execute=True):
        actions.do_edit_flag(flag, note="Caller spelled it.")
    assert handed == [call.pk]
    assert tasks.build_boxes(call.pk) == 1  # the edited flag's alone: the other's items are as they were
    assert FlagBox.objects.get(flag=other).html == kept
    cache.clear()
    with CaptureQueriesContext(connection) as read:
        html = page(admin_client, call)
    assert "Caller spelled it." in html
    assert "transcriber_tests_score" not in " ".join(q["sql"] for q in read.captured_queries)


def test_the_queue_stores_the_boxes_once_it_settles_a_flag_and_once_the_judge_picks(
    org, tenant, live_transcriber, make_transcriber, llm_server
):
    bank = actions.do_create_bank(org, name="Names", controls_per_flag=0)
    for name, text in [("hyphen", SAID), ("lower", "mary kate table for two")]:
        actions.do_add_candidate(bank, make_transcriber(name, text), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["Mary Kate table for to", "bye now"])
    first, second = call.lines.filter(speaker="caller").order_by("position")
    unbanked = actions.do_flag_line(second, "bye now then", bank=None, later=True)
    tasks.settle_flag(unbanked.pk)  # a flag into no bank: nothing to transcribe, its box is stored at once
    assert "no bank" in FlagBox.objects.get(flag=unbanked).html
    flag = actions.do_flag_line(first, SAID, bank=bank)
    tasks.drain()
    assert "the judge's pick" not in FlagBox.objects.get(flag=flag).html
    tasks.pick_line(flag.line_id)
    assert "the judge's pick" in FlagBox.objects.get(flag=flag).html


def test_the_queue_stores_no_box_when_a_write_lands_while_it_renders(
    org, tenant, live_transcriber, make_transcriber, monkeypatch
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=0)
    actions.do_add_candidate(bank, make_transcriber("x", "one two"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one too", "bye"])
    flag = actions.do_flag_line(call.lines.get(position=0), "one two", bank=bank)
    assert boxes.build([call.pk]) == 0  # its transcription waits: the chain that finishes it builds the box
    tasks.drain()
    FlagBox.objects.all().delete()
    render = boxes.render

    def render_then_a_write(*args, **kwargs):
        rendered = render(*args, **kwargs)
        actions.do_edit_flag(flag, note="Typed while the queue rendered.")
        return rendered

    monkeypatch.setattr(boxes, "render", render_then_a_write)
    assert boxes.build([call.pk]) == 0 and not FlagBox.objects.exists()
    monkeypatch.setattr(boxes, "render", render)
    assert boxes.build([call.pk]) == 1
    assert "Typed while the queue rendered." in FlagBox.objects.get().html


def test_the_queue_stores_no_box_for_a_flag_deleted_since_it_rendered(
    org, tenant, live_transcriber, make_transcriber
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=0)
    call = make_call(tenant, live_transcriber, caller_texts=["one too", "bye"])
    flag = actions.do_flag_line(call.lines.get(position=0), "one two", bank=bank)
    rendered = Flag.objects.get(pk=flag.pk)
    flag.delete()
    assert boxes._store(call, {rendered: ("key", "<p>gone</p>")}) == 0 and not FlagBox.objects.exists()


def test_calls_banks_and_flags_a_host_on_the_release_before_inserts_start_at_version_zero(
    admin_client, org, tenant
):
    """During a rolling upgrade, hosts still on the release before insert calls (an import), banks and flags without
    the version columns: the database's defaults fill them, and the pages read them."""
    from django.utils import timezone

    from oncore.calls.models import Call
    from transcriber_tests.models import Bank

    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO calls_call (tenant_id, external_id, started_at, recording, recorded, live_transcriber_name,"
            " created_at, n_lines, n_flags) VALUES (%s, 'old-host', %s, '', %s, '', %s, 0, 0)",
            [tenant.pk, now, False, now],
        )
        cursor.execute(
            "INSERT INTO transcriber_tests_bank (organization_id, name, language_label, threshold,"
            " controls_per_flag, created_at, results_changed_at, picks_changed_at)"
            " VALUES (%s, 'Old host', '', 0.6, 1, %s, %s, %s)",
            [org.pk, now, now, now],
        )
    call = Call.objects.get(external_id="old-host")
    bank = Bank.objects.get(name="Old host")
    assert call.flags_version == 0 and bank.settings_version == 0
    line = call.lines.create(position=0, speaker="caller", text="one too")
    with connection.cursor() as cursor:  # a flag made on the release before: no items_version
        cursor.execute(
            "INSERT INTO transcriber_tests_flag (organization_id, line_id, bank_id, expected_text, tags, note,"
            " created_at, joined_at, updated_at, check_expected, settled)"
            " VALUES (%s, %s, %s, 'one two', '', '', %s, %s, %s, %s, %s)",
            [org.pk, line.pk, bank.pk, now, now, now, False, True],
        )
    assert Flag.objects.get(line=line).items_version == 0
    assert "one two" in page(admin_client, call)
