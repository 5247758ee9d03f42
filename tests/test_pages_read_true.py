"""What a person reads is true, on every page an admin or a member opens: rendered with real data (a bank whose
cells are matched, matched but for capitals, wrong, failed, without words and still waiting; a candidate whose
vendor key is not set; full-call runs with and without labels) and read as text. No page may show escaped markup
(`&lt;span`), a Python `None` or `nan` as a value, or money to more places than a cent ("$0.0000"). The key cells
read as a person expects ("✓ match", "WER 0.33", "✗ error")."""

import re

import pytest
from django.urls import reverse

from oncore.transcribers.models import Transcriber
from tests.transcriber_tests.support import Say, caller_lines, read, scripted_judge
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run, Score
from transcriber_tests.work import tasks
from transcriber_tests.work import tasks as run_tasks

pytestmark = pytest.mark.django_db

# An element's markup shown as text (a page may write "Bearer <key>" on purpose: only HTML's own tags count).
TAGS = "span|div|a|p|b|i|em|strong|small|code|td|th|tr|ul|ol|li|br|ins|del|mark|svg|table|section|article"
ESCAPED_MARKUP = re.compile(rf"&lt;/|&lt;({TAGS})[\s&]|&amp;(lt|gt|amp|quot|#\d+);")
PYTHON_VALUES = re.compile(r"(?<![\w.-])(None|nan|NaN|inf)(?![\w-])")
MONEY_PAST_CENTS = re.compile(r"\$\d[\d,]*\.\d{3,}")
# A catalogue price's source, quoted as the vendor wrote it ("$0.0045 per audio minute"): not the product's figure.
QUOTED_SOURCE = re.compile(r'<q class="price-source">.*?</q>', re.S)
TRUTH = "Siobhan, table for four at 830"


def assert_reads_true(html: bytes, where: str) -> str:
    """The page's source has no escaped markup; what a person reads on it has no Python values and no money past
    the cent (but in a vendor's price quoted as its source wrote it). Returns what a person reads."""
    source = html.decode()
    found = ESCAPED_MARKUP.search(source)
    assert not found, f"{where}: escaped markup {source[max(0, found.start() - 80) : found.end() + 80]!r}"
    text = read(source)
    unquoted = read(QUOTED_SOURCE.sub("", source))
    for pattern, what, read_text in (
        (PYTHON_VALUES, "a Python value", text),
        (MONEY_PAST_CENTS, "money past the cent", unquoted),
    ):
        found = pattern.search(read_text)
        assert not found, f"{where}: {what} {read_text[max(0, found.start() - 80) : found.end() + 80]!r}"
    return text


