"""The demo (manage.py load_demo, fixtures/demo/ made by scripts/make_demo_calls.py): honest flags spread over
tenants and weeks, and everything a transcriber produces queued for the queue worker, nothing made up."""

import json
import random
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

from benchmark.models import BenchmarkRun, CsRun
from oncore.calls.models import Line
from transcriber_tests.lib import scoring
from transcriber_tests.management.commands.load_demo import RUN_CALLS, STREAMING_CALLS, heard
from transcriber_tests.models import Flag, Run, Score, Transcription

DEMO = Path(settings.BASE_DIR) / "fixtures" / "demo"


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_the_demos_flags_correct_caller_lines_its_live_transcriber_really_got_wrong():
    calls = {c["external_id"]: c for c in json.loads((DEMO / "calls.json").read_text())["calls"]}
    flags = json.loads((DEMO / "flags.json").read_text())["flags"]
    assert len(flags) >= 20
    for f in flags:
        line = calls[f["call"]]["lines"][f["position"]]
        assert line["speaker"] == "caller" and line["start_s"] is not None
        assert not scoring.score_line(f["expected_text"], line["text"]).match, f
        assert f["tags"] and f["flagged_after_h"] > 0


@pytest.mark.django_db
def test_it_loads_the_flags_over_every_tenant_and_several_weeks_with_their_work_queued(media):
    call_command("load_demo", no_runs=True)

    flags = list(Flag.objects.select_related("line__call__tenant", "bank"))
    assert len(flags) >= 20
    for (
        f
    ) in flags:  # a few calls' flags in the small streaming bank, the rest in the bank of real alternatives
        assert f.bank.name == ("Streaming" if f.line.call.external_id in STREAMING_CALLS else "English"), f
    assert len({f.line.call.tenant_id for f in flags}) == 3
    days = sorted(f.created_at for f in flags)
    assert (days[-1] - days[0]).days >= 35  # flagged over several weeks: the 30-day window leaves some out
    assert all(f.created_at > f.line.call.started_at for f in flags)
    assert {"name", "time", "spelling"} <= {t for f in flags for t in f.tag_list}
    assert any(t not in ("name", "time", "spelling") for f in flags for t in f.tag_list)  # own tags too
    assert not Score.objects.filter(
        source=Score.CANDIDATE
    ).exists()  # nothing invented: the queue computes it
    assert Transcription.objects.filter(status=Transcription.QUEUED).count() >= len(flags)
    assert not Run.objects.exists() and not BenchmarkRun.objects.exists()
    # The demo's vocabularies, each assistant's and one for all, and Whisper base with the latter in the English bank.
    from oncore.transcribers.models import Vocabulary

    assert Vocabulary.objects.filter(assistant__isnull=False).count() == 3
    english = next(f.bank for f in flags if f.bank.name == "English")
    with_vocabulary = english.candidates.get(transcriber__vocabulary__name="Names and menu").transcriber
    assert with_vocabulary.base.slug == "whisper-base" and "Siobhan O'Brien" in with_vocabulary.keyterms
    assert Transcription.objects.filter(transcriber=with_vocabulary, status=Transcription.QUEUED).exists()
    second = Line.objects.filter(flag__isnull=False).values_list("pk", flat=True)
    call_command("load_demo")  # already loaded: changes nothing
    assert list(Line.objects.filter(flag__isnull=False).values_list("pk", flat=True)) == list(second)


@pytest.mark.django_db
@pytest.mark.slow
def test_it_queues_a_full_call_run_and_the_benchmark_runs_of_the_local_engines(
    media, django_capture_on_commit_callbacks
):
    from django_q.models import OrmQ

    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo")

    run = Run.objects.get()
    assert (
        run.status == Run.QUEUED and run.candidate.slug == "whisper-base" and run.calls.count() == RUN_CALLS
    )
    # The live transcripts are what this machine's live transcriber hears: the run's calibration replays it.
    caller = list(
        Line.objects.filter(call__in=run.calls.all(), speaker=Line.CALLER, start_s__isnull=False)
        .select_related("call")
        .order_by("pk")
    )
    assert all(heard(line) == line.text for line in caller[:: len(caller) // 4])
    assert sorted(BenchmarkRun.objects.values_list("system_name", flat=True)) == [
        "pocketsphinx-en-us",
        "whisper-base",
        "whisper-tiny-en",
    ]
    assert CsRun.objects.count() == 3 and not CsRun.objects.exclude(status=CsRun.QUEUED).exists()
    queued = [task.func() for task in OrmQ.objects.all()]
    assert queued.count("benchmark.entity.tasks.run_benchmark") == 3
    assert queued.count("benchmark.codeswitch.tasks.run_codeswitch") == 3


@pytest.mark.django_db
@pytest.mark.slow
def test_the_demos_streaming_candidate_replays_its_lines_offline_and_its_card_shows_time_to_final(
    media, client, monkeypatch
):
    from oncore.transcribers.engines.streaming import session
    from transcriber_tests import actions
    from transcriber_tests.models import Bank
    from transcriber_tests.work import tasks

    monkeypatch.setattr(session, "SPEED", 10.0)  # not about pacing: the demo paces in real time
    call_command("load_demo", flags=0, no_runs=True)
    bank = Bank.objects.get(name="Streaming")
    assert "whisper-tiny-en-streaming" in bank.candidates.values_list("transcriber__slug", flat=True)
    spec = next(
        f for f in json.loads((DEMO / "flags.json").read_text())["flags"] if f["call"] in STREAMING_CALLS
    )
    line = Line.objects.get(call__external_id=spec["call"], position=spec["position"])
    actions.do_flag_line(line, spec["expected_text"], bank=bank, rng=random.Random(1))
    tasks.drain()

    streamed = Transcription.objects.filter(transcriber__slug="whisper-tiny-en-streaming")
    assert streamed.count() == 2  # the flag and its control, offline
    for t in streamed:
        assert (t.status, t.mode) == (Transcription.DONE, Transcription.STREAMING), t.error
        assert t.latency_s is not None and t.frames_sent and t.frames_off_schedule is not None
        assert t.final_segments is not None and t.finals_revised is not None
    client.login(username="demo-admin", password="demo-admin-pass")
    page = client.get(reverse("tt:bank", args=[bank.pk]), {"window": 90}).content.decode()
    assert "<dt>Time to final p50 / p95</dt>" in page and '<span class="muted">n=2</span>' in page
    assert "<dt>Time to first partial p50 / p95</dt>" in page and "<dt>Partial stability</dt>" in page
    assert "<dt>Latency p50 / p95</dt>" in page  # the batch candidates beside it
    # Whisper tiny.en is in the bank in both modes: the trust section compares them on the lines both scored.
    url = reverse("tt:bank_trust", args=[bank.pk])
    client.get(url, {"window": 90}, headers={"HX-Request": "true"})
    tasks.drain()
    trust = client.get(url, {"window": 90}, headers={"HX-Request": "true"}).content.decode()
    assert "tiny.en streamed against the same model in batch" in trust
