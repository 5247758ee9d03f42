"""Small words a newcomer's walk found wrong (issue 34, 5.11 and 5.13), each as a person reads it."""

import pytest
from django.urls import reverse

from tests.transcriber_tests.support import read

pytestmark = pytest.mark.django_db


def test_the_tenant_and_assistant_tables_say_they_count_flagged_and_control_lines(
    admin_client, flag, bank, tenant
):
    page = read(admin_client.get(reverse("tt:bank", args=[bank.pk])).content)
    assert "By tenant the bank's flagged and control lines, last 30 days" in page
    assert "By assistant the bank's flagged and control lines, last 30 days" in page
    assert "every call's lines" not in page
    filtered = read(admin_client.get(reverse("tt:bank", args=[bank.pk]) + f"?tenant={tenant.pk}").content)
    assert (
        "By tenant the bank's flagged and control lines, of every tenant (not only tenant Bistro), last 30"
        in (filtered)
    )


def test_a_missing_figure_reads_the_same_words_everywhere(admin_client, flag, bank, make_transcriber):
    """No "n/a" beside "—" beside "not measured yet": a candidate whose lines are still waiting reads "nothing
    scored yet" and "not measured yet" on its card and in the trade-off table."""
    from transcriber_tests import actions

    actions.do_add_candidate(bank, make_transcriber("late", "Siobhan"), confirmed=True)  # its lines wait
    html = admin_client.get(reverse("tt:bank", args=[bank.pk])).content.decode()
    table = html.split('<table class="data tradeoff-table">')[1].split("</table>")[0]
    row = read(table.split("Test late</th>")[1].split("</tr>")[0])
    assert row.startswith("nothing scored yet not measured yet not measured yet vendor")
    assert "nothing scored yet" in row and "—" not in row and "n/a" not in row
    card = read(html.split('aria-label="Test late"')[1].split("</article>")[0])
    assert "Latency p50 / p95 not measured yet" in card and "n/a" not in card


def test_call_times_name_the_organizations_timezone(admin_client, org, recorded_call):
    import re

    org.timezone = "Europe/Dublin"
    org.save(update_fields=["timezone"])
    when = r"\d{4}-\d\d-\d\d \d\d:\d\d (GMT|IST)"
    assert re.search(when, read(admin_client.get(reverse("tt:calls")).content))
    assert re.search(
        rf"Call {recorded_call.pk} {when}",
        read(admin_client.get(reverse("tt:call", args=[recorded_call.pk])).content),
    )


def test_the_keyboard_help_shows_only_what_the_call_allows(
    admin_client, tenant, live_transcriber, recorded_call
):
    from tests.fixtures import make_call

    page = read(admin_client.get(reverse("tt:call", args=[recorded_call.pk])).content)
    assert (
        "Keys: j / k next / previous caller line · f flag it (or edit its flag) · p play it · Esc close"
        in page
    )

    unrecorded = make_call(tenant, live_transcriber, caller_texts=["hello"], recorded=False)
    html = admin_client.get(reverse("tt:call", args=[unrecorded.pk])).content.decode()
    assert "This call cannot be tested." in read(html)
    assert "Keys:" not in read(html) and "data-keys" not in html and "Flag a caller line" not in read(html)

    unknown = make_call(tenant, None, caller_texts=["hello"])
    page = read(admin_client.get(reverse("tt:call", args=[unknown.pk])).content)
    assert "Keys: j / k next / previous caller line · p play it" in page and "f flag it" not in page
    assert "Its lines cannot be flagged: the transcriber it ran on is unknown" in page


def test_one_navigation_item_is_current(admin_client, bank):
    import re

    def current(url):
        html = admin_client.get(url).content.decode()
        nav = html.split('<nav aria-label="Main">')[1].split("</nav>")[0]
        return re.findall(r'aria-current="page">([^<]+)</a>', nav)

    assert current(reverse("tt:unbanked_flags")) == ["Unbanked flags"]
    assert current(reverse("tt:banks")) == ["Banks"]
    assert current(reverse("tt:bank", args=[bank.pk])) == ["Banks"]
    assert current(reverse("tt:turn_table", args=[bank.pk])) == ["Banks"]
    assert current(reverse("tt:calls")) == ["Calls"]


def test_no_table_has_an_empty_column_header(admin_client, bank, recorded_call):
    import re

    from oncore.accounts.models import ApiKey
    from tests.fixtures import make_webhook

    ApiKey.generate(bank.organization, name="k")
    webhook, _ = make_webhook(bank.organization)
    for url in (
        reverse("runs:new", args=[bank.pk]),
        reverse("api_keys"),
        reverse("webhook", args=[webhook.pk]),
    ):
        html = admin_client.get(url).content.decode()
        assert "<th" in html and not re.search(r"<th[^>]*>\s*</th>", html), url
