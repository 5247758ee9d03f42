"""What a person reads of issue 28's figures on the pages, and what the API and the CSV files give: word-level
marks in the turn table (read without colour), the expected texts to check with their edit link and who typed
them, the call-level intervals and the flags planner, the confusion pairs opening their lines, who made and
edited a flag, and a full-call run's fixes and breaks with their intervals."""

import csv
import io
import re

import pytest
from django.urls import reverse

from tests.transcriber_tests.queries.test_trust import MISTYPED, checked  # noqa: F401  (the fixture)
from tests.transcriber_tests.support import read
from transcriber_tests.lib import alignment
from transcriber_tests.models import Score
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


def rows_of(response) -> list[dict]:
    body = b"".join(response.streaming_content).decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(body)))


def test_the_turn_table_marks_each_word_against_the_expected_text(checked, admin_client):  # noqa: F811
    bank, _, flags = checked
    html = admin_client.get(reverse("tt:turn_table", args=[bank.pk]) + "?kind=flags").content.decode()
    assert "&lt;del" not in html and "&lt;ins" not in html
    cells = [read(c) for c in re.findall(r'<td data-label="Trust 2">(.*?)</td>', html, re.S)]
    # Newest flag first: the scattered line, then the right one, then the mistyped one.
    # Under the marks, the expected text's entities, kept or lost (issue 37, item 2).
    assert cells[0] == "see you on said tuesday→, heard thursday 1 substitution WER 0.25 ✗ lost: tuesday date"
    trust_0 = [read(c) for c in re.findall(r'<td data-label="Trust 0">(.*?)</td>', html, re.S)]
    assert trust_0[0] == "see you missed on tuesday 1 deletion WER 0.25 ✓ kept: tuesday date"
    assert "struck through, a word that was said but missed or misheard" in read(html)
    # Each mark is <del> or <ins>, struck or underlined without any colour, and says in words what it is.
    assert '<del class="missed"><span class="visually-hidden">missed </span>on</del>' in html


def test_the_turn_table_opens_the_lines_of_one_confusion_pair(checked, admin_client):  # noqa: F811
    bank, _, flags = checked
    t2 = bank.candidates.get(transcriber__model="t2").transcriber_id
    url = reverse("tt:turn_table", args=[bank.pk]) + f"?transcriber={t2}&pair=s:tuesday>thursday"
    html = admin_client.get(url).content.decode()
    assert re.findall(r'data-item="(?:flag|control) (\d+) ', html) == [str(flags["scattered"].pk)]
    assert "Only the lines where Trust 2 heard “thursday” for “tuesday” (1 line)" in read(html)
    # An unknown pair or candidate is no filter at all.
    every = admin_client.get(reverse("tt:turn_table", args=[bank.pk]) + "?transcriber=999999&pair=s:a>b")
    assert len(re.findall(r"data-item=", every.content.decode())) > 1


def test_the_turn_table_filters_by_who_flagged(checked, admin_client, admin_user):  # noqa: F811
    bank, _, flags = checked
    flags["right"].__class__.objects.filter(pk=flags["right"].pk).update(created_by=admin_user)
    url = reverse("tt:turn_table", args=[bank.pk]) + f"?flagged_by=user:{admin_user.pk}"
    html = admin_client.get(url).content.decode()
    assert set(re.findall(r'data-item="(?:flag|control) (\d+) ', html)) == {str(flags["right"].pk)}
    assert f'<option value="user:{admin_user.pk}" selected>{admin_user.username}</option>' in html


def test_the_results_page_lists_the_expected_texts_to_check(checked, admin_client):  # noqa: F811
    bank, _, flags = checked
    html = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    section = read(html, None)
    assert "Check these expected texts 1 line" in section
    assert f"“{MISTYPED}”" in section and "— Trust 0, Trust 1" in section
    assert reverse("tt:edit_flag", args=[flags["mistyped"].pk]) in html
    assert "Typed by" in section and "not recorded" in section  # made by the actions here, nobody signed in
    # The trust figures load after the page.
    assert f'hx-get="{reverse("tt:bank_trust", args=[bank.pk])}?window=30"' in html


