"""Faults: vendors that time out, rate-limit, fail or answer garbage; a worker killed mid-task; a task the broker
lost; the LLM failing mid-run; the database restarting under a running queue. Each time nothing is lost: every
line transcription ends done or failed, and every affected item ends scored (or marked failed), exactly once."""

# ruff: noqa: F811 (tests take the imported fixtures as parameters)

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone

from oncore.transcribers.models import Transcriber
from tests.llm_server import error
from tests.transcriber_tests.support import scripted_judge
from tests.transcribers.vendor_servers import FakeGeneric
from transcriber_tests import actions, handles, judge
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Run, Score, Transcription
from transcriber_tests.queries import runs as run_queries
from transcriber_tests.work import jobs, replay, tasks
from transcriber_tests.work import tasks as run_tasks

SAID = "Siobhan, table for four at eight thirty"
VENDOR_ENV = "ONCORE_HARDENING_FAULTY_KEY"


@pytest.fixture
def faulty(monkeypatch):
    """A generic vendor whose scenario each test sets."""
    with FakeGeneric(transcript=SAID) as server:
        monkeypatch.setenv(VENDOR_ENV, server.key)
        server.slow_s = 1.0
        yield server


def vendor_transcriber(server, **options) -> Transcriber:
    return Transcriber.objects.create(
        slug="faulty",
        provider=Transcriber.GENERIC,
        model="faulty",
        display_name="Faulty vendor",
        price_per_minute="0.006",
        api_key_env=VENDOR_ENV,
        options={"url": f"{server.base_url}/transcribe", "json_path": "result.transcript", **options},
    )


def flag_with_controls(org, call, candidates, positions=(0,), controls_per_flag=1):
    bank = actions.do_create_bank(org, name="Faults", controls_per_flag=controls_per_flag)
    for t in candidates:
        actions.do_add_candidate(bank, t, confirmed=True)
    flags = [actions.do_flag_line(call.lines.get(position=p), SAID, bank=bank) for p in positions]
    return bank, flags


def items_of(flags):
    """(flag, control or None) for every scored item of the flags."""
    return [(f, None) for f in flags] + [(f, c) for f in flags for c in f.controls.all()]


def assert_every_item_scored_once(flags, transcriber, *, failed):
    for flag, control in items_of(flags):
        scores = Score.objects.filter(
            flag=flag, control=control, transcriber=transcriber, source=Score.CANDIDATE
        )
        assert scores.count() == 1, (flag, control)
        assert scores.get().failed is failed


def assert_nothing_stuck():
    stuck = Transcription.objects.filter(status__in=Transcription.ACTIVE)
    assert not stuck.exists(), list(stuck.values("pk", "status", "claimed_at", "not_before"))


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("scenario", "options", "attempts", "message"),
    [
        ("slow", {"timeout_s": 0.2}, 3, "did not answer within 0.2 s"),
        ("500", {}, 3, "server error (500)"),
        ("503", {}, 3, "server error (503)"),
        ("malformed", {}, 1, "not JSON"),
    ],
    ids=["timeout", "500", "503", "malformed-json"],
)
def test_it_ends_every_line_failed_and_every_item_scored_failed_when_a_vendor_keeps_failing(
    org, recorded_call, make_transcriber, faulty, settings, scenario, options, attempts, message
):
    settings.ONCORE = {**settings.ONCORE, "MAX_TRANSCRIPTION_ATTEMPTS": 3}
    faulty.scenario = scenario
    bad = vendor_transcriber(faulty, **options)
    good = make_transcriber("good", SAID)
    _, flags = flag_with_controls(org, recorded_call, [bad, good])

    tasks.drain()

    assert_nothing_stuck()
    lines = 2  # the flagged line and its control line
    failed = Transcription.objects.filter(transcriber=bad)
    assert failed.count() == lines and set(failed.values_list("status", flat=True)) == {Transcription.FAILED}
    assert all(t.attempts == attempts and message in t.error for t in failed)
    assert len(faulty.requests) == lines * attempts  # retried only what retrying can fix
    assert_every_item_scored_once(flags, bad, failed=True)
    assert_every_item_scored_once(flags, good, failed=False)  # the healthy candidate is unaffected


@pytest.mark.django_db
def test_it_waits_what_a_429_asks_then_finishes_the_line_when_the_vendor_recovers(org, recorded_call, faulty):
    faulty.scenario, faulty.retry_after = "429", "7"
    bad = vendor_transcriber(faulty)
    _, flags = flag_with_controls(org, recorded_call, [bad])
    before = timezone.now()

    tasks.drain()

    waiting = Transcription.objects.filter(transcriber=bad)
    assert set(waiting.values_list("status", flat=True)) == {Transcription.QUEUED}  # waiting, not lost
    assert all(t.not_before >= before + timedelta(seconds=7) for t in waiting)  # Retry-After is honoured
    assert all("rate limiting requests (429)" in t.error and t.attempts == 1 for t in waiting)
    assert tasks.drain() == 0  # nothing is sent again before the vendor's wait is over

    faulty.scenario = "ok"
    waiting.update(not_before=timezone.now() - timedelta(seconds=1))  # the seven seconds have passed
    tasks.drain()

    assert_nothing_stuck()
    assert set(waiting.values_list("status", flat=True)) == {Transcription.DONE}
    assert_every_item_scored_once(flags, bad, failed=False)


