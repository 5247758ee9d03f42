"""Recount with the app's own code, as it is now, once the tables are as it expects them (the latest migration
is the one place that runs the app's code: an earlier one would run today's code against yesterday's tables):

- a control line that became a flag stops being a control (flagging now retires it, controls.retire):
  banks made before kept such lines as controls scored against their wrong live text; each is retired, with its
  scores, and a replacement drawn from the same call when one is left;
- scores made before scores kept their alignment get their confusion pairs and text key (scores.backfill_alignment,
  0013), from their texts;
- every per-day total, disagree mark and call counter is built from the scores (aggregates.rebuild), in the days
  each flag joined its bank in its organization's timezone, the per-tenant and per-assistant totals and the
  candidates' latency buckets (0012), the confusion pairs, the call totals and the expected-text checks (0013)
  included.

A later migration that changes what these compute moves this step after itself: 0019 did (scores keep their word
alignment), so this one runs nothing."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("transcriber_tests", "0014_transcription_streaming")]

    operations = []