def test_the_trust_fragment_reads_the_call_intervals_the_plan_and_the_pairs(checked, admin_client):  # noqa: F811
    bank, _, _ = checked
    url = reverse("tt:bank_trust", args=[bank.pk])
    computing = admin_client.get(url, headers={"HX-Request": "true"})
    assert (
        "Resampling calls and counting confusion pairs" in computing.content.decode()
    )  # the queue computes them
    tasks.drain()
    fragment = admin_client.get(url, headers={"HX-Request": "true"})
    assert fragment.status_code == 286  # they have landed: the section stops polling
    html = fragment.content.decode()
    assert "<html" not in html
    text = read(html)
    assert "How far to trust the lead calls resampled whole" in text
    assert "95% interval, calls resampled (bootstrap)" in text
    assert "How many more flags" in text
    assert re.search(r"About [\d,]+ more flags?|too close to separate|already clear|No runner-up", text)
    assert "10,000 times with a fixed seed" in text
    t2 = bank.candidates.get(transcriber__model="t2").transcriber_id
    link = f"?window=30&amp;transcriber={t2}&amp;pair=s%3Atuesday%3Ethursday"
    assert link in html and "tuesday → thursday" in text
    # The same on a page of its own, without JavaScript; and the same figures on a reload.
    page = admin_client.get(url)
    assert "<html" in page.content.decode() and "How far to trust the lead" in read(page.content)
    assert read(admin_client.get(url, headers={"HX-Request": "true"}).content) == text


def test_the_call_page_says_who_flagged_and_who_edited(checked, admin_client, admin_user):  # noqa: F811
    from transcriber_tests import actions

    _, _, flags = checked
    flag = flags["right"]
    actions.do_edit_flag(flag, note="spelled out", user=admin_user)
    html = admin_client.get(reverse("tt:call", args=[flag.line.call_id])).content
    text = read(html)
    assert "Flagged by someone not recorded" in text
    assert "1 edit of this flag" in text and f"{admin_user.username}: note “(none)” → “spelled out”" in text


def test_the_api_gives_the_pairs_the_checks_the_uncertainty_and_the_turn_edits(checked, api):  # noqa: F811
    bank, _, flags = checked
    pairs = api.get(f"/banks/{bank.pk}/confusions").json()
    assert [c["transcriber"]["display_name"] for c in pairs["candidates"]] == [
        "Trust 0",
        "Trust 1",
        "Trust 2",
    ]
    t2 = pairs["candidates"][2]
    assert {
        "kind": "substitution",
        "expected_word": "tuesday",
        "heard_word": "thursday",
        "count": 1,
        "pair": "s:tuesday>thursday",
    } in t2["pairs"]
    only = api.get(f"/banks/{bank.pk}/confusions", {"kind": "deletion"}).json()
    assert all(
        p["kind"] == "deletion" and p["heard_word"] is None for c in only["candidates"] for p in c["pairs"]
    )
    lines = api.get(
        f"/banks/{bank.pk}/turns", {"transcriber_id": t2["transcriber"]["id"], "pair": "s:tuesday>thursday"}
    ).json()
    assert [i["flag_id"] for i in lines["items"]] == [flags["scattered"].pk]
    cell = lines["items"][0]["cells"][2]
    assert (cell["substitutions"], cell["deletions"], cell["insertions"]) == (1, 0, 0)
    assert {"op": "substitution", "expected": "tuesday", "heard": "thursday"} in cell["alignment"]
    assert api.get(f"/banks/{bank.pk}/turns", {"pair": "s:a>b"}).status_code == 422

    checks = api.get(f"/banks/{bank.pk}/expected-checks").json()
    assert checks["count"] == 1 and checks["items"][0]["flag_id"] == flags["mistyped"].pk
    assert checks["items"][0]["agreements"][0]["agreeing"] == ["Trust 0", "Trust 1"]

    assert api.get(f"/banks/{bank.pk}/uncertainty").status_code == 503  # computed by the queue the first time
    tasks.drain()
    trust = api.get(f"/banks/{bank.pk}/uncertainty").json()
    assert trust["resamples"] == 10_000 and len(trust["candidates"]) == 3
    assert all(c["calls"]["calls"] == 1 for c in trust["candidates"])  # one call holds every flag
    assert trust["more_flags"]["method"] == "exact"

    turns = rows_of(api.get(f"/banks/{bank.pk}/turns.csv"))
    for row in turns:
        if row["source"] == "candidate" and row["failed"] == "no":
            score = Score.objects.get(
                flag_id=row["flag_id"],
                control_id=row["control_id"] or None,
                transcriber__display_name=row["transcriber"],
            )
            assert (row["substitutions"], row["deletions"], row["insertions"]) == (
                str(score.substitutions),
                str(score.deletions),
                str(score.insertions),
            )

    pairs_csv = rows_of(api.get(f"/banks/{bank.pk}/confusions.csv"))
    direct = {(r["transcriber"], r["pair"]): int(r["count"]) for r in pairs_csv}
    assert direct[("Trust 2", "s:tuesday>thursday")] == 1
    assert alignment.parse_pair(pairs_csv[0]["pair"]) is not None