@pytest.mark.django_db
def test_it_marks_the_line_failed_when_a_vendor_keeps_answering_429(org, recorded_call, faulty, settings):
    settings.ONCORE = {**settings.ONCORE, "MAX_TRANSCRIPTION_ATTEMPTS": 3}
    faulty.scenario, faulty.retry_after = "429", "0"
    bad = vendor_transcriber(faulty)
    _, flags = flag_with_controls(org, recorded_call, [bad])

    tasks.drain()

    assert_nothing_stuck()
    assert set(Transcription.objects.values_list("status", "attempts")) == {(Transcription.FAILED, 3)}
    assert_every_item_scored_once(flags, bad, failed=True)


@pytest.mark.django_db
def test_it_finishes_a_task_exactly_once_when_its_worker_dies_mid_task(org, recorded_call, make_transcriber):
    good = make_transcriber("good", SAID)
    _, flags = flag_with_controls(org, recorded_call, [good], controls_per_flag=0)
    handles.pump(org.pk)
    row = Transcription.objects.get()
    assert row.status == Transcription.RUNNING

    dead = jobs.claim(row.pk)  # a worker claims the row, then dies before finishing
    assert dead is not None
    assert tasks.transcribe(row.pk) == "skipped"  # redelivered within the lease: the claim is respected
    Transcription.objects.filter(pk=row.pk).update(
        claimed_at=timezone.now() - timedelta(seconds=jobs.lease_seconds() + 1)
    )

    assert tasks.transcribe(row.pk) == "done"  # redelivered after the lease: taken over and finished
    assert tasks.transcribe(row.pk) == "skipped"  # a third delivery does nothing
    assert jobs.finish(dead, status=Transcription.DONE, text="stale") is False  # the dead worker's late write
    row.refresh_from_db()
    assert (row.status, row.text, row.attempts) == (Transcription.DONE, SAID, 2)
    assert_every_item_scored_once(flags, good, failed=False)
    assert Score.objects.filter(source=Score.CANDIDATE).count() == 1  # no duplicate


@pytest.mark.django_db
def test_it_requeues_and_finishes_a_task_the_broker_lost(org, recorded_call, make_transcriber):
    good = make_transcriber("good", SAID)
    _, flags = flag_with_controls(org, recorded_call, [good], positions=(0, 2), controls_per_flag=0)
    handles.pump(org.pk)
    lost, recent = Transcription.objects.order_by("pk")
    long_ago = timezone.now() - timedelta(seconds=2 * int(django_settings.Q_CLUSTER["retry"]) + 5)
    Transcription.objects.filter(pk=lost.pk).update(claimed_at=long_ago, updated_at=long_ago)
    Transcription.objects.filter(pk=recent.pk).update(claimed_at=timezone.now())  # a live worker holds it

    assert jobs.recover_abandoned() == 1
    lost.refresh_from_db()
    recent.refresh_from_db()
    assert (lost.status, lost.claimed_at) == (Transcription.QUEUED, None)
    assert recent.status == Transcription.RUNNING and recent.claimed_at is not None  # left to its worker

    tasks.drain()
    lost.refresh_from_db()
    assert lost.status == Transcription.DONE
    Transcription.objects.filter(pk=recent.pk).update(claimed_at=None)  # its worker's delivery arrives
    tasks.transcribe(recent.pk)
    assert_nothing_stuck()
    assert_every_item_scored_once(flags, good, failed=False)


class WorkerKilled(BaseException):
    """Stands for the worker process dying: nothing after it runs."""


@pytest.mark.django_db
def test_it_requeues_a_row_whose_worker_died_after_going_on_to_it_by_itself(
    settings, org, recorded_call, make_transcriber, monkeypatch
):
    settings.ONCORE = {**settings.ONCORE, "ORG_CONCURRENCY": 1}
    good = make_transcriber("good", SAID)
    _, flags = flag_with_controls(org, recorded_call, [good], positions=(0, 2), controls_per_flag=0)
    first, second = Transcription.objects.order_by("pk")
    assert handles.pump(org.pk) == [first.pk]
    real = replay.transcribe_claimed

    def dies_on_the_second_row(t):
        if t.pk == second.pk:
            raise WorkerKilled
        return real(t)

    monkeypatch.setattr(replay, "transcribe_claimed", dies_on_the_second_row)
    with pytest.raises(WorkerKilled):
        tasks.transcribe(first.pk)  # finishes its row, goes on to the second by itself, and dies there
    monkeypatch.setattr(replay, "transcribe_claimed", real)
    second.refresh_from_db()
    assert second.status == Transcription.RUNNING and second.claimed_at is not None
    assert tasks.transcribe(first.pk) == "skipped"  # the broker delivers the first task again: nothing to do
    assert jobs.recover_abandoned() == 0  # within the lease the claim is respected
    Transcription.objects.filter(pk=second.pk).update(
        claimed_at=timezone.now() - timedelta(seconds=jobs.lease_seconds() + 1)
    )
    assert jobs.recover_abandoned() == 1  # no task will bring the second row again: it is queued again
    tasks.drain()
    assert_nothing_stuck()
    assert_every_item_scored_once(flags, good, failed=False)
    assert Transcription.objects.get(pk=second.pk).attempts == 2