@pytest.fixture
def pages(org, tenant, world, make_transcriber, stt_server, llm_server, monkeypatch):
    """A bank with every kind of cell, a second bank whose flags carry a different number of controls, and two
    full-call runs: one with nothing labelled (no judge), one labelled by the (local, scripted) judge."""
    run_candidate = world.candidate("cand")
    call_a = world.call(
        [
            Say("Shivon table for for at 830", candidate=TRUTH),
            Say("yes that's right"),
            Say("my number is 0 8 7 1 2", candidate="my number is 0 8 7"),
            Say("thank you by", candidate="thank you bye"),
        ]
    )
    call_b = world.call([Say("under Fitz Gerald", candidate="under fitz gerald"), Say("four people")])
    bank = actions.do_create_bank(org, name="English", language_label="English", controls_per_flag=1)
    stt_server.statuses["broken"] = 400
    for name, text in [
        ("exact", TRUTH),
        ("lower", TRUTH.lower().replace(",", "")),
        ("wrong", "Shivon table for four at 830"),
        ("broken", ""),
        ("blank", "..."),
    ]:
        actions.do_add_candidate(bank, make_transcriber(name, text), confirmed=True)
    monkeypatch.delenv("DEEPGRAM_API_KEY", raising=False)
    deepgram = Transcriber.objects.filter(provider="deepgram", enabled=True).first()
    actions.do_add_candidate(bank, deepgram, confirmed=True)
    flag = actions.do_flag_line(caller_lines(call_a)[0], TRUTH, bank=bank, tags=["name"], note="Guest's name")
    actions.do_flag_line(caller_lines(call_b)[0], "under Fitzgerald", bank=bank, tags=["name", "spelling"])
    other = actions.do_create_bank(org, name="Mixed", controls_per_flag=2)
    actions.do_add_candidate(other, make_transcriber("other", "four people"), confirmed=True)
    actions.do_flag_line(caller_lines(call_a)[2], "my number is 0 8 7 1 2 3", bank=other)
    actions.do_update_bank(other, controls_per_flag=0)
    actions.do_flag_line(caller_lines(call_b)[1], "for people", bank=other)
    vendor = actions.do_create_bank(org, name="Vendor", controls_per_flag=0)  # its runner-up fails every line
    actions.do_add_candidate(vendor, make_transcriber("solo", "thank you bye"), confirmed=True)
    actions.do_add_candidate(vendor, deepgram, confirmed=True)
    actions.do_flag_line(caller_lines(call_a)[3], "thank you bye", bank=vendor)
    tasks.drain()

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    unlabelled = run_actions.do_start_run(bank, [call_a.pk], candidate=run_candidate, confirmed=True)
    assert run_tasks.drain_run(unlabelled.pk, max_seconds=60) == Run.DONE
    monkeypatch.setenv("ANTHROPIC_API_KEY", llm_server.key)
    llm_server.responder = scripted_judge
    labelled = run_actions.do_start_run(bank, [call_a.pk, call_b.pk], candidate=run_candidate, confirmed=True)
    assert run_tasks.drain_run(labelled.pk, max_seconds=60) == Run.DONE
    actions.do_add_candidate(bank, make_transcriber("late", TRUTH), confirmed=True)  # its cells wait
    return {
        "bank": bank,
        "other": other,
        "vendor": vendor,
        "flag": flag,
        "calls": [call_a, call_b],
        "runs": [unlabelled, labelled],
        "deepgram": deepgram,
    }


def admin_pages(p) -> list[str]:
    bank, other, flag = p["bank"], p["other"], p["flag"]
    urls = [reverse("tt:calls"), reverse("tt:banks"), reverse("tt:unbanked_flags"), reverse("tt:bank_new")]
    for call in p["calls"]:
        urls += [reverse("tt:call", args=[call.pk]), reverse("runs:from_call", args=[call.pk])]
    urls += [reverse("tt:flag_line", args=[caller_lines(p["calls"][1])[1].pk])]
    urls += [reverse("tt:edit_flag", args=[flag.pk]), reverse("tt:flag_results", args=[flag.pk])]
    for b in (bank, other, p["vendor"]):
        for name in (
            "tt:bank",
            "tt:bank_edit",
            "tt:bank_candidates",
            "tt:turn_table",
            "runs:bank_runs",
            "tt:bank_trust",
        ):
            urls.append(reverse(name, args=[b.pk]))
        urls += [reverse("tt:bank", args=[b.pk]) + "?window=90", reverse("runs:new", args=[b.pk])]
    urls += [reverse("tt:turn_table", args=[bank.pk]) + f"?kind={kind}" for kind in ("flags", "controls")]
    wrong = bank.candidates.get(transcriber__model="wrong").transcriber_id
    urls += [reverse("tt:turn_table", args=[bank.pk]) + f"?transcriber={wrong}&pair=s:siobhan>shivon"]
    for run in p["runs"]:
        urls += [reverse("runs:detail", args=[run.pk]), reverse("runs:review", args=[run.pk])]
        urls += [reverse("runs:detail", args=[run.pk]) + f"?show={show}" for show in ("differs", "review")]
    urls += [reverse("api_keys"), reverse("webhooks"), reverse("bench:runs"), reverse("cs:datasets")]
    return urls


