"""Transcriber testing's webhook events as they are sent: each event's type, what it says, and its `data` in the
shapes the API answers with (work/events.py and actions/runs.py emit them; oncore.webhooks signs and delivers).

- flag.scored: every candidate of the flag's bank has scored it (the flagged line and its control lines).
- bank.leader_changed: the bank's leader (over the default window) is another transcriber than the one last
  announced, or the first one.
- run.finished: a full-call run ended (done, failed or cancelled); run.judge_failed: its judge failed."""

from ninja import Field, Schema

from oncore.api import ApiJSONEncoder

from .banks import BankOut, bank_out
from .flags import FlagOut, flag_out
from .refs import TranscriberRef, transcriber_ref
from .runs import RunOut, run_out
from .turns import Cell, cell_out

FLAG_SCORED = "flag.scored"
LEADER_CHANGED = "bank.leader_changed"
RUN_FINISHED = "run.finished"
JUDGE_FAILED = "run.judge_failed"
ENCODER = ApiJSONEncoder  # what the events' data are written with, as the API writes its answers


class FlagScoredData(Schema):
    flag: FlagOut
    production: Cell | None = Field(description="The production transcript's cell of the flagged line.")
    candidates: list[Cell] = Field(
        description="Each candidate's cell of the flagged line, in candidate order."
    )


class LeaderChangedData(Schema):
    bank: BankOut
    leader: TranscriberRef | None = Field(
        description="The new leader; null when no candidate leads any more."
    )
    leader_accuracy: float | None
    previous_leader: TranscriberRef | None = Field(
        description="The leader announced before; null the first time the bank's leader is announced."
    )
    window_days: int = Field(description="The window the leader was ranked over (the default window).")


class RunEventData(Schema):
    run: RunOut = Field(description="The run, as GET /runs/{id} shows it.")


# What each event means and the Schema of its `data`, as oncore.webhooks registers them (apps.py).
EVENTS = (
    (FLAG_SCORED, "every candidate of the flag's bank scored the flag and its control lines", FlagScoredData),
    (
        LEADER_CHANGED,
        "another transcriber leads the bank (over the default window of days)",
        LeaderChangedData,
    ),
    (RUN_FINISHED, "a full-call run ended: done, failed or cancelled", RunEventData),
    (
        JUDGE_FAILED,
        "the judge of a full-call run failed (retry it with POST /runs/{id}/retry-judge)",
        RunEventData,
    ),
)


def as_api(schema, value) -> dict:
    """A value in exactly the shape the API answers with."""
    return schema.model_validate(value).model_dump()


def flag_scored_data(found, production) -> dict:
    """flag.scored's data: the flag with its line's cells (`found`: queries.flag_results' FlagResults of the flag,
    every candidate scored) and the production transcript's cell (`production`: a ScoreCell, or None)."""
    flagged = found.items[0]
    return {
        "flag": as_api(FlagOut, flag_out(found.flag)),
        "production": as_api(Cell, cell_out(production.transcriber_id, production)) if production else None,
        "candidates": [as_api(Cell, cell_out(c.transcriber.pk, c.score)) for c in flagged.cells],
    }


def leader_changed_data(bank, leader, leader_accuracy, previous, window_days: int) -> dict:
    """bank.leader_changed's data: the bank (a row of queries/board.py banks_of), its leader (a Transcriber, or None)
    and that leader's accuracy, the leader announced before (or None), and the window it was ranked over."""
    return {
        "bank": as_api(BankOut, bank_out(bank)),
        "leader": as_api(TranscriberRef, transcriber_ref(leader)) if leader else None,
        "leader_accuracy": leader_accuracy if leader else None,
        "previous_leader": as_api(TranscriberRef, transcriber_ref(previous)) if previous else None,
        "window_days": window_days,
    }


def run_event_data(run) -> dict:
    """run.finished's and run.judge_failed's data: the run, as GET /runs/{id} shows it."""
    return {"run": as_api(RunOut, run_out(run))}
