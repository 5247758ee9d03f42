"""Writes to one bank from several connections at once (PostgreSQL: SQLite has one writer at a time). Changes to
items of different calls go on side by side up to adding to the totals; two changes on one call wait in turn (a
call's totals are read from all its items); a rebuild waits for a change in flight; and any mix of score writes and
flags made at once ends with no deadlock and totals a rebuild finds right."""

import random
import threading

import pytest
from django.db import OperationalError, connection, transaction

from oncore.calls.models import Call, Line
from tests.fixtures import save_recording
from transcriber_tests import actions, aggregates
from transcriber_tests.actions import controls, scores
from transcriber_tests.actions.synthetic import fill_bank
from transcriber_tests.models import Bank, Flag, Score, Transcription

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: writers on several connections at once (CI runs it)")


@pytest.fixture
def bank(org):
    """Eight flags on four calls, two to a call, each with one control; two candidates."""
    return fill_bank(org, flags=8, candidates=2, lines_per_call=4, name="Side")


def _flags_by_call(bank) -> dict[int, list[Flag]]:
    out = {}
    for flag in Flag.objects.filter(bank=bank).select_related("line").order_by("pk"):
        out.setdefault(flag.line.call_id, []).append(flag)
    return out


def _write(flag, transcriber_id, text, control=None):
    expected = control.expected_text if control else flag.expected_text
    scores.write_score(flag, control, transcriber_id, Score.CANDIDATE, text, expected)


class Holder(threading.Thread):
    """On its own connection, starts a change to a flag's item (aggregates.item_change: its call, the flag and the
    bank's share locked, its scores read) and stays in it until released."""

    def __init__(self, flag):
        super().__init__(daemon=True)
        self.flag = flag
        self.holding, self.release = threading.Event(), threading.Event()

    def run(self):
        try:
            with transaction.atomic(), aggregates.item_change(self.flag.pk):
                self.holding.set()
                self.release.wait(20)
        finally:
            connection.close()

    def __enter__(self):
        self.start()
        assert self.holding.wait(20)
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.join(20)


