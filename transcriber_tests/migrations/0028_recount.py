"""Recount with the app's own code, as it is now, once the tables are as it expects them (the latest migration
is the one place that runs the app's code: an earlier one would run today's code against yesterday's tables):

- a control line that became a flag stops being a control (flagging now retires it, controls.retire):
  banks made before kept such lines as controls scored against their wrong live text; each is retired, with its
  scores, and a replacement drawn from the same call when one is left;
- a control line whose live text is degenerate (no words, a repetition loop, more words than its duration allows:
  scoring.degenerate) is retired the same way (controls.retire_degenerate_controls);
- scores made before scores kept their alignment get their confusion pairs, text key and word alignment
  (scores.backfill_alignment; 0013 and 0016), from their texts;
- scores made before scores kept their entities get the entities of their item's expected text, each marked kept
  or lost in their text (scores.backfill_entities; 0022);
- every per-day total, disagree mark and call counter is built from the scores (aggregates.rebuild), in the days
  each flag joined its bank in its organization's timezone, the per-tenant and per-assistant totals and the
  candidates' latency buckets (0012), the confusion pairs, the call totals and the expected-text checks (0013;
  control lines' too, 0018), the control part of each candidate's scores (0018) and the entities kept and lost
  per category (0024) included, of settled flags only (0027: a flag a request wrote is counted once the queue
  has settled it; every flag before 0027 is settled);
- every bank's results are marked changed, so their snapshots are computed again (with the entity figures).

A later migration that changes what these compute moves this step after itself: 0030 did (the version every
change to a flag's items moves on its call, calls 0005, and the bank's settings version, 0029), so this one runs
nothing."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("transcriber_tests", "0027_flag_settled")]

    operations = []
