"""Calls that name their live transcriber without a catalogue link (issue 34, 5.4): the cost of the calls finds it
in the catalogue by name, as replay does (lines.live_transcriber_of), so it is counted once and priced; where a
name is in no catalogue entry, the page gives what is known and names the rest "not in the catalogue (named on
the calls only)" instead of calling every "Against now" unknown."""

from decimal import Decimal

import pytest
from django.urls import reverse

from oncore.transcribers.models import Transcriber
from tests.fixtures import make_call
from tests.transcriber_tests.support import read
from transcriber_tests.queries import cost

pytestmark = pytest.mark.django_db


@pytest.fixture
def local_live(db):
    """The catalogue's Whisper tiny.en (local), free."""
    return Transcriber.objects.get(slug="whisper-tiny-en")


def calls_named(tenant, local_live, unknown="Acme Legacy STT"):
    """Ten caller lines linked to the local entry, ten naming it only (in other capitals), one naming a live
    transcriber no catalogue entry has (1.6 s of caller audio a line)."""
    make_call(tenant, local_live, caller_texts=["hello there"] * 10, recorded=False)
    named = make_call(tenant, None, caller_texts=["hello there"] * 10, recorded=False)
    named.live_transcriber_name = "whisper TINY.en (local)"
    named.save(update_fields=["live_transcriber_name"])
    if unknown:
        other = make_call(tenant, None, caller_texts=["hello there"], recorded=False)
        other.live_transcriber_name = unknown
        other.save(update_fields=["live_transcriber_name"])


def test_a_live_transcriber_named_on_calls_only_is_found_in_the_catalogue(org, tenant, local_live):
    calls_named(tenant, local_live, unknown="")
    volume = cost.call_volume(org)
    assert [(s.name, s.transcriber_id, s.calls, s.cost, s.local) for s in volume.live] == [
        ("Whisper tiny.en (local)", local_live.pk, 2, Decimal(0), True)
    ]
    assert volume.now == Decimal(0) and volume.unpriced_minutes == 0


def test_the_results_page_gives_the_known_part_and_names_the_rest(
    admin_client, api, flag, bank, tenant, local_live
):
    # The fixture's call ran on "Test live" ($0.006 a minute, 4 lines); 20 lines on the local engine (free); one
    # line on a live transcriber named on its call only: 38.4 of 40 seconds are priced (96%).
    calls_named(tenant, local_live)
    volume = cost.call_volume(bank.organization)
    names = [s.name for s in volume.live]
    assert names.count("Whisper tiny.en (local)") == 1 and "Acme Legacy STT" in names
    assert volume.now is None and volume.priced_share == "96%"

    page = read(admin_client.get(reverse("tt:bank", args=[bank.pk])).content)
    assert (
        "The 96% of their minutes on a live transcriber in the catalogue cost under $0.01 now; the rest is not "
        "known. Their live transcribers: Whisper tiny.en (local) 0.5 minutes (free, runs on a server of yours); "
        "Test live 0.1 minutes (under $0.01); Acme Legacy STT 0.0 minutes (not in the catalogue: named on the "
        "calls only)." in page
    )
    assert "today's cost unknown" not in page
    assert "more than now on the 96% of minutes priced now" in page

    card = api.get(f"/banks/{bank.pk}/results").json()
    assert card["volume"]["now"] is None and Decimal(card["volume"]["now_known"]) > 0
    monthly = card["candidates"][0]["monthly"]
    assert monthly["difference"] is None and Decimal(monthly["difference_known"]) > 0
    assert (
        "the other 0.0 minutes ran on a live transcriber that is not in the catalogue" in monthly["summary"]
    )


def test_with_no_minute_priced_it_says_why_the_cost_now_is_unknown(admin_client, org, tenant, local_live):
    from transcriber_tests.lib import tradeoff as tradeoffs
    from transcriber_tests.templatetags.tradeoff import against_now

    p = tradeoffs.projection(1, "0.006", Decimal("10"), Decimal(0), Decimal("10"), local=False)
    assert against_now(p) == (
        "today's cost unknown: its live transcriber is not in the catalogue (named on the calls only)"
    )
    half = tradeoffs.projection(1, "0.006", Decimal("10"), Decimal("0.01"), Decimal("5"), local=False)
    assert half.known_difference == Decimal("0.02") and against_now(half) == (
        "$0.02 more than now on the 50% of minutes priced now"
    )
