"""Entity accuracy on the organization's own callers (issue 37, item 2): each candidate's entities right, in all and
per category, equal a direct count from the benchmark's matcher over the bank's lines (each flagged line's and
control line's expected text, the candidate's text on it), and read the same on the card (beside the public
benchmark's figure), in the results CSV and in the API; the turn table marks each expected entity kept or lost."""

import csv
import io
import random
from collections import Counter
from types import SimpleNamespace

import pytest
from django.db import transaction
from django.urls import reverse

from benchmark.entity.matcher import CATEGORIES, entities, entity_found
from oncore.transcribers.models import Transcriber
from tests.benchmark.entity.test_views import BETA, make_dataset, make_run, scored
from tests.fixtures import make_call
from tests.transcriber_tests.support import read
from transcriber_tests import actions
from transcriber_tests.actions import scores
from transcriber_tests.lib import entities as lib_entities
from transcriber_tests.models import ControlLine, Flag, Score, Transcription
from transcriber_tests.queries import snapshots
from transcriber_tests.queries.entities import bank_entities

pytestmark = pytest.mark.django_db

# (what the live transcript says, what the caller said): the flags' expected texts are typed with their entities.
CALLS = [
    [
        ("book a table for for on tuesday", "Book a table for four on Tuesday at ten forty five."),
        ("my name is maria lopes", "My name is Maria Lopez, from Bank of America."),
        ("I live at 14 Main Street, apartment 3B.", "I live at 14 Main Street, apartment 3B."),
    ],
    [
        ("the order is a b one two three", "The order is AB123, placed on March 4th, 2026."),
        ("call me at 555-0142 please", "Call me at 555-0142 please, ask for Dr. Smith."),
        ("Twenty people at half past eight on Friday.", "Twenty people at half past eight on Friday."),
    ],
    [
        ("account four seven one nine two", "It's account four seven one nine two, for $20."),
        ("see you at St. Mary's at 10:45 am", "See you at St. Mary's Hospital at 10:45 am."),
        ("Ask for Fitzgerald at 7:30 on Sunday.", "Ask for Fitzgerald at 7:30 on Sunday."),
    ],
]
# What the "Sloppy" candidate mishears: these words, wherever they are in a line.
MISHEARS = {
    "four": "for",
    "Lopez": "Lopes",
    "AB123": "a b one two three",
    "555-0142": "555 0142",
    "Fitzgerald": "fits gerald",
    "Smith": "Smyth",
    "forty": "fourteen",
}


def sloppy(text: str) -> str:
    return " ".join(MISHEARS.get(word.strip(".,"), word) for word in text.split())


@pytest.fixture
def callers(org, tenant, live_transcriber):
    return build_callers(org, tenant, live_transcriber)


def build_callers(org, tenant, live_transcriber):
    """Three calls of three caller lines, the first two of each flagged with what was said (its entities typed),
    each flag with one control line (the call's other lines, whose expected text is their live text): "Careful"
    writes what was said, "Sloppy" mishears MISHEARS, and fails (a text with no words) on one line. In one
    transaction (scoring locks the flags: on PostgreSQL a test outside one cannot)."""
    with transaction.atomic():
        return _build_callers(org, tenant, live_transcriber)


def _build_callers(org, tenant, live_transcriber):
    careful, sloppy_one = (
        Transcriber.objects.create(slug=slug, provider=Transcriber.GENERIC, model=slug, display_name=name)
        for slug, name in (("careful", "Careful"), ("sloppy", "Sloppy"))
    )
    bank = actions.do_create_bank(org, name="Own callers", controls_per_flag=1)
    for t in (careful, sloppy_one):
        actions.do_add_candidate(bank, t, confirmed=True)
    said = {}
    rng = random.Random(37)
    for script in CALLS:
        call = make_call(
            tenant, live_transcriber, caller_texts=[live for live, _ in script], seconds_per_line=4.0
        )
        lines = list(call.lines.filter(speaker="caller").order_by("position"))
        for line, (_live, expected) in zip(lines, script, strict=True):
            said[line.pk] = expected
        for line, (_live, expected) in list(zip(lines, script, strict=True))[:2]:
            actions.do_flag_line(line, expected, bank=bank, rng=rng, confirm_matches_live=True)
    failed_once = False
    for t in Transcription.objects.filter(status__in=Transcription.ACTIVE).order_by(
        "line_id", "transcriber_id"
    ):
        # What the candidates hear is what was said on the line (a control line's live text is what was said there).
        text = said[t.line_id]
        if t.transcriber_id == sloppy_one.pk:
            text = sloppy(text)
            if not failed_once:
                text, failed_once = "...", True
        Transcription.objects.filter(pk=t.pk).update(
            status=Transcription.DONE, text=text, cost="0", latency_s=0.3, audio_seconds=1.0
        )
        t.refresh_from_db()
        scores.score_transcription(t)
    bank.refresh_from_db()
    return SimpleNamespace(bank=bank, careful=careful, sloppy=sloppy_one)