def test_the_api_says_who_made_and_edited_a_flag(checked, api, org):  # noqa: F811
    _, _, flags = checked
    flag = flags["right"]
    made = api.post(
        "/flags",
        {"line_id": flag.line.call.lines.get(position=6).pk, "expected_text": "thank you goodbye"},
    ).json()
    assert made["flagged_by"].startswith("API key tests (") and made["history"] == []
    edited = api.patch(f"/flags/{made['id']}", {"note": "checked"}).json()
    assert [(e["field"], e["old"], e["new"]) for e in edited["history"]] == [("note", "", "checked")]
    assert edited["history"][0]["by"] == made["flagged_by"] == edited["typed_by"]


def test_members_get_nothing(checked, member_client):  # noqa: F811
    bank, _, _ = checked
    for name in ("tt:bank_trust", "tt:export_confusions"):
        assert member_client.get(reverse(name, args=[bank.pk])).status_code == 403


def test_other_organizations_get_nothing(checked, other_client, other_api):  # noqa: F811
    bank, _, _ = checked
    for name in ("tt:bank_trust", "tt:export_confusions"):
        assert other_client.get(reverse(name, args=[bank.pk])).status_code == 404
    for path in ("confusions", "expected-checks", "uncertainty", "confusions.csv"):
        assert other_api.get(f"/banks/{bank.pk}/{path}").status_code == 404


def test_a_run_page_gives_fixes_and_breaks_with_intervals_and_the_net(done_run, admin_client, api):
    html = admin_client.get(reverse("runs:detail", args=[done_run.pk])).content
    fixes, net = read(html, "Fixes"), read(html, "Net")
    assert re.search(r"\d+\.\d% of \d+ lines? whose outcome is known · 95% interval", fixes)
    assert "fixes − breaks" in net and "sign test" in net and re.search(r"Lines that differ: \d+ of \d+", net)
    body = api.get(f"/runs/{done_run.pk}").json()["fixes_and_breaks"]
    counts = api.get(f"/runs/{done_run.pk}").json()["counts"]
    assert body["net"] == counts["fixes"] - counts["breaks"]
    assert body["lines"] == counts["identical"] + counts["differing"] - counts["unlabelled"]
    assert 0 <= body["sign_test_p"] <= 1 and body["with_text"] == counts["identical"] + counts["differing"]
    lines = api.get(f"/runs/{done_run.pk}/lines", {"limit": 200}).json()["items"]
    flagged = [line for line in lines if line["flag_id"] and not line["candidate_failed"]]
    assert flagged and all(line["aligned_against"] == "expected" for line in flagged)
    rows = rows_of(api.get(f"/runs/{done_run.pk}/lines.csv"))
    assert "candidate_substitutions" in rows[0]
