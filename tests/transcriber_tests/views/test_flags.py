"""The call page while flagging: the bank a new flag defaults to, each flagged line's results per candidate as
they arrive (pending, tick or WER, failed with its reason, the judge's pick), its control lines named with theirs,
polled until complete, in a fixed number of queries."""

import pytest
from django.db import transaction
from django.urls import reverse
from django_htmx.http import HTMX_STOP_POLLING

from transcriber_tests import actions, queries
from transcriber_tests.models import Flag, JudgePick
from transcriber_tests.work import picks, tasks

pytestmark = pytest.mark.django_db

TRUTH = "Siobhan, table for four at eight thirty"


def bank_select(content: str) -> str:
    """The option the flag form's bank select has selected."""
    select = content[content.index('name="bank"') :]
    select = select[: select.index("</select>")]
    chosen = [part for part in select.split("<option")[1:] if "selected" in part.split(">")[0]]
    return chosen[0].split(">")[1].split("<")[0]


def test_it_defaults_the_flag_form_to_the_bank_the_admin_flagged_into_last(
    admin_client, admin_user, org, bank, recorded_call
):
    spare = actions.do_create_bank(org, name="Spare")
    lines = list(recorded_call.lines.filter(speaker="caller").order_by("position"))
    form = admin_client.get(reverse("tt:flag_line", args=[lines[0].pk])).content.decode()
    assert bank_select(form) == "No bank (decide later)"  # two banks and no flag yet: no guess

    actions.do_flag_line(lines[0], TRUTH, bank=spare, user=admin_user)
    assert (
        bank_select(admin_client.get(reverse("tt:flag_line", args=[lines[1].pk])).content.decode()) == "Spare"
    )
    actions.do_flag_line(lines[1], "yes that is right", bank=bank, user=admin_user)
    form = admin_client.get(reverse("tt:flag_line", args=[lines[2].pk])).content.decode()
    assert bank_select(form) == "English" and "No bank (decide later)" in form  # no bank: one choice away


def test_it_defaults_to_the_only_bank_and_ignores_other_admins_flags(
    org, admin_user, other_admin, bank, recorded_call
):
    assert queries.remembered_bank(org, admin_user) == (
        bank,
        "Preselected: English, this organization's only bank.",
    )
    spare = actions.do_create_bank(org, name="Spare")
    assert queries.remembered_bank(org, admin_user) == (None, "")
    actions.do_flag_line(recorded_call.lines.get(position=0), TRUTH, bank=spare, user=other_admin)
    assert queries.remembered_bank(org, admin_user) == (None, "")  # someone else's flag


def test_it_shows_a_flagged_lines_results_per_candidate_as_they_arrive(
    admin_client, bank, recorded_call, stt_server
):
    line = recorded_call.lines.get(position=0)
    stt_server.statuses["bad"] = 400  # the second candidate fails on every line: no text comes back
    flag = actions.do_flag_line(line, TRUTH, bank=bank)
    control = flag.controls.select_related("line").get()
    url = reverse("tt:flag_results", args=[flag.pk])

    waiting = admin_client.get(url, headers={"HX-Request": "true"})
    content = waiting.content.decode()
    assert waiting.status_code == 200 and 'hx-trigger="every 2s"' in content
    assert content.count("… pending") == 4  # two candidates on the line and on its control
    assert f"line {control.line.position + 1}" in content and f"?line={control.line.pk}" in content

    tasks.drain()
    done = admin_client.get(url, headers={"HX-Request": "true"})
    content = done.content.decode()
    assert done.status_code == HTMX_STOP_POLLING and "pending" not in content
    assert "✓ match" in content  # the good candidate on the flagged line
    assert (
        "WER" in content
    )  # the good candidate on the control line (its expected text is the live transcript)
    assert content.count("✗ failed") == 2 and "400" in content  # the engine's error, as its reason


def test_it_shows_the_judges_pick_on_the_call_page(admin_client, flag, bank):
    good = bank.candidates.get(position=0).transcriber
    with transaction.atomic():  # as the judge's task writes a pick (work/picks.py)
        picks.picks_changed(flag)
        JudgePick.objects.create(
            flag=flag, chosen=good, chosen_text=TRUTH, reasoning="The guest spells it so."
        )
    content = admin_client.get(reverse("tt:call", args=[flag.line.call_id])).content.decode()
    assert "the judge's pick" in content and "The guest spells it so." in content


