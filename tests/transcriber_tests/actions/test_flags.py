"""Flags and their control lines: what may be drawn as a control, moving a flag between banks, the controls
setting changing under a bank, and an expected text the live transcript already says."""

import random
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from oncore.calls.importer import do_import_calls
from oncore.calls.models import Line
from tests.fixtures import make_call
from tests.transcriber_tests.support import read
from transcriber_tests import actions, aggregates, errors
from transcriber_tests.actions import controls
from transcriber_tests.lib import scoring
from transcriber_tests.models import ControlLine, Flag, Score, Transcription
from transcriber_tests.queries.lines import why_not_flaggable
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


def caller_lines(call):
    return list(call.lines.filter(speaker="caller").order_by("position"))


def test_it_never_draws_a_line_without_words_as_a_control(org, tenant, live_transcriber, make_transcriber):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=2)
    actions.do_add_candidate(bank, make_transcriber("x", "hello"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["Shivon", "", "...", " - ", "table for two"])
    first, *others = caller_lines(call)
    for seed in range(10):
        flag = actions.do_flag_line(first, "Siobhan", bank=bank, rng=random.Random(seed))
        assert [c.line.text for c in flag.controls.all()] == ["table for two"]
        flag.delete()

    # A flag on a line whose own live text has no words is valid: the live row counts it as failed.
    flag = actions.do_flag_line(others[0], "a table please", bank=bank)
    live = Score.objects.get(flag=flag, control=None, source=Score.LIVE)
    assert live.failed and live.failure == Score.NO_TEXT
    tasks.drain()


def test_two_flags_on_one_call_never_count_the_same_control_twice(org, tenant, live_transcriber):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    texts = ["one two", "three four", "five six", "seven eight"]
    for seed in range(20):
        call = make_call(tenant, live_transcriber, caller_texts=texts)
        a, b, *_ = caller_lines(call)
        rng = random.Random(seed)
        actions.do_flag_line(a, "one too", bank=bank, rng=rng)
        actions.do_flag_line(b, "three for", bank=bank, rng=rng)
        used = list(ControlLine.objects.filter(flag__line__call=call).values_list("line_id", flat=True))
        assert len(used) == 2 and len(set(used)) == 2
        assert a.pk not in used


def test_moving_a_flag_gives_it_the_new_banks_controls(org, tenant, live_transcriber, make_transcriber):
    two = actions.do_create_bank(org, name="Two", controls_per_flag=2)
    none = actions.do_create_bank(org, name="None", controls_per_flag=0)
    one = actions.do_create_bank(org, name="One", controls_per_flag=1)
    for bank in (two, none, one):
        actions.do_add_candidate(bank, make_transcriber(f"c{bank.pk}", "one two"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one too", "a b", "c d", "e f"])
    flag = actions.do_flag_line(caller_lines(call)[0], "one two", bank=two)
    old_controls = set(flag.controls.values_list("pk", flat=True))
    assert len(old_controls) == 2

    actions.do_move_flag(flag, none)
    assert flag.controls.count() == 0
    assert not Score.objects.filter(control_id__in=old_controls).exists()  # they left with the old bank

    actions.do_move_flag(flag, one)
    assert flag.controls.count() == 1
    assert Score.objects.filter(flag=flag, control__isnull=False, source=Score.LIVE).count() == 1

    actions.do_move_flag(flag, None)
    assert flag.controls.count() == 0


def test_the_results_page_shows_the_mix_of_controls_when_the_setting_changed(
    admin_client, org, tenant, live_transcriber, make_transcriber
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("x", "one two"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one too", "a b", "c d", "e f", "g h"])
    lines = caller_lines(call)
    actions.do_flag_line(lines[0], "one two", bank=bank)
    url = reverse("tt:bank", args=[bank.pk])
    assert "Control lines per flag differ" not in admin_client.get(url).content.decode()

    settings_page = admin_client.get(reverse("tt:bank_edit", args=[bank.pk])).content.decode()
    assert "applies to flags made or moved into the bank from now on" in settings_page
    response = admin_client.post(
        reverse("tt:bank_edit", args=[bank.pk]),
        {"name": "B", "threshold_pct": "60", "controls_per_flag": "0"},
    )
    assert response.status_code == 302
    for line in lines[1:3]:
        actions.do_flag_line(line, "something else", bank=bank)
    tasks.drain()  # the queue computes the bank's figures again
    page = admin_client.get(url).content.decode()
    assert "Control lines per flag differ in this window: 2 flags with 0 controls, 1 with 1." in page


def demo_org(org):
    """The demo calls, a few caller lines blanked; every caller line that can be flagged."""
    do_import_calls(Path(settings.BASE_DIR) / "fixtures" / "demo" / "calls.json", org)
    lines = [
        line
        for line in Line.objects.filter(call__tenant__organization=org, speaker=Line.CALLER)
        .select_related("call")
        .order_by("id")
        if why_not_flaggable(line) is None
    ]
    for line, text in zip(lines[::7], ["", "...", " - ", "?!", ""], strict=False):  # lines without words
        line.text = text
        line.save(update_fields=["text"])
    return lines


def assert_controls_sound():
    for bank_id in set(Flag.objects.exclude(bank=None).values_list("bank_id", flat=True)):
        in_bank = ControlLine.objects.filter(flag__bank_id=bank_id)
        counts = Counter(in_bank.values_list("line_id", flat=True))
        assert not [line for line, n in counts.items() if n > 1], "a line counted twice as a control"
        for control in in_bank.select_related("line", "flag__line"):
            assert scoring.normalize(control.expected_text), "a control without words"
            assert control.line.call_id == control.flag.line.call_id and control.line != control.flag.line
    assert not ControlLine.objects.filter(flag__bank=None).exists()
    assert not ControlLine.objects.filter(line__flag__isnull=False).exists(), "a flagged line is a control"


@pytest.mark.parametrize("controls", [0, 1, 2])
def test_flagging_every_demo_caller_line_in_random_order_and_moving_flags_keeps_controls_sound(
    org, make_transcriber, controls
):
    lines = demo_org(org)
    banks = [actions.do_create_bank(org, name=n, controls_per_flag=controls) for n in ("A", "B")]
    actions.do_add_candidate(banks[0], make_transcriber("x", "hello there"), confirmed=True)
    rng = random.Random(controls)
    for line in rng.sample(lines, len(lines)):
        bank = rng.choice(banks + [None])
        flag = actions.do_flag_line(line, "what was said", bank=bank, rng=rng)
        assert flag.controls.count() <= (bank.controls_per_flag if bank else 0)
        if rng.random() < 0.5:
            actions.do_move_flag(flag, rng.choice(banks + [None]), rng=rng)
        assert_controls_sound()
    for flag in rng.sample(list(Flag.objects.all()), 20):
        actions.do_move_flag(flag, rng.choice(banks + [None]), rng=rng)
        assert_controls_sound()
    assert Flag.objects.count() == len(lines)


# ---------------------------------------------------------------- a control line that becomes a flag


def test_a_control_line_that_becomes_a_flag_is_retired_and_replaced_from_the_same_call(
    org, tenant, live_transcriber, make_transcriber
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("x", "three four"), confirmed=True)
    call = make_call(tenant, live_transcriber, caller_texts=["one two", "three four", "five six"])
    first, second, third = caller_lines(call)
    a = actions.do_flag_line(first, "one too", bank=bank, rng=random.Random(0))
    control = a.controls.get()
    tasks.drain()
    assert Score.objects.filter(control=control).count() == 2  # live and the candidate

    # The control's line is flagged: its live text is wrong, so it can no longer expect it.
    b = actions.do_flag_line(control.line, "tree for", bank=bank, rng=random.Random(0))
    # The candidate had transcribed the line as a control: the new flag is scored with that text at once, not
    # transcribed (and paid for) again, and counted once in the totals with its live and candidate scores.
    assert Transcription.objects.filter(line=control.line).count() == 1
    scored = Score.objects.get(flag=b, control=None, source=Score.CANDIDATE)
    assert (scored.hypothesis, scored.wer) == ("three four", 1.0)
    assert not aggregates.rebuild(fix=False).any
    tasks.drain()

    assert not ControlLine.objects.filter(pk=control.pk).exists()
    assert not Score.objects.filter(control_id=control.pk).exists()
    replacement = a.controls.get()
    left = {first.pk, second.pk, third.pk} - {first.pk, control.line_id}
    assert {replacement.line_id} == left  # the one caller line of the call left
    assert Score.objects.filter(flag=a, control=replacement).count() == 2
    assert not b.controls.exists()  # nothing left to draw for the second flag
    assert not aggregates.rebuild(fix=False).any  # the totals followed every change
    turns = [(r.flag_id, r.control_id) for r in turn_rows_of(bank)]
    assert (a.pk, control.pk) not in turns and (a.pk, replacement.pk) in turns


def test_a_retired_control_without_a_replacement_leaves_its_flag_with_fewer_controls(
    org, tenant, live_transcriber, client, admin_user
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    call = make_call(tenant, live_transcriber, caller_texts=["one two", "three four"])
    first, second = caller_lines(call)
    a = actions.do_flag_line(first, "one too", bank=bank)
    assert a.controls.get().line == second
    actions.do_flag_line(second, "tree for", bank=bank)

    assert not a.controls.exists() and not ControlLine.objects.exists()
    assert not aggregates.rebuild(fix=False).any
    client.force_login(admin_user)
    page = client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    assert "Control lines per flag differ" not in page  # both flags now carry none


def test_the_repair_retires_controls_that_were_flagged_before_the_rule(org, tenant, live_transcriber):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    call = make_call(tenant, live_transcriber, caller_texts=["one two", "three four", "five six"])
    first, *_ = caller_lines(call)
    a = actions.do_flag_line(first, "one too", bank=bank, rng=random.Random(0))
    control = a.controls.get()
    # As older code left it: the control's line flagged (outside any bank), the control kept.
    Flag.objects.create(organization=org, line=control.line, expected_text="tree for")
    call.n_flags = 2
    call.save(update_fields=["n_flags"])

    assert controls.retire_flagged_controls() == 1
    assert not ControlLine.objects.filter(line__flag__isnull=False).exists()
    assert a.controls.get().line_id not in (first.pk, control.line_id)
    assert not aggregates.rebuild(fix=False).any
    assert controls.retire_flagged_controls() == 0


def turn_rows_of(bank):
    from transcriber_tests import queries

    return queries.turn_rows(bank, queries.turn_items(bank, 30), list(queries.candidates_of(bank)))


# ---------------------------------------------------------------- an expected text the live transcript already says


def test_it_refuses_an_expected_text_the_live_transcript_already_says_unless_confirmed(bank, recorded_call):
    line = caller_lines(recorded_call)[1]  # live: "yes that's right"
    with pytest.raises(errors.ExpectedMatchesLive, match="already says this"):
        actions.do_flag_line(line, "Yes, that's right!", bank=bank)
    assert not Flag.objects.exists()
    flag = actions.do_flag_line(line, "Yes, that's right!", bank=bank, confirm_matches_live=True)

    other = actions.do_flag_line(caller_lines(recorded_call)[0], "Siobhan, table for four", bank=bank)
    with pytest.raises(errors.ExpectedMatchesLive):
        actions.do_edit_flag(other, expected_text="shivon table for for at 830")
    actions.do_edit_flag(other, expected_text="shivon table for for at 830", confirm_matches_live=True)
    actions.do_edit_flag(flag, note="an unchanged text needs no confirmation")


def test_the_flag_form_says_the_live_transcript_already_says_it_and_asks_to_confirm(
    admin_client, bank, recorded_call
):
    line = caller_lines(recorded_call)[1]
    url = reverse("tt:flag_line", args=[line.pk])
    form = {"expected_text": line.text, "bank": bank.pk}
    response = admin_client.post(url, form, HTTP_HX_REQUEST="true")
    assert response.status_code == 422 and not Flag.objects.exists()
    page = response.content.decode()
    assert "The live transcript already says" in page and 'name="confirm_matches_live"' in page

    response = admin_client.post(url, {**form, "confirm_matches_live": "on"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and Flag.objects.filter(line=line).exists()


# ---------------------------------------------------------------- drawing controls again after the setting changed


def test_it_offers_to_draw_the_flags_controls_again_when_the_setting_changes_and_does_on_request(
    org, tenant, live_transcriber, make_transcriber, admin_client
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("x", "hello", price="0.006"), confirmed=True)
    flags = []
    for _ in range(3):
        call = make_call(
            tenant, live_transcriber, caller_texts=["one two", "three four", "five six", "seven"]
        )
        flags.append(actions.do_flag_line(caller_lines(call)[0], "one too", bank=bank))
    tasks.drain()
    edit = reverse("tt:bank_edit", args=[bank.pk])
    saved = admin_client.post(
        edit, {"name": "B", "threshold_pct": "60", "controls_per_flag": "2"}, follow=True
    )
    offer = read(saved.content, "Controls of the flags already in this bank")
    assert "3 flags carry another number of control lines than the bank's 2 per flag" in offer
    assert "removes 0 control lines and draws 3 from the same calls" in offer
    assert "3 transcriptions by the bank's candidates, about under $0.01" in offer
    call = make_call(tenant, live_transcriber, caller_texts=["one two", "three four", "five six", "seven"])
    flags.append(actions.do_flag_line(caller_lines(call)[0], "one too", bank=bank))  # drawn with 2: a mix
    tasks.drain()
    bank.refresh_from_db()
    assert (
        "Control lines per flag differ"
        in admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    )

    admin_client.post(reverse("tt:bank_redraw_controls", args=[bank.pk]), {"confirmed": "on"})
    tasks.drain()
    assert [f.controls.count() for f in flags] == [2, 2, 2, 2]
    assert not aggregates.rebuild(fix=False).any
    bank.refresh_from_db()
    page = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    assert "Control lines per flag differ" not in page  # no mix left
    assert_controls_sound()
    assert "Controls of the flags already in this bank" not in admin_client.get(edit).content.decode()


def test_declining_keeps_the_mix_and_the_warning(org, tenant, live_transcriber, admin_client):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=2)
    calls = [
        make_call(tenant, live_transcriber, caller_texts=["one two", "three four", "five six"]) for _ in "ab"
    ]
    flag = actions.do_flag_line(caller_lines(calls[0])[0], "one too", bank=bank)
    actions.do_update_bank(bank, controls_per_flag=0)
    actions.do_flag_line(caller_lines(calls[1])[0], "one too", bank=bank)
    refused = admin_client.post(reverse("tt:bank_redraw_controls", args=[bank.pk]))  # not confirmed
    assert refused.status_code == 302 and flag.controls.count() == 2
    bank.refresh_from_db()
    page = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    assert "Control lines per flag differ in this window: 1 flag with 0 controls, 1 with 2" in page


def test_the_api_estimates_and_draws_the_controls_again(api, org, tenant, live_transcriber):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=2)
    call = make_call(tenant, live_transcriber, caller_texts=["one two", "three four", "five six"])
    flag = actions.do_flag_line(caller_lines(call)[0], "one too", bank=bank)
    actions.do_update_bank(bank, controls_per_flag=1)
    estimate = api.get(f"/banks/{bank.pk}/controls/estimate").json()
    assert (estimate["flags"], estimate["removed"], estimate["added"]) == (1, 1, 0)
    refused = api.post(f"/banks/{bank.pk}/controls/redraw", {})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "estimate_not_confirmed"
    assert refused.json()["error"]["detail"] == estimate and flag.controls.count() == 2
    assert api.post(f"/banks/{bank.pk}/controls/redraw", {"confirm": True}).json()["removed"] == 1
    assert flag.controls.count() == 1 and not aggregates.rebuild(fix=False).any
