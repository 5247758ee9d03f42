"""What a streaming session records of its partials and when (issue 37, item 3): the head latency (time to first
partial, from the start of the caller's speech), how many final segments differ from the last partial shown for
their segment, and the revisions of partials, from what the transcriber sent and when."""

import time

import pytest

from oncore.transcribers.engines.streaming import session
from oncore.transcribers.engines.streaming.session import Heard, Pacer, figures


def test_it_counts_finals_that_differ_from_their_last_partial():
    heard = Heard(time.perf_counter())
    heard.partial("table")
    heard.partial("table for")
    heard.final("table for")  # as shown: not revised
    heard.partial("at eight")
    heard.partial("at 830")  # a partial revised
    heard.final("at eight thirty")  # differs from the partial shown
    heard.final("")  # no text: no segment
    assert (len(heard.finals), heard.finals_revised, heard.revisions) == (2, 1, 2)


def test_a_final_with_no_partial_before_it_is_not_a_revision():
    heard = Heard(time.perf_counter())
    heard.final("hello there")
    assert (len(heard.finals), heard.finals_revised) == (1, 0)


class Clock:
    """time.perf_counter as the test sets it."""

    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def timed_session(monkeypatch, events, speed=1.0):
    """A session whose transcriber sent `events` ((seconds after t0, "partial" or "final", text)), its frames
    sent on schedule from t0 = 100 s."""
    clock = Clock(100.0)
    monkeypatch.setattr(session.time, "perf_counter", clock)
    pacer = Pacer(0.02, speed, offsets_ms=[0.0] * 100, t0=100.0)
    heard = Heard(100.0)
    for at, kind, text in events:
        clock.now = 100.0 + at
        getattr(heard, kind)(text)
    return heard, pacer


def test_time_to_first_partial_counts_from_the_start_of_the_callers_speech(monkeypatch):
    heard, pacer = timed_session(
        monkeypatch,
        [(0.42, "partial", "table"), (0.61, "partial", "table for two"), (1.30, "final", "table for two")],
    )
    found = figures(
        heard, pacer, speech_start_s=0.3, speech_end_s=1.0, sample_rate=8000, opened_at=99.9, ended_at=101.4
    )
    assert found.first_partial_s == 0.42  # from the first frame
    assert found.time_to_first_partial_s == 0.12  # from the caller's first word, 0.3 s in
    assert found.time_to_final_s == 0.3 and found.speech_start_s == 0.3


def test_text_from_the_margin_before_the_line_is_not_the_head(monkeypatch):
    # The clip opens with the other party's last words (the margin before the line): text heard from them comes
    # before the caller starts, and the head latency is the first text after the caller's start.
    heard, pacer = timed_session(
        monkeypatch,
        [
            (0.05, "partial", "okay"),
            (0.2, "final", "okay"),
            (0.9, "partial", "my order"),
            (1.6, "final", "my order"),
        ],
    )
    found = figures(
        heard, pacer, speech_start_s=0.5, speech_end_s=1.2, sample_rate=8000, opened_at=100.0, ended_at=101.7
    )
    assert found.first_partial_s == 0.05 and found.time_to_first_partial_s == 0.4


def test_the_head_latency_follows_the_pacings_speed(monkeypatch):
    # At twice real time the caller's start (1 s into the clip) is heard 0.5 s after t0.
    heard, pacer = timed_session(monkeypatch, [(0.7, "partial", "hello"), (1.5, "final", "hello")], speed=2.0)
    found = figures(
        heard, pacer, speech_start_s=1.0, speech_end_s=2.0, sample_rate=8000, opened_at=100.0, ended_at=101.6
    )
    assert found.time_to_first_partial_s == 0.2 and found.time_to_final_s == 0.5


def test_a_line_that_gave_no_text_after_the_caller_started_has_no_head_latency(monkeypatch):
    heard, pacer = timed_session(monkeypatch, [(0.1, "final", "okay")])
    found = figures(
        heard, pacer, speech_start_s=0.5, speech_end_s=1.0, sample_rate=8000, opened_at=100.0, ended_at=101.0
    )
    assert found.time_to_first_partial_s is None and found.first_partial_s == 0.1


@pytest.mark.parametrize(
    ("given", "held"), [(None, 0.0), (-0.2, 0.0), (0.4, 0.4), (9.0, 1.5), (float("nan"), 0.0)]
)
def test_the_speech_start_is_held_inside_the_clip(given, held):
    assert session.speech_start_within(given, 1.5) == held
