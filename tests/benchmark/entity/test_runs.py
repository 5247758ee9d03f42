"""Runs of catalogue transcribers over the fixture: a real Whisper tiny.en, and a real HTTP endpoint."""

import hashlib
import io
import threading

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmark import executor
from benchmark.entity import runs, tasks
from benchmark.models import BenchmarkRun, Hypothesis
from oncore.transcribers.engines import get_engine as real_get_engine


def _cmd(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


class CountingEngines:
    """Wraps the real engine: counts calls, remembers which audio was sent, can simulate Ctrl-C on call k."""

    def __init__(self, interrupt_on_call=None):
        self.interrupt_on_call = interrupt_on_call
        self.sent: list[str] = []
        self.calls = 0
        self.lock = threading.Lock()

    def get_engine(self, transcriber):
        engine = real_get_engine(transcriber)
        counter = self

        class Counted:
            def transcribe(self, wav, language=None):
                with counter.lock:
                    counter.calls += 1
                    if counter.calls == counter.interrupt_on_call:
                        raise KeyboardInterrupt
                    counter.sent.append(hashlib.sha256(wav).hexdigest())
                return engine.transcribe(wav, language=language)

        return Counted()


@pytest.mark.slow
def test_it_transcribes_every_clip_with_whisper_tiny_and_shows_progress(dataset, whisper_tiny):
    out, err = _cmd("benchmark_run", "--dataset", dataset.name, "--transcriber", "whisper-tiny-en")

    run = BenchmarkRun.objects.get()
    assert (run.status, run.clips_total, run.clips_done, run.clips_failed) == ("done", 5, 5, 0)
    assert (run.system_name, run.model) == ("whisper-tiny-en", "tiny.en")
    assert run.started_at and run.finished_at
    text = run.hypotheses.get(clip__clip_id="bf-0001").text.lower()
    assert "moon" in text and "apollo 11" in text
    assert "5/5" in err and "[##############################]" in err
    assert f"Run {run.pk} done: 5 done, 0 failed, 0 left; 5 clip(s) sent this time." in out


@pytest.mark.slow
def test_it_resumes_an_interrupted_run_and_sends_only_the_remaining_clips(dataset, whisper_tiny, monkeypatch):
    first = CountingEngines(interrupt_on_call=3)
    monkeypatch.setattr(executor, "get_engine", first.get_engine)

    with pytest.raises(CommandError, match="Interrupted: run .* has 2 done, 0 failed, 3 left"):
        _cmd(
            "benchmark_run",
            "--dataset",
            dataset.name,
            "--transcriber",
            "whisper-tiny-en",
            "--concurrency",
            "1",
        )

    run = BenchmarkRun.objects.get()
    assert run.status == "stopped" and run.clips_done == 2
    assert Hypothesis.objects.filter(run=run, status="queued", attempts=0).count() == 3

    second = CountingEngines()
    monkeypatch.setattr(executor, "get_engine", second.get_engine)
    out, _ = _cmd("benchmark_run", "--dataset", dataset.name, "--transcriber", "whisper-tiny-en")

    assert f"Resuming run {run.pk}" in out
    assert len(first.sent) == 2 and len(second.sent) == 3
    assert not set(first.sent) & set(second.sent)
    run.refresh_from_db()
    assert (run.status, run.clips_done) == ("done", 5)
    assert BenchmarkRun.objects.count() == 1

    third = CountingEngines()
    monkeypatch.setattr(executor, "get_engine", third.get_engine)
    assert runs.execute_run(run.pk).sent == 0 and third.calls == 0


def test_it_records_failures_after_retrying_server_errors(dataset, endpoint, endpoint_transcriber):
    broken = endpoint_transcriber("broken", status=500)

    out, _ = _cmd(
        "benchmark_run", "--dataset", dataset.name, "--transcriber", broken.slug, "--concurrency", "3"
    )

    run = BenchmarkRun.objects.get()
    assert (run.status, run.clips_done, run.clips_failed) == ("done", 0, 5)
    assert len(endpoint.requests) == 5 * 3  # MAX_TRANSCRIPTION_ATTEMPTS = 3 in these tests
    failed = run.hypotheses.first()
    assert failed.attempts == 3 and "server error (500)" in failed.error
    assert "failed ml-0001:" in out and "--retry-failed" in out


def test_it_fails_at_once_on_an_error_that_retrying_cannot_fix(dataset, endpoint, endpoint_transcriber):
    rejecting = endpoint_transcriber("rejecting", status=400)

    outcome = runs.execute_run(runs.create_run(dataset, rejecting).pk)

    assert (outcome.failed, len(endpoint.requests)) == (5, 5)
    assert Hypothesis.objects.filter(attempts=1, error__contains="rejected the request (400)").count() == 5


def test_it_retries_failed_clips_on_request_and_keeps_the_done_ones(dataset, endpoint, endpoint_transcriber):
    flaky = endpoint_transcriber("flaky", status=500)
    run = runs.create_run(dataset, flaky)
    runs.execute_run(run.pk)
    endpoint.status["flaky"], endpoint.text["flaky"] = 200, "the epa met"
    endpoint.requests.clear()

    out, _ = _cmd(
        "benchmark_run",
        "--dataset",
        dataset.name,
        "--transcriber",
        flaky.slug,
        "--run",
        str(run.pk),
        "--retry-failed",
    )

    assert "Queued 5 failed clip(s)" in out and len(endpoint.requests) == 5
    run.refresh_from_db()
    assert (run.status, run.clips_done, run.clips_failed) == ("done", 5, 0)
    assert run.cost > 0


def test_it_stops_after_max_clips_with_progress_on_the_run(dataset, endpoint, endpoint_transcriber):
    ok = endpoint_transcriber("ok", text="hello")
    run = runs.create_run(dataset, ok)

    outcome = runs.execute_run(run.pk, max_clips=2)

    run.refresh_from_db()
    assert (outcome.status, outcome.sent, outcome.queued) == ("stopped", 2, 3)
    assert (run.clips_total, run.clips_done, run.clips_finished) == (5, 2, 2)


def test_it_runs_from_the_queue_safely_twice(
    dataset, endpoint, endpoint_transcriber, django_capture_on_commit_callbacks
):
    from django_q.models import OrmQ

    ok = endpoint_transcriber("ok", text="hello")
    with django_capture_on_commit_callbacks(execute=True):
        run = runs.start_run(dataset, ok)
    assert OrmQ.objects.count() == 1

    assert tasks.run_benchmark(run.pk) == "done"
    finished = BenchmarkRun.objects.get(pk=run.pk)
    assert (
        finished.scored_at is not None and finished.summary
    )  # scored once finished, as the Score button does
    assert tasks.run_benchmark(run.pk) == "done"

    assert len(endpoint.requests) == 5
    assert BenchmarkRun.objects.get(pk=run.pk).finished_at == finished.finished_at
    assert BenchmarkRun.objects.get(pk=run.pk).scored_at == finished.scored_at  # not scored twice
    assert Hypothesis.objects.filter(run=run, status="done", text="hello").count() == 5


def test_it_refuses_a_disabled_transcriber(dataset, endpoint_transcriber):
    off = endpoint_transcriber("off")
    off.enabled = False
    off.save(update_fields=["enabled"])

    with pytest.raises(CommandError, match="disabled in the catalogue"):
        _cmd("benchmark_run", "--dataset", dataset.name, "--transcriber", off.slug)
    assert not BenchmarkRun.objects.exists()


def test_it_hands_the_rest_of_a_long_run_to_a_new_queue_task(
    dataset, endpoint, endpoint_transcriber, monkeypatch
):
    from django_q.models import OrmQ

    run = runs.create_run(dataset, endpoint_transcriber("ok", text="hello"))
    monkeypatch.setattr(executor, "lease_seconds", lambda: 0)  # no time budget left after the first clip

    assert tasks.run_benchmark(run.pk) == "stopped"

    assert len(endpoint.requests) == 1 and OrmQ.objects.count() == 1
    assert BenchmarkRun.objects.get(pk=run.pk).clips_done == 1


def test_it_requeues_clips_a_dead_process_left_running(dataset, endpoint, endpoint_transcriber):
    from datetime import timedelta

    from django.utils import timezone

    run = runs.create_run(dataset, endpoint_transcriber("ok", text="hello"))
    abandoned = run.hypotheses.first()
    long_ago = timezone.now() - timedelta(seconds=executor.lease_seconds() + 1)
    Hypothesis.objects.filter(pk=abandoned.pk).update(status="running", claimed_at=long_ago, attempts=1)
    held = run.hypotheses.exclude(pk=abandoned.pk).first()
    Hypothesis.objects.filter(pk=held.pk).update(status="running", claimed_at=timezone.now(), attempts=1)

    outcome = runs.execute_run(run.pk)

    assert (outcome.sent, outcome.done, outcome.running, outcome.status) == (4, 4, 1, "running")
    assert Hypothesis.objects.get(pk=abandoned.pk).attempts == 2
    assert Hypothesis.objects.get(pk=held.pk).status == "running"  # another live process holds it
