"""The judge's pick on flagged and control lines where several candidates matched but wrote it differently."""

import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.llm_server import error, prompt_text
from transcriber_tests import actions, judge
from transcriber_tests.models import JudgePick, Score, Transcription
from transcriber_tests.queries.picks import picks_by_item
from transcriber_tests.work import picks, tasks

pytestmark = pytest.mark.django_db

SAID = "Mary-Kate, table for two"


@pytest.fixture
def bank(org, make_transcriber):
    bank = actions.do_create_bank(org, name="Names", controls_per_flag=0)
    for name, text in [
        ("hyphen", "Mary-Kate, table for two"),
        ("lower", "mary kate table for two"),
        ("wrong", "Marie Kate table for two"),
    ]:
        actions.do_add_candidate(bank, make_transcriber(name, text), confirmed=True)
    return bank


def flag_first_line(bank, call, said=SAID):
    line = call.lines.filter(speaker="caller").order_by("position").first()
    return actions.do_flag_line(line, said, bank=bank)


def scores_of(flag):
    return list(Score.objects.filter(flag=flag).order_by("id").values())


def shown(body) -> dict:
    """letter -> text of the versions a pick request shows the judge (in a shuffled order)."""
    return dict(re.findall(r'<version id="([A-Z])">([^<]*)</version>', prompt_text(body)))


def first_shown(llm_server) -> str:
    """The text the default responder picks: the version shown first in the last pick request."""
    return shown(llm_server.bodies[-1])["A"]


def test_it_picks_among_matching_versions_with_the_assistants_instructions_and_neighbouring_lines(
    bank, recorded_call, llm_server
):
    flag = flag_first_line(bank, recorded_call)
    tasks.drain()
    before = scores_of(flag)
    llm_server.responder = lambda body: {
        "reasoning": "The booking system stores names in lower case. It also drops the hyphen, as staff type it.",
        "candidate": next(k for k, text in shown(body).items() if text == "mary kate table for two"),
    }

    pick = picks.maybe_pick(flag.pk)

    assert pick.chosen.slug == "test-lower" and pick.chosen_text == "mary kate table for two"
    assert (
        pick.reasoning == "The booking system stores names in lower case."
    )  # one sentence, as the pick records
    tool = llm_server.bodies[0]["tools"][0]
    assert "One sentence" in tool["input_schema"]["properties"]["reasoning"]["description"]
    assert pick.versions == {
        str(bank.candidates.get(position=0).transcriber_id): "Mary-Kate, table for two",
        str(bank.candidates.get(position=1).transcriber_id): "mary kate table for two",
    }
    assert pick.prompt_version == judge.JUDGE_PROMPT_VERSION and pick.input_tokens > 0 and pick.cost > 0
    body = llm_server.bodies[0]
    assert "Take bookings." in body["system"][0]["text"]
    assert "yes that's right" in prompt_text(body)  # a neighbouring line of the call
    assert "Marie Kate" not in prompt_text(body)  # only versions that matched
    assert scores_of(flag) == before  # the judge never changes a score

    assert (
        picks.maybe_pick(flag.pk) == pick and len(llm_server.requests) == 1
    )  # same versions: not asked again


def test_it_asks_nothing_when_the_matching_candidates_wrote_it_the_same(
    org, make_transcriber, recorded_call, llm_server
):
    bank = actions.do_create_bank(org, name="Same", controls_per_flag=0)
    for name in ("one", "two"):
        actions.do_add_candidate(bank, make_transcriber(name, SAID), confirmed=True)
    flag = flag_first_line(bank, recorded_call)
    tasks.drain()
    assert picks.maybe_pick(flag.pk) is None
    assert not JudgePick.objects.exists() and not llm_server.requests


def test_it_waits_for_the_items_last_candidate(bank, recorded_call, llm_server):
    flag = flag_first_line(bank, recorded_call)
    assert picks.maybe_pick(flag.pk) is None
    assert not llm_server.requests