def test_every_page_reads_true_for_an_admin_and_a_member(pages, client, admin_user, member_user):
    client.force_login(admin_user)
    for url in admin_pages(pages):
        response = client.get(url)
        assert response.status_code in (200, 286), (url, response.status_code)
        assert_reads_true(response.content, url)
    # A candidate's estimate before adding it, and a run's estimate before starting it.
    bank = pages["bank"]
    missing_key = Transcriber.objects.filter(provider="openai", enabled=True).first()
    response = client.post(reverse("tt:bank_candidates", args=[bank.pk]), {"transcriber": missing_key.pk})
    assert_reads_true(response.content, "candidate estimate")
    response = client.post(
        reverse("runs:new", args=[bank.pk]),
        {"calls": [pages["calls"][0].pk], "candidate": pages["deepgram"].pk},
    )
    assert_reads_true(response.content, "run estimate")

    client.force_login(member_user)
    assert_reads_true(client.get(reverse("tt:home")).content, "member home")
    refused = client.get(reverse("tt:bank", args=[bank.pk]))
    assert refused.status_code == 403
    assert_reads_true(refused.content, "member refused")


# How long the candidate took on the line, under its score (it varies from run to run: read apart).
TOOK = re.compile(r" took \d[\d.,]* (ms|s)$")


def cells(html, candidate: str) -> list[str]:
    """What a person reads in each turn-table cell of one candidate's column (by its label), without the time it
    took, which every cell with a text from its transcriber ends with (asserted)."""
    found = []
    for cell in re.findall(rf'<td data-label="{candidate}">(.*?)</td>', html.decode(), re.S):
        text = read(cell)
        if "cell-latency" in cell:
            assert TOOK.search(text), text
        found.append(TOOK.sub("", text))
    return found


def test_the_turn_table_cells_read_as_a_person_expects(pages, admin_client):
    bank = pages["bank"]
    html = admin_client.get(reverse("tt:turn_table", args=[bank.pk]) + "?kind=flags").content
    text = assert_reads_true(html, "turn table")
    siobhan = 1  # newest flag first: the call_a flag is the older of the two
    # Under each scored text, the expected text's entities, each kept or lost, said in words.
    entities = "✓ kept: four number ✓ kept: 830 number"
    assert cells(html, "Test exact")[siobhan] == f"{TRUTH} ✓ match {entities}"
    assert cells(html, "Test lower")[siobhan] == (
        f"siobhan table for four at 830 ✓ match differs only in capitals or punctuation {entities}"
    )
    # The word it got wrong is marked against the expected text: struck and underlined, and said in words.
    assert cells(html, "Test wrong")[siobhan] == (
        f"said Siobhan,→, heard Shivon table for four at 830 1 substitution WER 0.17 {entities}"
    )
    assert cells(html, "Test broken")[siobhan] == "✗ error"
    assert cells(html, "Test blank")[siobhan] == "✗ no text ..."
    assert cells(html, "Test late")[siobhan] == "waiting…"
    assert cells(html, pages["deepgram"].display_name)[siobhan] == "✗ error"
    assert "✓ match" in text and "&lt;" not in html.decode()


def test_the_results_cards_say_why_lines_failed_and_that_the_leader_is_provisional(pages, admin_client):
    bank, deepgram = pages["bank"], pages["deepgram"]
    html = admin_client.get(reverse("tt:bank", args=[bank.pk])).content
    items = Score.objects.filter(flag__bank=bank, source=Score.LIVE).count()  # flags and their controls
    card = read(html, deepgram.display_name)
    assert "every line failed" in card
    assert f"{items} failed: DEEPGRAM_API_KEY is not set on this server" in card
    assert f"{items} failed: its text had no words" in read(html, "Test blank")
    exact = read(html, "Test exact")
    assert "★ Leader, provisional" in exact and "Audio cost so far under $0.01" in exact
    assert f"Too few lines to trust yet: {items} scored lines" in read(html)


