"""The call page keeps each flag's box (its bank, tags, expected text, who made and edited it, its results per
candidate) rendered, by the versions of what it shows (views/calls.py flag_boxes): after every kind of write, the
page read with the boxes kept is the page read with none kept."""

import random
import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.fixtures import make_call
from transcriber_tests import actions
from transcriber_tests.actions import controls, scores
from transcriber_tests.models import JudgePick, Score
from transcriber_tests.work import picks, tasks

pytestmark = pytest.mark.django_db

SAID = "Mary-Kate, table for two"


def page(client, call) -> str:
    html = client.get(reverse("tt:call", args=[call.pk])).content.decode()
    return re.sub(r'(csrfmiddlewaretoken" value=")[^"]+|("X-CSRFToken": ")[^"]+', r"\1\2", html)


def assert_kept_is_fresh(client, call, step: str) -> str:
    """The page as read with the boxes kept before `step`, against the page read with nothing kept (which keeps
    the boxes again, for the next step)."""
    kept = page(client, call)
    cache.clear()
    fresh = page(client, call)
    assert kept == fresh, f"a box kept from before {step} was served after it"
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
    shown = []
    for step, write in steps:
        write()
        shown.append(assert_kept_is_fresh(admin_client, call, step))
    # The steps changed what a person reads.
    assert "… pending" in shown[0] and "… pending" not in shown[1]
    assert "the judge's pick" in shown[2] and "Caller spelled it." in shown[3]
    assert "Names renamed" in shown[7] and "Its text had no words." in shown[9]
    assert "Other</a>" in shown[15] and "no bank" in shown[17]


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


def test_a_page_read_again_reads_no_results_of_its_kept_boxes(
    admin_client, org, tenant, live_transcriber, make_transcriber
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("x", "one two"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one too", "three four", "five six"])
    actions.do_flag_line(call.lines.get(position=0), "one two", bank=bank)
    actions.do_flag_line(call.lines.get(position=2), "three for", bank=bank, later=True)  # pending, kept too
    tasks.drain()
    first = page(admin_client, call)
    with CaptureQueriesContext(connection) as read:
        again = page(admin_client, call)
    assert again == first and "✓" in again
    touched = " ".join(q["sql"] for q in read.captured_queries)
    for table in ("score", "controlline", "judgepick", "flagedit", "candidate"):
        assert f"transcriber_tests_{table}" not in touched, table