def test_it_invents_nothing_without_a_judge_key(bank, recorded_call, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    flag = flag_first_line(bank, recorded_call)
    tasks.drain()
    assert picks.maybe_pick(flag.pk) is None
    assert not JudgePick.objects.exists()
    with pytest.raises(CommandError, match="judge not configured"):
        call_command("fill_picks", str(bank.pk))


def test_it_records_a_failed_pick_and_fills_it_later(bank, recorded_call, llm_server, settings, capsys):
    settings.ANTHROPIC_MAX_RETRIES = 0
    flag = flag_first_line(bank, recorded_call)
    tasks.drain()
    llm_server.queue(error(500))
    failed = picks.maybe_pick(flag.pk)
    assert failed.chosen is None and "500" in failed.error

    call_command("fill_picks", str(bank.pk))
    assert "1 items, 1 picked, 0 where the judge failed" in capsys.readouterr().out
    pick = JudgePick.objects.get()
    assert (
        pick.chosen_text == first_shown(llm_server) and pick.error == ""
    )  # the default responder: shown first


def test_it_picks_on_control_lines_after_each_transcription(org, make_transcriber, recorded_call, llm_server):
    bank = actions.do_create_bank(org, name="Controls", controls_per_flag=1)
    actions.do_add_candidate(bank, make_transcriber("plain", "my number is 0 8 7"), confirmed=True)
    actions.do_add_candidate(bank, make_transcriber("dashed", "My number is 0-8-7"), confirmed=True)
    caller = list(recorded_call.lines.filter(speaker="caller").order_by("position"))
    for other in (caller[1], caller[3]):  # flagged lines are never controls: leaves caller[2] as the only one
        actions.do_flag_line(other, other.text, confirm_matches_live=True)
    flag = actions.do_flag_line(caller[0], "Siobhan, table for four at eight thirty", bank=bank)
    tasks.drain()
    for line_id in Transcription.objects.order_by("id").values_list("line_id", flat=True):
        tasks.pick_line(line_id)
    control = flag.controls.get(line=caller[2])
    pick = JudgePick.objects.get(control=control)
    assert pick.flag == flag and pick.chosen_text == first_shown(llm_server)
    assert JudgePick.objects.count() == 1  # on the flag itself no candidate matched


def test_it_drops_a_pick_once_the_item_no_longer_has_two_versions(bank, recorded_call, llm_server):
    flag = flag_first_line(bank, recorded_call)
    tasks.drain()
    assert picks.maybe_pick(flag.pk) is not None
    actions.do_remove_candidate(bank, bank.candidates.get(position=1).transcriber)
    assert picks.maybe_pick(flag.pk) is None
    assert not JudgePick.objects.exists()


def test_it_reads_the_picks_of_a_page_in_one_query(
    bank, recorded_call, llm_server, django_assert_num_queries
):
    flag = flag_first_line(bank, recorded_call)
    tasks.drain()
    picks.maybe_pick(flag.pk)
    items = list(Score.objects.filter(flag=flag, source=Score.LIVE))
    with django_assert_num_queries(1):
        found = picks_by_item(items)
        assert found[(flag.pk, None)].chosen_text == first_shown(llm_server)


def test_a_pick_written_after_the_turn_table_was_read_shows_on_the_next_read(
    bank, recorded_call, llm_server, admin_client
):
    """The turn table's pages are kept by the versions of what they show: a pick moves its bank's, so a page read
    before the judge answered never hides it."""
    from django.urls import reverse

    flag = flag_first_line(bank, recorded_call)
    tasks.drain()
    JudgePick.objects.filter(flag=flag).delete()
    url = reverse("tt:turn_table", args=[bank.pk])
    assert "Judge" not in admin_client.get(url).content.decode()  # kept with no pick
    llm_server.responder = lambda body: {
        "reasoning": "The guest spells it with a hyphen.",
        "candidate": next(k for k, text in shown(body).items() if text == SAID),
    }
    assert picks.maybe_pick(flag.pk).chosen_text == SAID
    content = admin_client.get(url).content.decode()
    assert "The guest spells it with a hyphen." in content and "pick" in content