def test_the_leaderboard_names_a_candidate_whose_every_line_failed(pages, admin_client):
    board = read(admin_client.get(reverse("tt:banks")).content)
    name = pages["deepgram"].display_name
    assert f"no runner-up to test against: {name} failed all 1 line (why)" in board
    assert "provisional: too few lines" in board
    assert "English English" not in board


def test_the_candidate_estimate_names_a_missing_vendor_key(pages, admin_client, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    bank = pages["bank"]
    openai = Transcriber.objects.filter(provider="openai", enabled=True).first()
    page = read(
        admin_client.post(reverse("tt:bank_candidates", args=[bank.pk]), {"transcriber": openai.pk}).content
    )
    assert f"Its lines will fail on this server: {openai.api_key_env} is not set on this server" in page


def test_it_serves_a_favicon_and_links_it_from_every_page(client, admin_client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon["Content-Type"] == "image/svg+xml" and b"<svg" in icon.content
    assert 'rel="icon"' in admin_client.get(reverse("tt:calls")).content.decode()


def test_a_bank_is_titled_without_a_label_that_repeats_its_name(org, admin_client):
    english = actions.do_create_bank(org, name="English", language_label="English")
    mixed = actions.do_create_bank(org, name="Front desk", language_label="English + Spanish")
    page = admin_client.get(reverse("tt:bank", args=[english.pk])).content.decode()
    assert "<h1><bdi>English</bdi> </h1>" in page
    page = admin_client.get(reverse("tt:bank", args=[mixed.pk])).content.decode()
    assert "<h1><bdi>Front desk</bdi> <small><bdi>English + Spanish</bdi></small></h1>" in page
    board = read(admin_client.get(reverse("tt:banks")).content)
    assert "English English" not in board and "Front desk English + Spanish" in board


def test_adding_a_candidate_says_what_it_set_going(org, admin_client, make_transcriber, recorded_call):
    bank = actions.do_create_bank(org, name="Empty")
    url = reverse("tt:bank_candidates", args=[bank.pk])
    first = make_transcriber("first", "hello")
    estimate = read(admin_client.post(url, {"transcriber": first.pk}).content)
    assert "this bank has no flagged lines yet, so nothing is transcribed now" in estimate
    added = admin_client.post(url, {"transcriber": first.pk, "confirmed": "on"}, follow=True)
    assert "The bank has no flagged lines yet: it transcribes each line flagged into it." in read(
        added.content
    )
    assert "is transcribing" not in read(added.content)
    actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan", bank=bank)
    second = make_transcriber("second", "hello")
    added = admin_client.post(url, {"transcriber": second.pk, "confirmed": "on"}, follow=True)
    assert "Test second added; it is transcribing the bank's 2 lines." in read(added.content)  # and a control
    assert "$6.00 per 1,000 min" in read(added.content)  # its price as vendors are compared


def test_the_flag_form_says_which_bank_it_preselected_and_why(
    org, admin_user, admin_client, recorded_call, make_transcriber
):
    lines = list(recorded_call.lines.filter(speaker="caller").order_by("position"))
    only = actions.do_create_bank(org, name="Only")
    form = read(admin_client.get(reverse("tt:flag_line", args=[lines[1].pk])).content)
    assert "Preselected: Only, this organization's only bank." in form
    actions.do_create_bank(org, name="Second")
    form = read(admin_client.get(reverse("tt:flag_line", args=[lines[1].pk])).content)
    assert "Preselected" not in form  # two banks and no flag of this admin's yet: nothing chosen for them
    actions.do_flag_line(lines[0], "Siobhan", bank=only, user=admin_user)
    form = admin_client.get(reverse("tt:flag_line", args=[lines[1].pk])).content.decode()
    why = f"Preselected: Only, where your last flag is (call {recorded_call.pk}, line 1)."
    assert why in read(form) and 'aria-describedby="bank-' in form
