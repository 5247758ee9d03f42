"""The judge's pick is asked on every path where an item's candidate scores become complete, once they are
committed, as in production: the pick tasks run the moment they are queued (the other queue tasks are left
to tasks.drain)."""

import importlib

import django_q.tasks
import pytest

from tests.llm_server import prompt_text
from transcriber_tests import actions
from transcriber_tests.models import JudgePick, Transcription
from transcriber_tests.work import picks, tasks

pytestmark = pytest.mark.django_db(transaction=True)

HYPHEN, LOWER, SPACED = "Mary-Kate, table for two", "mary kate table for two", "Mary Kate, table for two"


@pytest.fixture
def pick_tasks_run(monkeypatch):
    """Run the judge's tasks as soon as they are queued; record every task queued."""
    queued = []
    enqueue = django_q.tasks.async_task

    def run(func, *args, **kwargs):
        queued.append(func)
        if func in ("transcriber_tests.work.tasks.pick_line", "transcriber_tests.work.tasks.catch_up_picks"):
            module, name = func.rsplit(".", 1)
            return getattr(importlib.import_module(module), name)(*args)
        return enqueue(func, *args, **kwargs)

    monkeypatch.setattr(django_q.tasks, "async_task", run)
    return queued


@pytest.fixture
def versions(make_transcriber):
    return {
        "hyphen": make_transcriber("hyphen", HYPHEN),
        "lower": make_transcriber("lower", LOWER),
        "spaced": make_transcriber("spaced", SPACED),
    }


def bank_of(org, name, *transcribers):
    bank = actions.do_create_bank(org, name=name, controls_per_flag=0)
    for t in transcribers:
        actions.do_add_candidate(bank, t, confirmed=True)
    return bank


def first_line(call):
    return call.lines.filter(speaker="caller").order_by("position").first()


def flag_and_transcribe(bank, call):
    """The call's first caller line flagged into the bank (said: HYPHEN), every candidate transcribed."""
    flag = actions.do_flag_line(first_line(call), HYPHEN, bank=bank)
    tasks.drain()
    return flag


def picked_versions(flag):
    return set(JudgePick.objects.get(flag=flag, control=None).versions.values())


def test_it_asks_when_the_items_last_candidate_fails(
    org, versions, make_transcriber, stt_server, recorded_call, llm_server, pick_tasks_run
):
    broken = make_transcriber("broken", "x")
    stt_server.statuses["broken"] = 400
    bank = bank_of(org, "B", versions["hyphen"], versions["lower"], broken)  # the failing one finishes last
    flag = flag_and_transcribe(bank, recorded_call)
    assert Transcription.objects.get(transcriber=broken).status == Transcription.FAILED
    assert picked_versions(flag) == {HYPHEN, LOWER}


def test_it_asks_when_a_flag_on_a_line_a_run_transcribed_takes_its_scores(
    org, versions, recorded_call, llm_server, pick_tasks_run
):
    line = first_line(recorded_call)
    for name, text in (("hyphen", HYPHEN), ("lower", LOWER)):  # what a full-call run leaves behind
        Transcription.objects.create(
            organization=org, line=line, transcriber=versions[name], status=Transcription.DONE, text=text
        )
    bank = bank_of(org, "B", versions["hyphen"], versions["lower"])
    flag = actions.do_flag_line(line, HYPHEN, bank=bank)
    assert picked_versions(flag) == {HYPHEN, LOWER}  # nothing was transcribed: the scores were reused


def test_it_asks_again_when_a_flag_moves_to_a_bank_whose_candidates_were_already_run(
    org, versions, recorded_call, llm_server, pick_tasks_run
):
    first = bank_of(org, "First", versions["hyphen"], versions["lower"], versions["spaced"])
    second = bank_of(org, "Second", versions["lower"], versions["spaced"])
    flag = flag_and_transcribe(first, recorded_call)
    assert picked_versions(flag) == {HYPHEN, LOWER, SPACED}
    actions.do_move_flag(flag, second)
    assert picked_versions(flag) == {LOWER, SPACED}


def test_it_asks_again_when_a_candidate_is_added_back(
    org, versions, recorded_call, llm_server, pick_tasks_run
):
    bank = bank_of(org, "B", versions["hyphen"], versions["lower"])
    flag = flag_and_transcribe(bank, recorded_call)
    actions.do_remove_candidate(bank, versions["lower"])
    actions.do_add_candidate(bank, versions["spaced"], confirmed=True)
    tasks.drain()
    assert picked_versions(flag) == {HYPHEN, SPACED}
    actions.do_remove_candidate(bank, versions["spaced"])
    actions.do_add_candidate(bank, versions["lower"], confirmed=True)  # its transcription is reused
    assert picked_versions(flag) == {HYPHEN, LOWER}


def test_it_drops_the_pick_and_asks_again_after_the_expected_text_is_edited(
    org, versions, recorded_call, llm_server, pick_tasks_run
):
    bank = bank_of(org, "B", versions["hyphen"], versions["lower"])
    flag = flag_and_transcribe(bank, recorded_call)
    assert len(llm_server.requests) == 1
    actions.do_edit_flag(flag, expected_text="MARY-KATE: table for two!")  # same matches, same versions
    assert len(llm_server.requests) == 2
    assert "MARY-KATE: table for two!" in prompt_text(llm_server.bodies[1])
    assert JudgePick.objects.filter(flag=flag).count() == 1


def test_the_minutely_pump_catches_up_an_item_left_without_a_pick_and_never_picks_twice(
    org, versions, recorded_call, llm_server, pick_tasks_run, monkeypatch
):
    bank = bank_of(org, "B", versions["hyphen"], versions["lower"])
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    flag = flag_and_transcribe(bank, recorded_call)  # scored while the judge was not configured: no pick
    assert not JudgePick.objects.exists()
    monkeypatch.setenv("ANTHROPIC_API_KEY", llm_server.key)

    tasks.pump_all()
    assert picked_versions(flag) == {HYPHEN, LOWER} and len(llm_server.requests) == 1
    tasks.pump_all()
    picks.maybe_pick_line(flag.line_id)
    tasks.pick_line(flag.line_id)
    assert JudgePick.objects.count() == 1 and len(llm_server.requests) == 1  # asking again changes nothing