def direct_count(bank, transcriber):
    """Straight from the matcher: for every item of the bank (flag or control line) the candidate did not fail,
    the entities of its expected text and whether the candidate's text on its line has each, per category."""
    items = [(f.line_id, f.expected_text) for f in Flag.objects.filter(bank=bank)]
    items += [(c.line_id, c.expected_text) for c in ControlLine.objects.filter(flag__bank=bank)]
    n, right = Counter(), Counter()
    for line_id, expected in items:
        text = Transcription.objects.get(line_id=line_id, transcriber=transcriber).text
        if not any(ch.isalnum() for ch in text):
            continue  # a failed line: left out, as from accuracy
        for entity in entities(expected):
            n[entity.category] += 1
            right[entity.category] += entity_found(entity.text, text)
    return n, right


def test_entities_right_per_candidate_and_category_equal_a_direct_count(callers):
    bank = callers.bank
    assert ControlLine.objects.filter(flag__bank=bank).count() == 3  # each call's third line
    found = bank_entities(bank, [callers.careful.pk, callers.sloppy.pk], 30)
    for transcriber in (callers.careful, callers.sloppy):
        n, right = direct_count(bank, transcriber)
        own = found[transcriber.pk]
        assert own.n == sum(n.values()) and own.right == sum(right.values())
        for category in CATEGORIES:
            assert (own.of(category).n, own.of(category).right) == (n[category], right[category]), category
    careful, sloppy_own = found[callers.careful.pk], found[callers.sloppy.pk]
    assert careful.right == careful.n > 20  # it wrote what was said
    assert {c.category for c in careful.categories} == set(
        CATEGORIES
    )  # every category is said on these lines
    assert sloppy_own.right < sloppy_own.n < careful.n  # it lost some, and its failed line is left out
    # The snapshot the page, the CSV and the API read holds the same figures.
    screen = snapshots.results_of(bank, 30).data.screen
    assert screen.own_entities == found


def test_the_card_the_csv_and_the_api_give_entities_right(callers, admin_client, api):
    bank = callers.bank
    scored(make_run(make_dataset(), "sloppy", BETA, transcriber=callers.sloppy))  # its public benchmark run
    own = bank_entities(bank, [callers.careful.pk, callers.sloppy.pk], 30)[callers.sloppy.pk]
    page = admin_client.get(reverse("tt:bank", args=[bank.pk])).content
    card = read(page, "Sloppy")
    assert (
        f"Entities right on your callers: {100 * own.accuracy:.1f}% ({own.right} of {own.n} entities on "
        f"{own.lines} lines)"
    ) in card
    for c in own.categories:
        assert f"{lib_entities.LABELS[c.category]} {100 * c.accuracy:.1f}% {c.right} of {c.n}" in card
    # Beside it, the public benchmark's tier-A figure, so the two read together.
    assert "on your callers" in card.split("Entity benchmark: 66.7% (MLCommons subset, tier A, n=3)")[0]

    response = admin_client.get(reverse("tt:export_results", args=[bank.pk]))
    body = b"".join(response.streaming_content).decode("utf-8-sig")
    rows = {r["transcriber"]: r for r in csv.DictReader(io.StringIO(body)) if r["row"] == "candidate"}
    row = rows["Sloppy"]
    assert (row["entities_n"], row["entities_right"]) == (str(own.n), str(own.right))
    assert float(row["entity_accuracy"]) == round(own.accuracy, 4)
    for category in CATEGORIES:
        label = lib_entities.LABELS[category]
        assert (row[f"{label}_n"], row[f"{label}_right"]) == (
            str(own.of(category).n),
            str(own.of(category).right),
        )

    cards = {c["transcriber"]["id"]: c for c in api.get(f"/banks/{bank.pk}/results").json()["candidates"]}
    given = cards[callers.sloppy.pk]["entities"]
    assert (given["n"], given["right"], given["lines"]) == (own.n, own.right, own.lines)
    assert given["accuracy"] == pytest.approx(own.accuracy)
    assert [(c["category"], c["n"], c["right"]) for c in given["categories"]] == [
        (c.category, c.n, c.right) for c in own.categories
    ]
    assert cards[callers.careful.pk]["entities"]["right"] == cards[callers.careful.pk]["entities"]["n"]


