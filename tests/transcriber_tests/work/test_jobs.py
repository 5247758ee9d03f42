"""The queue counts open sessions: a running row is a request in flight or a streaming connection held for its
line's duration, and of an organization's ORG_CONCURRENCY at most ORG_STREAMS are streaming sessions, so batch
lines keep moving beside a streaming candidate (pump, and the chain's claim_next)."""

import pytest

from oncore.transcribers.models import Transcriber
from transcriber_tests import handles
from transcriber_tests.models import Transcription
from transcriber_tests.work import jobs

pytestmark = pytest.mark.django_db


def streaming_entry(slug) -> Transcriber:
    return Transcriber.objects.create(
        slug=slug,
        provider="deepgram",
        model="nova-3",
        mode=Transcriber.STREAMING,
        display_name=f"Deepgram live {slug}",
        api_key_env="DEEPGRAM_API_KEY",
    )


def queued(org, line, transcriber) -> Transcription:
    return Transcription.objects.create(organization=org, line=line, transcriber=transcriber)


def test_the_queue_counts_open_sessions_and_holds_streaming_ones_to_org_streams(
    org, settings, recorded_call, make_transcriber
):
    settings.ONCORE = {**settings.ONCORE, "ORG_CONCURRENCY": 4, "ORG_STREAMS": 1}
    lines = list(recorded_call.lines.filter(speaker="caller").order_by("position"))
    live = [streaming_entry(f"test-live-{i}") for i in range(3)]
    batch = make_transcriber("batch", "hello")
    streaming_rows = [queued(org, lines[0], t) for t in live]  # the oldest rows are streaming ones
    batch_rows = [queued(org, line, batch) for line in lines]

    dispatched = handles.pump(org.pk)

    # four sessions at once, one of them a stream: the other streaming rows wait behind the batch ones
    assert dispatched == [streaming_rows[0].pk] + [r.pk for r in batch_rows[:3]]
    assert handles.free_slots(org.pk) == 0 and handles.open_streams(org.pk) == 1
    Transcription.objects.filter(pk__in=[r.pk for r in batch_rows[:3]]).update(status=Transcription.DONE)
    # the stream is still open: the free slots go to batch rows, never to a second stream
    assert handles.pump(org.pk) == [batch_rows[3].pk]
    Transcription.objects.filter(pk=batch_rows[3].pk).update(status=Transcription.DONE)
    # a chained task finds free slots, but only streaming rows wait and the one stream allowed is open
    assert handles.free_slots(org.pk) == 3 and jobs.claim_next(org.pk) is None
    Transcription.objects.filter(pk=streaming_rows[0].pk).update(status=Transcription.DONE)
    assert handles.pump(org.pk) == [streaming_rows[1].pk]
    settings.ONCORE = {**settings.ONCORE, "ORG_STREAMS": 2}
    assert jobs.claim_next(org.pk).pk == streaming_rows[2].pk  # a second stream may open now
