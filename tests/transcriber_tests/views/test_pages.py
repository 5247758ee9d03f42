"""Every dashboard page: the happy path, the wrong method, a member's 403, another organization's 404."""

import csv
import io
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils.html import escape

from transcriber_tests import actions
from transcriber_tests.models import Bank, Flag, Score
from transcriber_tests.shapes import exports
from transcriber_tests.work import tasks

pytestmark = pytest.mark.django_db


@pytest.fixture
def bank(org, make_transcriber):
    """The shared bank, but its second candidate writes a formula (CSV exports must neutralize it)."""
    bank = actions.do_create_bank(org, name="English", language_label="English")
    actions.do_add_candidate(
        bank, make_transcriber("good", "Siobhan, table for four at eight thirty"), confirmed=True
    )
    actions.do_add_candidate(bank, make_transcriber("bad", "=Shivon table for four at 830"), confirmed=True)
    return bank


def page_urls(flag, bank, call):
    line = flag.line
    return [
        reverse("tt:calls"),
        reverse("tt:call", args=[call.pk]),
        reverse("tt:line_audio", args=[line.pk]),
        reverse("tt:unbanked_flags"),
        reverse("tt:banks"),
        reverse("tt:bank_new"),
        reverse("tt:bank", args=[bank.pk]),
        reverse("tt:bank_edit", args=[bank.pk]),
        reverse("tt:bank_candidates", args=[bank.pk]),
        reverse("tt:turn_table", args=[bank.pk]),
        reverse("tt:export_results", args=[bank.pk]),
        reverse("tt:export_turns", args=[bank.pk]),
        reverse("tt:edit_flag", args=[flag.pk]),
        reverse("tt:flag_line", args=[call.lines.get(position=2).pk]),
    ]


def test_it_serves_every_page_to_an_admin(admin_client, flag, bank, recorded_call):
    for url in page_urls(flag, bank, recorded_call):
        response = admin_client.get(url)
        assert response.status_code == 200, url


def test_it_refuses_members_with_a_page_that_says_why(member_client, flag, bank, recorded_call):
    for url in page_urls(flag, bank, recorded_call):
        response = member_client.get(url)
        assert response.status_code == 403, url
    assert b"for organization admins" in member_client.get(reverse("tt:banks")).content


def test_it_hides_another_organizations_objects(other_client, flag, bank, recorded_call):
    for url in page_urls(flag, bank, recorded_call)[1:]:
        if url in (reverse("tt:unbanked_flags"), reverse("tt:banks"), reverse("tt:bank_new")):
            continue
        assert other_client.get(url).status_code == 404, url
    assert b"Siobhan" not in other_client.get(reverse("tt:calls")).content


def test_it_sends_anonymous_users_to_log_in(client, flag, bank, recorded_call):
    response = client.get(reverse("tt:bank", args=[bank.pk]))
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_it_refuses_the_wrong_method(admin_client, flag, bank):
    assert admin_client.post(reverse("tt:calls")).status_code == 405
    assert admin_client.post(reverse("tt:bank", args=[bank.pk])).status_code == 405
    assert admin_client.get(reverse("tt:delete_flag", args=[flag.pk])).status_code == 405
    assert admin_client.get(reverse("tt:bank_delete", args=[bank.pk])).status_code == 405
    assert admin_client.get(reverse("tt:move_flag", args=[flag.pk])).status_code == 405


