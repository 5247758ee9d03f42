"""Migrations 0022 and 0023 on a database that already has scores: each score stored before gets the entities of its
item's expected text, each marked kept or lost in its text, and the bank's results are marked changed (its
snapshots are computed again)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.transcriber_tests.migrations.test_0006_exact_scores import migrate
from transcriber_tests.lib import entities

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("transcriber_tests", "0021_stream_head")]


def test_it_gives_old_scores_their_entities():
    from oncore.accounts.models import Organization
    from oncore.calls.models import Call, Line
    from oncore.transcribers.models import Transcriber

    old = migrate(BEFORE)  # only transcriber_tests goes back: the other apps keep their current tables
    try:
        model = lambda name: old.get_model("transcriber_tests", name)  # noqa: E731
        org = Organization.objects.create(name="Old", slug="old")
        call = Call.objects.create(
            tenant=org.tenants.create(name="T", slug="t"), started_at="2026-01-01T00:00:00Z"
        )
        line = Line.objects.create(call=call, position=0, speaker="caller", text="a table for for at ten")
        good, bad = (
            Transcriber.objects.create(slug=f"old-{n}", provider="generic", model="m", display_name=n)
            for n in ("good", "bad")
        )
        bank = model("Bank").objects.create(organization_id=org.pk, name="Old bank")
        before = bank.results_changed_at
        flag = model("Flag").objects.create(
            organization_id=org.pk, line_id=line.pk, bank=bank, expected_text="A table for four at 10:45."
        )
        for t, text in ((good, "a table for 4 at ten forty five"), (bad, "a table for for at ten")):
            model("Score").objects.create(
                flag=flag, transcriber_id=t.pk, source="candidate", hypothesis=text, normalizer_version="1"
            )

        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
        from transcriber_tests.models import Bank, Score

        kept = {
            s.transcriber_id: [(m.text, m.category, m.kept) for m in entities.decode(s.entities)]
            for s in Score.objects.filter(flag_id=flag.pk)
        }
        assert kept == {
            good.pk: [("four", "number", True), ("10:45", "time", True)],
            bad.pk: [("four", "number", False), ("10:45", "time", False)],
        }
        assert Bank.objects.get(pk=bank.pk).results_changed_at > before
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
