"""The CSV downloads hold what the pages and the API show: for random banks (0, 1 or 2 control lines per flag,
the setting changing between flags; failed lines; flags moved out, moved in and deleted) the results, turn-table
and run-line CSVs parse completely and hold the same rows, in the same order, as the page and the API. Their
cells say what the screens say: a control carries no tags, numbers count from 1 as the screens do, a threshold
is cleared or not (never blank), and the results say which days the window covered."""

import csv
import io
import random
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.fixtures import make_call
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run
from transcriber_tests.shapes import exports
from transcriber_tests.work import tasks
from transcriber_tests.work import tasks as run_tasks

pytestmark = pytest.mark.django_db


def rows_of(response) -> list[dict]:
    body = b"".join(response.streaming_content).decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(body)))


def random_bank(org, tenant, live_transcriber, make_transcriber, stt_server, seed):
    """A bank of three candidates (one failing on every line) and flags drawn at random, as described above."""
    rng = random.Random(seed)
    bank = actions.do_create_bank(org, name=f"Bank {seed}", controls_per_flag=rng.choice([0, 1, 2]))
    stt_server.statuses["fails"] = 400
    for name, text in [("hello", "hello there"), ("fails", ""), ("yes", "yes please")]:
        actions.do_add_candidate(bank, make_transcriber(name, text), confirmed=True)
    elsewhere = actions.do_create_bank(org, name=f"Elsewhere {seed}", controls_per_flag=1)
    flags = []
    for _ in range(rng.randint(3, 7)):
        texts = ["hello there", "yes please", "four people", "at eight", "thank you"][: rng.randint(1, 5)]
        call = make_call(tenant, live_transcriber, caller_texts=texts)
        lines = list(call.lines.filter(speaker="caller").order_by("position"))
        for line in rng.sample(lines, rng.randint(1, len(lines))):
            actions.do_update_bank(bank, controls_per_flag=rng.choice([0, 1, 2]))
            target = rng.choice([bank, bank, elsewhere, None])
            flag = actions.do_flag_line(line, "what was said", bank=target, tags=["name"], rng=rng)
            flags.append(flag)
    for flag in rng.sample(flags, len(flags) // 3):
        choice = rng.random()
        if choice < 0.4:
            actions.do_move_flag(flag, bank, rng=rng)
        elif choice < 0.7:
            actions.do_move_flag(flag, None)
        else:
            actions.do_delete_flag(flag)
    tasks.drain()
    return bank


def api_items(api, bank) -> list[dict]:
    items, offset = [], 0
    while True:
        page = api.get(f"/banks/{bank.pk}/turns", {"limit": 200, "offset": offset}).json()
        items += page["items"]
        if not page["has_more"]:
            return items
        offset += 200


def page_items(admin_client, bank) -> list[tuple[int, int | None]]:
    """(flag id, control id or None) of every row of the turn table page, page after page."""
    found, number = [], 1
    while True:
        html = admin_client.get(reverse("tt:turn_table", args=[bank.pk]), {"page": number}).content.decode()
        for _kind, flag_id, control_id in re.findall(r'data-item="(flag|control) (\d+) (\d*)"', html):
            found.append((int(flag_id), int(control_id) if control_id else None))
        if 'rel="next"' not in html:
            return found
        number += 1


@pytest.mark.parametrize("seed", range(6))
def test_the_csvs_hold_the_rows_of_the_page_and_the_api_in_their_order(
    seed, org, tenant, live_transcriber, make_transcriber, stt_server, api, admin_client
):
    bank = random_bank(org, tenant, live_transcriber, make_transcriber, stt_server, seed)

    turns = rows_of(api.get(f"/banks/{bank.pk}/turns.csv"))
    assert turns == rows_of(admin_client.get(reverse("tt:export_turns", args=[bank.pk])))
    items = api_items(api, bank)
    in_csv = list(dict.fromkeys((int(r["flag_id"]), int(r["control_id"] or 0) or None) for r in turns))
    assert in_csv == [(i["flag_id"], i["control_id"]) for i in items] == page_items(admin_client, bank)
    candidates = [c.transcriber for c in bank.candidates.select_related("transcriber").order_by("position")]
    names = [t.display_name for t in candidates]
    for item in items:
        key = (item["flag_id"], item["control_id"])
        mine = [r for r in turns if (int(r["flag_id"]), int(r["control_id"] or 0) or None) == key]
        scored = [r["transcriber"] for r in mine if r["source"] == "candidate"]
        assert scored == [
            t.display_name for t in sorted(candidates, key=lambda t: t.pk)
        ]  # by id, as documented
        assert [r["source"] for r in mine] == ["candidate"] * len(scored) + ["live"]
        assert all(r["tags"] == ("" if item["control_id"] else "name") for r in mine)
        assert item["tags"] == ([] if item["control_id"] else ["name"])
        by_name = {r["transcriber"]: r for r in mine if r["source"] == "candidate"}
        for cell, name in zip(item["cells"], names, strict=True):
            row = by_name[name]
            assert row["failed"] == ("yes" if cell["failed"] else "no")
            assert row["match"] == ("" if cell["failed"] else ("yes" if cell["match"] else "no"))

    results = rows_of(api.get(f"/banks/{bank.pk}/results.csv"))
    cards = api.get(f"/banks/{bank.pk}/results").json()["candidates"]
    candidate_rows = [r for r in results if r["row"] == "candidate"]
    assert [r["transcriber"] for r in candidate_rows] == [c["transcriber"]["display_name"] for c in cards]
    assert [r["order"] for r in candidate_rows] == [str(i + 1) for i in range(len(cards))]
    for row, card in zip(candidate_rows, cards, strict=True):
        assert (int(row["scored"]), int(row["matches"]), int(row["failed"])) == (
            card["scored"],
            card["matches"],
            card["failed"],
        )
        assert row["clears_threshold"] in ("yes", "no") and row["leader"] in ("yes", "no")
    # measured rows say yes or no (the catalogue's other prices are not measured on these lines)
    assert all(r["clears_threshold"] in ("yes", "no") for r in results if r["row"] in ("candidate", "live"))


def test_the_turn_csv_streams_a_flag_with_fewer_controls_before_one_with_more(
    org, tenant, live_transcriber, make_transcriber
):
    bank = actions.do_create_bank(org, name="B", controls_per_flag=2)
    actions.do_add_candidate(bank, make_transcriber("x", "hello"), confirmed=True)
    older = make_call(tenant, live_transcriber, caller_texts=["one two", "three four", "five six"])
    two = actions.do_flag_line(older.lines.get(position=0), "one too", bank=bank)
    newer = make_call(tenant, live_transcriber, caller_texts=["seven eight"])  # no other caller line to draw
    none = actions.do_flag_line(newer.lines.get(position=0), "seven ate", bank=bank)
    tasks.drain()
    assert (none.controls.count(), two.controls.count()) == (0, 2)

    rows = rows_of(exports.turns_csv(bank, 30))
    items = list(dict.fromkeys((r["flag_id"], r["item"], r["control_id"]) for r in rows))
    assert [(int(f), kind) for f, kind, _ in items] == [
        (none.pk, "flag"),
        (two.pk, "flag"),
        (two.pk, "control"),
        (two.pk, "control"),
    ]


def test_the_csvs_count_as_the_screens_do_and_say_which_days_the_window_covered(
    admin_client, run_setup, no_judge, api
):
    bank, cand, call_a, call_b = run_setup
    results = rows_of(api.get(f"/banks/{bank.pk}/results.csv", {"window": 7}))
    today = timezone.now().date()
    assert {(r["first_day"], r["last_day"]) for r in results} == {
        (str(today - timedelta(days=6)), str(today))  # the last 7 days: today and the 6 before it
    }
    assert results[0]["order"] == "1" and results[0]["clears_threshold"] in ("yes", "no")
    run = run_actions.do_start_run(bank, [call_a.pk], candidate=cand, confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE
    lines = rows_of(api.get(f"/runs/{run.pk}/lines.csv"))
    api_lines = api.get(f"/runs/{run.pk}/lines", {"limit": 200}).json()["items"]
    assert [int(r["line_id"]) for r in lines] == [i["line_id"] for i in api_lines]
    assert [int(r["line_number"]) for r in lines] == [i["line_position"] + 1 for i in api_lines]
    assert lines[0]["line_number"] == "1"  # the call page's "line 1"


def test_the_database_writes_the_turn_csv_as_python_does(org, monkeypatch):
    """On PostgreSQL the turn-table CSV's lines are written by the database (exports._turn_csv_lines_sql): they
    equal the turn table's own reader's (exports._turn_csv_lines) byte for byte, with texts a spreadsheet or a
    CSV reader trips on (commas, quotes, line breaks, formulas, tabs, accents) in every text column and a
    judge's pick, across many rounds of fetches."""
    from django.db import connection

    from oncore.transcribers.models import Transcriber
    from transcriber_tests.actions.synthetic import fill_bank
    from transcriber_tests.models import ControlLine, Flag, JudgePick

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: the database writes the CSV there (CI runs it)")
    monkeypatch.setattr(exports, "FETCH_ITEMS", 3)
    bank = fill_bank(org, flags=7, candidates=2, name="Hostile", tenants=2)
    hostile = ["=SUM(1,2)", 'say "hi", then\r\nleave', "-minus", "@at\tthe start", "Zoë, café", "+1", "\rcr"]
    flags = list(Flag.objects.filter(bank=bank).order_by("id"))
    for i, flag in enumerate(flags):
        Flag.objects.filter(pk=flag.pk).update(
            expected_text=hostile[i % len(hostile)], tags=Flag.encode_tags([hostile[(i + 1) % 7], "name"])
        )
        flag.line.__class__.objects.filter(pk=flag.line_id).update(text=hostile[(i + 2) % 7])
    ControlLine.objects.filter(flag__bank=bank).update(expected_text='a "quoted", text')
    org.tenants.update(name='Bistro, "the" =best')
    Transcriber.objects.filter(candidacies__bank=bank).update(display_name='=Nova, "3"')
    JudgePick.objects.create(
        flag=flags[0], chosen=bank.candidates.first().transcriber, chosen_text="x", reasoning='fits, "best"'
    )
    JudgePick.objects.create(flag=flags[1], error="no pick")
    bank.refresh_from_db()
    python = "".join(exports._turn_csv_lines(bank, 30))
    database = "".join(exports._turn_csv_lines_sql(bank, 30))
    assert python.count("\r\n") >= 7 * 2 * 3
    assert database == python