def _within(seconds: float, write) -> None:
    """Run `write` in a transaction that gives up waiting for a lock after `seconds`."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL lock_timeout = '{int(seconds * 1000)}ms'")
        write()


def _on_own_connection(work, errors: list) -> threading.Thread:
    """A thread that runs `work` on its own connection, any exception it raises kept in `errors` (for the test
    to report)."""

    def run():
        try:
            work()
        except Exception as exc:  # noqa: BLE001 (reported by the test)
            errors.append(repr(exc))
        finally:
            connection.close()

    return threading.Thread(target=run)


def test_score_writes_on_two_calls_of_one_bank_do_not_wait_for_each_other(bank):
    candidate = bank.candidates.first().transcriber_id
    first, second = list(_flags_by_call(bank).values())[:2]
    with Holder(first[0]):
        _within(2, lambda: _write(second[0], candidate, "written meanwhile"))  # raises if it waited 2 s
    assert not aggregates.rebuild([bank.pk], fix=False).any


def test_two_score_writes_on_one_call_go_in_turn(bank):
    candidate = bank.candidates.first().transcriber_id
    flags = next(iter(_flags_by_call(bank).values()))
    with Holder(flags[0]):
        with pytest.raises(OperationalError, match="lock timeout"):
            _within(0.3, lambda: _write(flags[1], candidate, "waits for the call"))
        with pytest.raises(OperationalError, match="lock timeout"):
            _within(0.3, lambda: aggregates.rebuild([bank.pk]))  # a rebuild waits for a write in flight
    _write(flags[1], candidate, "written after")
    assert not aggregates.rebuild([bank.pk], fix=False).any


def test_writes_and_flags_at_once_end_with_right_totals(bank, org):
    """Four connections write candidate scores on random items and flag lines of the same calls (a flag retires
    the control it stands on, drawing another), all at once: none fails, and the totals equal a rebuild's."""
    candidates = list(bank.candidates.values_list("transcriber_id", flat=True))
    calls = list(_flags_by_call(bank))
    for call in Call.objects.filter(pk__in=calls):
        save_recording(call, 30)
    spare = [
        Line.objects.create(
            call_id=call, position=10 + k, speaker="caller", text="table for two", start_s=0, end_s=2
        )
        for call in calls
        for k in range(3)
    ]
    aggregates.rebuild([bank.pk])  # the calls' line counters, with the lines made here
    errors = []

    def writer(seed):
        rng = random.Random(seed)
        for _ in range(12):
            if rng.random() < 0.2 and spare:
                line = spare.pop()
                actions.do_flag_line(line, "table for three", bank=bank)
                continue
            flag = rng.choice(list(Flag.objects.filter(bank=bank)))
            with transaction.atomic():
                # As the queue scores a line: its call locked, then its items read (a flag made on the call
                # meanwhile retires the control it stands on).
                aggregates.lock_call(flag=flag.pk)
                control = rng.choice([None, *flag.controls.all()])
                _write(flag, rng.choice(candidates), rng.choice(["table for four", "table", None]), control)

    threads = [_on_own_connection(lambda seed=seed: writer(seed), errors) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    drift = aggregates.rebuild([bank.pk], fix=False)
    assert not drift.any, drift.examples


def test_a_line_scored_while_a_flag_retires_its_control_scores_what_is_left(bank, org):
    """A transcription finishes on a control's line while an admin flags that line (the flag retires the control,
    holding the call): the score waits for the flag, then scores the items the line has now, and does not fail
    on the control that is gone."""
    flag = Flag.objects.filter(bank=bank).order_by("pk").first()
    control = flag.controls.select_related("line").first()
    candidate = bank.candidates.values_list("transcriber_id", flat=True).first()
    save_recording(control.line.call, 30)
    done, _ = Transcription.objects.update_or_create(
        line=control.line,
        transcriber_id=candidate,
        defaults={"organization": org, "status": Transcription.DONE, "text": "table"},
    )
    locked, release, errors = threading.Event(), threading.Event(), []

    def flag_the_control():
        with transaction.atomic():
            aggregates.lock_call(line=control.line_id)  # the flag POST holds the call from here
            locked.set()
            release.wait(10)
            actions.do_flag_line(control.line, "table for three", bank=bank)

    def score_the_line():
        with transaction.atomic():
            scores.score_transcription(done)

    flagging = _on_own_connection(flag_the_control, errors)
    flagging.start()
    assert locked.wait(10)
    scoring = _on_own_connection(score_the_line, errors)
    scoring.start()
    scoring.join(0.5)  # it waits for the call
    release.set()
    flagging.join(20)
    scoring.join(20)
    assert errors == []
    assert not Score.objects.filter(control_id=control.pk).exists()
    assert (
        Score.objects.get(flag__line=control.line, control=None, transcriber_id=candidate).hypothesis
        == "table"
    )
    assert not aggregates.rebuild([bank.pk], fix=False).any


def test_drawing_controls_again_while_a_call_is_being_scored_ends_without_a_deadlock(bank):
    """An admin draws the bank's controls again (its setting changed) while a line of one of its calls is being
    scored (the call held): the redraw waits for that call before it takes the bank's row, so the score goes
    through and the redraw after it, where the redraw used to hold the bank's row while waiting for the call and
    the score the call while waiting for the bank's row, until PostgreSQL ended one of them as a deadlock."""
    flag = Flag.objects.filter(bank=bank).order_by("pk").first()
    candidate = bank.candidates.values_list("transcriber_id", flat=True).first()
    Bank.objects.filter(pk=bank.pk).update(controls_per_flag=2)
    bank.refresh_from_db()
    holding, go_on, errors = threading.Event(), threading.Event(), []

    def score_a_line():
        with transaction.atomic():
            aggregates.lock_call(flag=flag.pk)  # as the queue scores a line: its call first
            holding.set()
            go_on.wait(10)
            _write(flag, candidate, "table for four")

    scoring = _on_own_connection(score_a_line, errors)
    scoring.start()
    assert holding.wait(10)
    drawing = _on_own_connection(lambda: controls.do_redraw(bank, confirmed=True), errors)
    drawing.start()
    drawing.join(0.5)  # it waits for the call the score holds
    go_on.set()
    scoring.join(20)
    drawing.join(20)
    assert errors == []
    assert Score.objects.get(flag=flag, control=None, transcriber_id=candidate).hypothesis == "table for four"
    assert not aggregates.rebuild([bank.pk], fix=False).any