def test_the_turn_table_marks_each_expected_entity_kept_or_lost(callers, admin_client, api):
    bank = callers.bank
    page = admin_client.get(reverse("tt:turn_table", args=[bank.pk])).content.decode()
    said = read(page)
    assert "Entities said (names, times, dates, numbers, ids) under each text: ✓ kept" in said
    # Sloppy lost the name it misheard, Careful kept it; each mark says so in words, not only in colour.
    assert "✗ lost: Maria Lopez name" in said and "✓ kept: Maria Lopez name" in said
    assert "✗ lost: Fitzgerald name" in said and "✓ kept: AB123 id" in said  # "a b one two three" spells it

    items = api.get(f"/banks/{bank.pk}/turns").json()["items"]
    row = next(i for i in items if i["expected_text"].startswith("My name is Maria Lopez"))
    cells = {c["transcriber_id"]: c for c in row["cells"]}
    marks = [(m["text"], m["kept"]) for m in cells[callers.sloppy.pk]["entities"]]
    assert marks == [("Maria Lopez", False), ("Bank of America", True)]
    assert [(m["text"], m["kept"]) for m in cells[callers.careful.pk]["entities"]] == [
        ("Maria Lopez", True),
        ("Bank of America", True),
    ]


def test_a_score_keeps_its_entities_and_a_failed_one_none(callers):
    failed = Score.objects.filter(transcriber=callers.sloppy, failed=True)
    assert failed.count() == 1 and failed.get().entities == ""
    kept = Score.objects.filter(source=Score.CANDIDATE, failed=False).exclude(entities="")
    assert kept.exists()
    score = kept.select_related("flag", "control").first()
    expected = score.control.expected_text if score.control else score.flag.expected_text
    assert [(m.text, m.category) for m in lib_entities.decode(score.entities)] == [
        (e.text, e.category) for e in entities(expected)
    ]


def test_the_backfill_gives_scores_kept_before_their_entities(callers):
    stored = dict(Score.objects.values_list("pk", "entities"))
    Score.objects.update(entities="")
    assert scores.backfill_entities() == sum(1 for v in stored.values() if v)
    assert dict(Score.objects.values_list("pk", "entities")) == stored


def test_the_product_lists_the_matchers_categories():
    assert lib_entities.CATEGORIES == CATEGORIES


def test_the_leaderboard_gives_the_leaders_entities_right_once_its_bank_figures_are_computed(
    callers, admin_client, api
):
    bank = callers.bank
    board = admin_client.get(reverse("tt:banks")).content.decode()
    assert "entities right" not in read(board)  # the bank's results for the window were never computed yet
    snapshots.results_of(bank, 30)  # its results page, read once, computes them
    own = bank_entities(bank, [callers.careful.pk], 30)[callers.careful.pk]
    row = read(admin_client.get(reverse("tt:banks")).content)
    assert "★ Careful" in row and f"entities right {100 * own.accuracy:.1f}% n={own.n}" in row
    item = api.get("/leaderboard").json()["items"][0]
    assert item["leader"]["id"] == callers.careful.pk
    assert (item["leader_entities"]["n"], item["leader_entities"]["right"]) == (own.n, own.right)