def test_it_flags_a_line_inline_with_htmx(admin_client, bank, recorded_call):
    line = recorded_call.lines.get(position=2)
    form = admin_client.get(reverse("tt:flag_line", args=[line.pk]), HTTP_HX_REQUEST="true")
    assert b'name="expected_text"' in form.content and escape(line.text).encode() in form.content
    assert b"<html" not in form.content  # a fragment, not a page
    page = admin_client.get(reverse("tt:flag_line", args=[line.pk]))
    assert b"<html" in page.content and b'name="expected_text"' in page.content
    response = admin_client.post(
        reverse("tt:flag_line", args=[line.pk]),
        {
            "expected_text": "yes, that's right",
            "tags": ["name"],
            "custom_tags": "accent",
            "note": "n",
            "bank": bank.pk,
            "confirm_matches_live": "on",
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert b"Flagged" in response.content
    flag = Flag.objects.get(line=line)
    assert flag.tag_list == ["name", "accent"] and flag.bank == bank


def test_it_shows_a_clear_error_and_keeps_the_text_when_flagging_fails(admin_client, bank, recorded_call):
    line = recorded_call.lines.get(position=2)
    response = admin_client.post(
        reverse("tt:flag_line", args=[line.pk]),
        {"expected_text": " ... ", "bank": bank.pk},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    assert b"at least one word" in response.content
    assert not Flag.objects.filter(line=line).exists()


def test_it_says_why_a_line_cannot_be_flagged(admin_client, recorded_call):
    line = recorded_call.lines.get(position=2)
    line.start_s = line.end_s = None
    line.save()
    content = admin_client.get(reverse("tt:call", args=[recorded_call.pk])).content.decode()
    assert "Cannot be flagged: This line has no audio timing" in content


def test_it_edits_moves_and_deletes_a_flag(admin_client, org, flag, bank):
    other = actions.do_create_bank(org, name="Second")
    response = admin_client.post(
        reverse("tt:edit_flag", args=[flag.pk]),
        {"expected_text": "Siobhan table for four", "bank": other.pk},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    flag.refresh_from_db()
    assert flag.expected_text == "Siobhan table for four" and flag.bank == other
    admin_client.post(reverse("tt:move_flag", args=[flag.pk]), {"bank": bank.pk})
    flag.refresh_from_db()
    assert flag.bank == bank
    admin_client.post(reverse("tt:delete_flag", args=[flag.pk]))
    assert not Flag.objects.filter(pk=flag.pk).exists()


def test_a_refused_move_leaves_the_edit_of_the_same_form_unsaved(admin_client, org, flag, settings):
    other = actions.do_create_bank(org, name="Second")
    settings.ONCORE = {**settings.ONCORE, "ORG_QUEUE_LIMIT": 0}  # the move into a bank is refused: queue full
    response = admin_client.post(
        reverse("tt:edit_flag", args=[flag.pk]),
        {"expected_text": "Siobhan table for four", "bank": other.pk},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422 and "waiting for this organization" in response.content.decode()
    flag.refresh_from_db()
    assert flag.expected_text == "Siobhan, table for four at eight thirty" and flag.bank != other


def test_it_moves_an_unbanked_flag_into_a_bank(admin_client, bank, recorded_call):
    flag = actions.do_flag_line(recorded_call.lines.get(position=4), "my number is 087")
    assert b"my number is 087" in admin_client.get(reverse("tt:unbanked_flags")).content
    admin_client.post(reverse("tt:move_flag", args=[flag.pk]), {"bank": bank.pk})
    flag.refresh_from_db()
    assert flag.bank == bank
    assert Score.objects.filter(flag=flag, source=Score.LIVE).exists()


def test_it_creates_edits_and_deletes_a_bank(admin_client, org):
    response = admin_client.post(
        reverse("tt:bank_new"),
        {"name": "French", "language_label": "French", "threshold_pct": "70", "controls_per_flag": "2"},
    )
    bank = Bank.objects.get(name="French")
    assert response.status_code == 302 and bank.threshold == Decimal("0.7") and bank.controls_per_flag == 2
    again = admin_client.post(
        reverse("tt:bank_new"), {"name": "French", "threshold_pct": "60", "controls_per_flag": "1"}
    )
    assert again.status_code == 422 and b"already exists" in again.content
    admin_client.post(
        reverse("tt:bank_edit", args=[bank.pk]),
        {"name": "Français", "threshold_pct": "65", "controls_per_flag": "1"},
    )
    bank.refresh_from_db()
    assert bank.name == "Français"
    admin_client.post(reverse("tt:bank_delete", args=[bank.pk]))
    assert not Bank.objects.filter(pk=bank.pk).exists()


def test_it_shows_the_backfill_estimate_before_adding_a_candidate(admin_client, flag, bank, make_transcriber):
    third = make_transcriber("third", "x", price="0.06")
    url = reverse("tt:bank_candidates", args=[bank.pk])
    estimate = admin_client.post(url, {"transcriber": third.pk})
    assert b"Confirm and add" in estimate.content and b"will transcribe" in estimate.content
    assert not bank.candidates.filter(transcriber=third).exists()
    admin_client.post(url, {"transcriber": third.pk, "confirmed": "on"})
    assert bank.candidates.filter(transcriber=third).exists()
    admin_client.post(reverse("tt:candidate_move", args=[bank.pk, third.pk]), {"direction": "up"})
    assert list(bank.candidates.values_list("transcriber_id", flat=True))[1] == third.pk
    admin_client.post(reverse("tt:candidate_remove", args=[bank.pk, third.pk]))
    assert not bank.candidates.filter(transcriber=third).exists()


def test_it_shows_cards_with_the_leader_and_the_live_reference(admin_client, flag, bank):
    content = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    # Two scored lines (the flag and its control): a leader, but a provisional one, and the page says why.
    assert "★ Leader (provisional): Test good" in content and "★ Leader, provisional" in content
    assert "Too few lines to trust yet:" in content and "at least 30 scored lines" in content
    assert "clears the 60.0% threshold" in content or "below the" in content
    assert "not a fair rival" in content
    assert "Test live" in content


def test_it_stops_the_progress_poll_when_nothing_waits(admin_client, flag, bank):
    response = admin_client.get(
        reverse("tt:bank", args=[bank.pk]) + "?fragment=progress", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 286


def test_it_keeps_polling_while_work_is_queued(admin_client, bank, recorded_call):
    actions.do_flag_line(recorded_call.lines.get(position=0), "Siobhan", bank=bank)
    response = admin_client.get(
        reverse("tt:bank", args=[bank.pk]) + "?fragment=progress", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200 and b'hx-trigger="every 2s"' in response.content


def test_it_shows_the_turn_table_with_ticks_wer_and_filters(admin_client, flag, bank):
    url = reverse("tt:turn_table", args=[bank.pk])
    content = admin_client.get(url).content.decode()
    assert "✓ match" in content and "WER 0.43" in content and "control" in content
    assert (
        "control"
        not in admin_client.get(url + "?kind=flags").content.decode().split("<tbody>")[1].split("badge")[1]
    )
    assert "No lines match" in admin_client.get(url + "?tag=spelling").content.decode()
    assert "Siobhan, table" in admin_client.get(url + "?tag=name").content.decode()
    disagree = admin_client.get(url + "?disagree=1").content.decode()
    assert "Siobhan, table for four at eight thirty" in disagree


def test_it_serves_line_audio_with_ranges(admin_client, flag):
    url = reverse("tt:line_audio", args=[flag.line.pk])
    whole = admin_client.get(url).getvalue()  # streamed
    assert admin_client.get(url)["Content-Type"] == "audio/wav" and whole[:4] == b"RIFF"
    part = admin_client.get(url, HTTP_RANGE="bytes=0-99")
    assert part.status_code == 206 and part.getvalue() == whole[:100]
    assert part["Content-Range"] == f"bytes 0-99/{len(whole)}"
    assert admin_client.get(url, HTTP_RANGE=f"bytes={len(whole) + 10}-").status_code == 416


def read_csv(response):
    text = b"".join(response.streaming_content).decode("utf-8")
    assert text.startswith("\ufeff")
    return list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))


def test_it_exports_the_results_and_the_turn_table_as_csv(admin_client, flag, bank):
    results = read_csv(admin_client.get(reverse("tt:export_results", args=[bank.pk])))
    good = next(r for r in results if r["transcriber"] == "Test good")
    assert good["leader"] == "yes" and good["accuracy"] == "0.5"  # its flag matched, its control did not
    turns = read_csv(admin_client.get(reverse("tt:export_turns", args=[bank.pk])))
    assert {r["source"] for r in turns} == {"live", "candidate"}
    assert {r["item"] for r in turns} == {"flag", "control"}
    bad = next(r for r in turns if r["transcriber"] == "Test bad" and r["item"] == "flag")
    assert bad["text"].startswith("'=")  # a formula-looking cell is neutralized


def test_it_switches_between_organizations(client, django_user_model, org, other_org, bank, other_tenant):
    from oncore.accounts.models import Membership

    user = django_user_model.objects.create_user(username="both", password="pw-for-tests-1")
    Membership.objects.create(user=user, organization=org, role="admin")
    Membership.objects.create(user=user, organization=other_org, role="admin")
    client.force_login(user)
    assert client.get(reverse("tt:bank", args=[bank.pk])).status_code == 200
    client.post(reverse("switch_org"), {"organization": other_org.pk, "next": reverse("tt:banks")})
    assert client.get(reverse("tt:bank", args=[bank.pk])).status_code == 404


def test_it_shows_the_judges_pick_in_the_turn_table_and_its_csv(admin_client, flag, bank):
    from transcriber_tests.models import JudgePick

    good = bank.candidates.get(position=0).transcriber
    JudgePick.objects.create(
        flag=flag,
        chosen=good,
        chosen_text="Siobhan, table for four at eight thirty",
        reasoning="The guest spells it Siobhan.",
        versions={},
    )
    content = admin_client.get(reverse("tt:turn_table", args=[bank.pk])).content.decode()
    assert "Judge&#x27;s pick" in content or "Judge's pick" in content
    assert "The guest spells it Siobhan." in content
    turns = read_csv(admin_client.get(reverse("tt:export_turns", args=[bank.pk])))
    flagged = [r for r in turns if r["item"] == "flag"]
    assert {r["judge_pick"] for r in flagged} == {"Test good"}
    assert flagged[0]["judge_reasoning"] == "The guest spells it Siobhan."


def test_it_shows_per_language_wer_when_the_banks_lines_span_several_languages_whatever_its_label(
    admin_client, org, make_transcriber, recorded_call
):
    bank = actions.do_create_bank(org, name="Callers", language_label="English", controls_per_flag=0)
    actions.do_add_candidate(
        bank, make_transcriber("bi", "I would like a mesa para cuatro personas por favor"), confirmed=True
    )
    url = reverse("tt:bank", args=[bank.pk])
    actions.do_flag_line(recorded_call.lines.get(position=2), "yes that is right", bank=bank)
    tasks.drain()
    assert "Per language:" not in admin_client.get(url).content.decode()  # English lines only
    actions.do_flag_line(
        recorded_call.lines.get(position=0), "I would like a table para cuatro personas por favor", bank=bank
    )
    tasks.drain()
    content = admin_client.get(url).content.decode()
    assert (
        "Per language:" in content and "<strong>en</strong>" in content and "<strong>es</strong>" in content
    )


def test_it_lists_each_flag_before_its_control_lines(admin_client, flag, bank):
    content = admin_client.get(reverse("tt:turn_table", args=[bank.pk])).content.decode()
    assert content.index("⚑ flag") < content.index('badge muted">control')
    turns = read_csv(admin_client.get(reverse("tt:export_turns", args=[bank.pk])))
    assert turns[0]["item"] == "flag"


def test_it_shows_new_scores_once_the_queue_has_computed_the_figures(admin_client, flag, bank, recorded_call):
    url = reverse("tt:bank", args=[bank.pk])
    before = admin_client.get(url).content.decode()
    assert "on 2 scored lines" in before
    actions.do_flag_line(recorded_call.lines.get(position=4), "my number is 087", bank=bank)
    tasks.drain()
    after = admin_client.get(url).content.decode()
    assert "on 4 scored lines" in after
    actions.do_remove_candidate(bank, bank.candidates.get(position=1).transcriber)
    tasks.drain()
    assert admin_client.get(url).content.decode().count('class="result-card') == 1


def test_the_turn_export_holds_every_item_in_order_across_batches(admin_client, org, monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    from transcriber_tests.actions.synthetic import fill_bank
    from transcriber_tests.queries import turns

    monkeypatch.setattr(turns, "FETCH_ROWS", 3)  # 42 rows: many rounds of fetches from each stream
    monkeypatch.setattr(exports, "FETCH_ITEMS", 2)  # PostgreSQL: many rounds of items and their scores
    bank = fill_bank(org, flags=8, candidates=3, name="Batched")
    removed = bank.candidates.get(position=2).transcriber
    actions.do_remove_candidate(bank, removed)
    old = Flag.objects.filter(bank=bank).order_by("id").first()
    Flag.objects.filter(pk=old.pk).update(joined_at=timezone.now() - timedelta(days=40))  # outside the window
    newest = Flag.objects.filter(bank=bank).order_by("id")[1]
    Flag.objects.filter(pk=newest.pk).update(
        joined_at=timezone.now()
    )  # an early id joined last: listed first

    turns = read_csv(admin_client.get(reverse("tt:export_turns", args=[bank.pk]) + "?window=30"))

    expected = []
    for flag in Flag.objects.filter(bank=bank, joined_at__gte=timezone.now() - timedelta(days=29)).order_by(
        "-joined_at", "-id"
    ):
        for control in [None, *flag.controls.order_by("id")]:
            scores = Score.objects.filter(flag=flag, control=control).exclude(transcriber=removed)
            for s in sorted(scores, key=lambda s: (s.source, s.transcriber_id)):
                line = control.line if control else flag.line
                expected.append(
                    (
                        str(flag.pk),
                        "control" if control else "flag",
                        str(line.pk),
                        s.transcriber.display_name,
                        s.source,
                        s.hypothesis,
                    )
                )
    got = [(r["flag_id"], r["item"], r["line_id"], r["transcriber"], r["source"], r["text"]) for r in turns]
    assert len(got) == 7 * 2 * 3  # 7 flags in the window, each with one control; 2 candidates + live
    assert got == expected and got[0][0] == str(newest.pk)
    assert str(old.pk) not in {r["flag_id"] for r in turns}


def test_the_call_page_looks_up_a_live_transcriber_known_by_name_once(
    admin_client, tenant, live_transcriber, tmp_path
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.fixtures import make_call

    def queries_for(n_lines):
        call = make_call(tenant, None, caller_texts=["hello"] * n_lines)
        call.live_transcriber_name = live_transcriber.display_name
        call.save()
        with CaptureQueriesContext(connection) as ctx:
            content = admin_client.get(reverse("tt:call", args=[call.pk])).content.decode()
        assert "unknown" not in content  # the name resolved: every caller line is flaggable
        return len(ctx.captured_queries)

    assert queries_for(2) == queries_for(12)
