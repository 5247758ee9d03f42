"""Migrations 0008 and 0009 on a database that already has scores: each candidate score gets its transcription's
cost, and every per-day total, disagree mark and call counter is built from the rows (rebuild finds no drift)."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.transcriber_tests.migrations.test_0006_exact_scores import migrate
from transcriber_tests import aggregates, queries

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("transcriber_tests", "0007_rule_labels_and_fair_judge")]


def test_it_costs_old_scores_and_builds_every_total():
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
        line = Line.objects.create(call=call, position=0, speaker="caller", text="four")
        good, bad, live = (
            Transcriber.objects.create(slug=f"old-{n}", provider="generic", model="m", display_name=n)
            for n in ("good", "bad", "live")
        )
        bank = model("Bank").objects.create(organization_id=org.pk, name="Old bank")
        for position, t in enumerate((good, bad)):
            model("Candidate").objects.create(bank=bank, transcriber_id=t.pk, position=position)
        flag = model("Flag").objects.create(
            organization_id=org.pk, line_id=line.pk, bank=bank, expected_text="table for four", tags=",name,"
        )
        for t, match, text in ((good, True, "table for four"), (bad, False, "table for")):
            model("Transcription").objects.create(
                organization_id=org.pk,
                line_id=line.pk,
                transcriber_id=t.pk,
                status="done",
                text=text,
                cost="0.0012",
            )
            model("Score").objects.create(
                flag=flag, transcriber_id=t.pk, source="candidate", hypothesis=text, match=match,
                wer=0.0 if match else 1 / 3, wer_units=0 if match else 1784742960, reference_words=3,
                deletions=0 if match else 1, normalizer_version="1",
            )  # fmt: skip
        model("Score").objects.create(
            flag=flag, transcriber_id=live.pk, source="live", hypothesis="four", wer=2 / 3,
            wer_units=3569485920, deletions=2, reference_words=3, normalizer_version="1",
        )  # fmt: skip

        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
        from transcriber_tests.models import Bank, Score

        assert {s.cost for s in Score.objects.filter(source="candidate")} == {Decimal("0.001200")}
        assert Score.objects.get(source="live").disagree  # one candidate matched, the other did not
        assert not aggregates.rebuild(fix=False).any
        results = queries.bank_results(Bank.objects.get(pk=bank.pk))
        assert [(c.summary.scored, c.summary.matches) for c in results.cards] == [(1, 1), (1, 0)]
        assert [c.cost for c in results.cards] == [Decimal("0.0012"), Decimal("0.0012")]
        assert queries.totals.tag_summaries(bank.pk, queries.window_start(90))["name"][good.pk].matches == 1
        assert Call.objects.get(pk=call.pk).n_flags == 1
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