def test_it_stops_polling_a_flag_moved_out_of_every_bank(admin_client, flag):
    actions.do_move_flag(flag, None)
    response = admin_client.get(reverse("tt:flag_results", args=[flag.pk]), headers={"HX-Request": "true"})
    assert response.status_code == HTMX_STOP_POLLING


def test_it_hides_another_organizations_flag_results(other_client, flag):
    assert other_client.get(reverse("tt:flag_results", args=[flag.pk])).status_code == 404


def test_the_call_page_asks_a_fixed_number_of_queries_however_many_lines_are_flagged(
    admin_client, tenant, live_transcriber, bank
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.fixtures import make_call

    def queries_for(n_flags):
        call = make_call(tenant, live_transcriber, caller_texts=["hello there"] * 8)
        for line in call.lines.filter(speaker="caller").order_by("position")[:n_flags]:
            actions.do_flag_line(line, "hello world", bank=bank)
        tasks.drain()
        with CaptureQueriesContext(connection) as ctx:
            content = admin_client.get(reverse("tt:call", args=[call.pk])).content.decode()
        assert content.count("results per candidate") == 2 * n_flags  # each flag and its control
        return len(ctx.captured_queries)

    assert queries_for(1) == queries_for(4)
    assert Flag.objects.count() == 5


def test_it_edits_a_flag_on_a_page_of_its_own_with_a_plain_form(admin_client, flag):
    """The edit page (linked from "Check these expected texts") has no line row to swap: Save posts the form and
    Cancel goes back to the line; the heading says the flag is being edited."""
    url = reverse("tt:edit_flag", args=[flag.pk])
    page = admin_client.get(url).content.decode()
    assert "<h1>Edit the flag on line 1</h1>" in page and "<h1>Flag line" not in page
    assert "<title>Edit the flag on line 1" in page
    form = page[page.index('<form method="post" action="' + url) :]
    form = form[: form.index("</form>")]
    assert "hx-post" not in form and "hx-target" not in form and "hx-get" not in form
    line_url = reverse("tt:call", args=[flag.line.call_id]) + f"?line={flag.line_id}#line-{flag.line_id}"
    assert f'<a class="cancel" href="{line_url}">Cancel</a>' in form
    assert "Save flag" in form

    saved = admin_client.post(
        url, {"expected_text": "Siobhan, a table for four at eight thirty", "bank": flag.bank_id}, follow=True
    )
    assert saved.redirect_chain[-1][0] == line_url
    assert "Flag saved." in saved.content.decode()
    flag.refresh_from_db()
    assert flag.expected_text == "Siobhan, a table for four at eight thirty"

    refused = admin_client.post(url, {"expected_text": " ... ", "bank": flag.bank_id})
    assert refused.status_code == 422
    assert (
        "at least one word" in refused.content.decode()
        and "Edit the flag on line 1" in refused.content.decode()
    )


def test_it_keeps_the_inline_flag_form_swapping_its_row_on_the_call_page(admin_client, flag):
    form = admin_client.get(reverse("tt:edit_flag", args=[flag.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert f'hx-target="#line-{flag.line_id}"' in form and "<h1>" not in form


def test_the_flag_form_says_which_tag_or_bank_it_refused(admin_client, recorded_call, bank, other_org):
    """A tag that is not offered or a bank of another organization (a hand-made request) is refused with the
    reason under its field, the text typed kept."""
    from transcriber_tests.models import Bank

    line = recorded_call.lines.get(position=2)
    url = reverse("tt:flag_line", args=[line.pk])
    other = Bank.objects.create(organization=other_org, name="Theirs")
    answer = admin_client.post(
        url,
        {"expected_text": "my number is 087", "tags": "nonsense", "bank": other.pk},
        headers={"HX-Request": "true"},
    )
    assert answer.status_code == 422
    page = answer.content.decode()
    assert "Select a valid choice. nonsense is not one of the available choices." in page
    assert "Select a valid choice. That choice is not one of the available choices." in page
    assert "my number is 087" in page
    assert not Flag.objects.filter(line=line).exists()
