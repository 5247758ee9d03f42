"""Migration 0006 backfills the exact scores of rows written before it: a failed score's reason, a scored text
with no words turned into a "no text" failure, and every scored line's integer WER."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from transcriber_tests.lib import scoring

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("transcriber_tests", "0005_runs_tasks_path")]
AFTER = [("transcriber_tests", "0006_exact_scores")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_it_backfills_failure_reasons_and_integer_wers():
    from oncore.accounts.models import Organization
    from oncore.calls.models import Call, Line
    from oncore.transcribers.models import Transcriber

    old = migrate(BEFORE)  # only transcriber_tests goes back: the other apps keep their current tables
    try:
        Flag = old.get_model("transcriber_tests", "Flag")
        Score = old.get_model("transcriber_tests", "Score")
        org = Organization.objects.create(name="Old", slug="old")
        tenant = org.tenants.create(name="T", slug="t")
        call = Call.objects.create(tenant=tenant, started_at="2026-01-01T00:00:00Z")
        line = Line.objects.create(call=call, position=0, speaker="caller", text="x")
        flag = Flag.objects.create(organization_id=org.pk, line_id=line.pk, expected_text="w " * 20)
        kinds = {
            "scored": dict(hypothesis="x", wer=0.15, substitutions=3, reference_words=20),
            "failed": dict(failed=True, hypothesis=""),
            "dots": dict(hypothesis="...", wer=1.0, deletions=20, reference_words=20),
            "long": dict(hypothesis="y", wer=1 / 3, substitutions=10, reference_words=30),
        }
        ids = {}
        for kind, values in kinds.items():
            t = Transcriber.objects.create(
                slug=f"old-{kind}", provider="generic", model="m", display_name=kind
            )
            ids[kind] = Score.objects.create(
                flag=flag, transcriber_id=t.pk, source="candidate", normalizer_version="1", **values
            ).pk
        new = migrate(AFTER)
        rows = {k: new.get_model("transcriber_tests", "Score").objects.get(pk=pk) for k, pk in ids.items()}
        assert (rows["scored"].failure, rows["scored"].wer_units) == ("", 3 * scoring.WER_SCALE // 20)
        assert (rows["failed"].failure, rows["failed"].wer_units) == ("error", None)
        assert (rows["dots"].failed, rows["dots"].failure, rows["dots"].wer_units) == (True, "no text", None)
        assert rows["long"].wer_units == scoring.wer_units(10, 30)  # 1/3 rounded half up to 1 / WER_SCALE
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