def label_requests(server) -> int:
    return sum(1 for b in server.bodies if b["tool_choice"]["name"] == judge.LABEL_TOOL_NAME)


@pytest.mark.django_db
def test_it_keeps_transcriptions_and_comparisons_when_the_llm_fails_mid_run_and_retries_the_judge(
    run_setup, llm_server, settings
):
    settings.ANTHROPIC_MAX_RETRIES = 0
    bank, cand, call_a, call_b = run_setup
    labels = []

    def fails_after_the_first_label_request(body):  # the first call's two lines, labelled in one request
        if body["tool_choice"]["name"] == judge.LABEL_TOOL_NAME:
            labels.append(body)
            if len(labels) > 1:
                return error(500, "Internal server error")
        return scripted_judge(body)

    llm_server.responder = fails_after_the_first_label_request
    run = run_actions.do_start_run(bank, [call_a.pk, call_b.pk], confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE

    run.refresh_from_db()
    assert run.judge_status == Run.JUDGE_FAILED
    assert run.judge_error.startswith("The judge failed: the judge's service failed (500)")
    assert "Labels so far are kept; 2 differing lines left unlabelled. Retry the judge" in run.judge_error
    summary = run_queries.run_summary(run)
    assert summary.compared == 7 and summary.unlabelled == 2  # every comparison is kept
    assert summary.transcriptions == summary.transcriptions_finished == 14
    assert not Transcription.objects.filter(status__in=Transcription.ACTIVE).exists()
    kept = dict(run.lines.exclude(label="").values_list("pk", "label"))

    llm_server.responder = scripted_judge
    asked_before = label_requests(llm_server)
    run_actions.do_retry_judge(run)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == Run.DONE

    run.refresh_from_db()
    assert run.judge_status == Run.JUDGE_DONE and run.judge_error == "" and run.verdict
    assert run_queries.run_summary(run).unlabelled == 0
    assert label_requests(llm_server) - asked_before == 1  # only the lines left unlabelled, in one request
    assert dict(run.lines.filter(pk__in=kept).values_list("pk", "label")) == kept
    assert Transcription.objects.filter(transcriber=cand).count() == 7  # nothing transcribed twice


def _terminate_other_backends() -> int:
    """From a second connection, end every other session on the test database (what a restart does to them)."""
    import psycopg

    s = connection.settings_dict
    with psycopg.connect(
        host=s["HOST"] or None,
        port=s["PORT"] or None,
        user=s["USER"] or None,
        password=s["PASSWORD"] or None,
        dbname=s["NAME"],
        autocommit=True,
    ) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return sum(1 for (ended,) in rows if ended)


@pytest.mark.django_db(transaction=True)
def test_it_resumes_the_queue_after_the_database_drops_its_connections(
    org, recorded_call, make_transcriber, monkeypatch
):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL to terminate server connections (CI runs the suite on PostgreSQL)")
    one, two = make_transcriber("one", SAID), make_transcriber("two", SAID)
    _, flags = flag_with_controls(org, recorded_call, [one, two], positions=(0, 2, 4, 6), controls_per_flag=0)
    assert Transcription.objects.count() == 8

    real_get_engine = replay.get_engine
    sent, ended = [], []

    def engine_that_restarts_the_database_on_the_third_call(transcriber):
        engine = real_get_engine(transcriber)

        class Engine:
            def transcribe(self, wav, language=None):
                result = engine.transcribe(wav, language=language)
                sent.append(transcriber.pk)
                if len(sent) == 3:
                    ended.append(_terminate_other_backends())  # mid-task: after the vendor, before the write
                return result

        return Engine()

    monkeypatch.setattr(replay, "get_engine", engine_that_restarts_the_database_on_the_third_call)
    tasks.drain()  # the task whose connection died opens a new one and writes its result; the queue carries on
    assert ended and ended[0] >= 1

    assert set(Transcription.objects.values_list("status", flat=True)) == {Transcription.DONE}
    for t in (one, two):
        assert_every_item_scored_once(flags, t, failed=False)
    assert (
        len(sent) == 8
    )  # no line sent to a vendor twice: the result in hand when the connection died was kept
