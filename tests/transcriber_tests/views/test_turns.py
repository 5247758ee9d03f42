"""Each turn-table cell says how long its transcriber took on that line: the API's cells and the turn-table CSV
carry the transcription's latency (a streaming candidate's time to final), and the page shows it in the cell."""

import csv
import io

import pytest
from django.urls import reverse

from transcriber_tests.models import Score

pytestmark = pytest.mark.django_db


def test_every_candidate_cell_carries_its_latency_and_the_production_cell_none(api, admin_client, flag):
    scores = {
        s.transcriber_id: s.latency_s
        for s in Score.objects.filter(flag=flag, control__isnull=True, source=Score.CANDIDATE)
    }
    assert scores and all(s is not None and s >= 0 for s in scores.values())

    body = api.get(f"/banks/{flag.bank_id}/turns").json()
    item = next(i for i in body["items"] if i["kind"] == "flag")
    assert {c["transcriber_id"]: c["latency_s"] for c in item["cells"]} == scores
    assert item["production"]["latency_s"] is None  # scored as stored: no replay

    response = admin_client.get(reverse("tt:export_turns", args=[flag.bank_id]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    mine = [r for r in rows if r["flag_id"] == str(flag.pk) and not r["control_id"]]
    assert {r["latency_s"] for r in mine if r["source"] == "candidate"} == {
        str(round(s, 3)) for s in scores.values()
    }
    assert [r["latency_s"] for r in mine if r["source"] == "live"] == [""]


def test_the_turn_table_and_the_call_page_show_how_long_each_candidate_took(admin_client, flag):
    from tests.transcriber_tests.support import read
    from transcriber_tests.lib.tradeoff import seconds_words

    took = [
        f"took {seconds_words(s.latency_s)}"
        for s in Score.objects.filter(flag=flag, control__isnull=True, source=Score.CANDIDATE)
    ]
    turns = read(admin_client.get(reverse("tt:turn_table", args=[flag.bank_id])).content)
    call = read(admin_client.get(reverse("tt:call", args=[flag.line.call_id])).content)
    for page in (turns, call):
        assert all(t in page for t in took), (took, page[:2000])


def test_a_turn_page_is_rendered_once_per_version_of_its_scores_and_shows_the_next_write(admin_client, flag):
    """A page of rows is kept by the bank's results version: read again, it reads no score; once a score is
    written (the version moves), the next read shows the new text."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.transcriber_tests.support import read
    from transcriber_tests.actions import scores

    url = reverse("tt:turn_table", args=[flag.bank_id])
    first = read(admin_client.get(url).content)
    with CaptureQueriesContext(connection) as seen:
        again = read(admin_client.get(url).content)
    assert again == first
    assert not [q for q in seen.captured_queries if "transcriber_tests_score" in q["sql"]]

    one = Score.objects.filter(flag=flag, control__isnull=True, source=Score.CANDIDATE).first()
    assert "zebra" not in first
    scores.write_score(flag, None, one.transcriber_id, Score.CANDIDATE, "zebra", flag.expected_text)
    assert "heard zebra" in read(admin_client.get(url).content)


def test_after_a_score_write_a_turn_page_renders_the_rows_of_that_flag_alone(
    admin_client, flag, recorded_call
):
    """Each row is kept by its flag's items version: a score written on one flag moves the page's version, and
    the next read renders that flag's rows, reads the other flags' kept, and shows what a read afresh shows."""
    import re

    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.transcriber_tests.support import read
    from transcriber_tests import actions
    from transcriber_tests.actions import scores
    from transcriber_tests.work import tasks

    caller = recorded_call.lines.filter(speaker="caller").exclude(pk=flag.line_id).order_by("position")
    actions.do_flag_line(caller.first(), "Under the name Kowalczyk", bank=flag.bank)
    tasks.drain()
    url = reverse("tt:turn_table", args=[flag.bank_id])
    before = read(admin_client.get(url).content)
    assert "Kowalczyk" in before

    one = Score.objects.filter(flag=flag, control__isnull=True, source=Score.CANDIDATE).first()
    scores.write_score(flag, None, one.transcriber_id, Score.CANDIDATE, "zebra", flag.expected_text)
    with CaptureQueriesContext(connection) as seen:
        after = read(admin_client.get(url).content)
    assert "heard zebra" in after and "Kowalczyk" in after
    rendered = [q["sql"] for q in seen.captured_queries if "\"source\" = 'candidate'" in q["sql"]]
    assert len(rendered) == 1, rendered  # the candidates' scores of the rows not kept, in one query
    flags_read = re.search(r'"flag_id" IN \(([^)]*)\)', rendered[0]).group(1)
    assert [int(pk) for pk in flags_read.split(",")] == [flag.pk]
    cache.clear()
    assert read(admin_client.get(url).content) == after
