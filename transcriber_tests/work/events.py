"""Transcriber testing's webhook events: registered with oncore.webhooks when the app is ready (apps.py), emitted
where they happen. Each event's `data` carries the objects in the shapes the API answers with.

- flag.scored: every candidate of the flag's bank has scored it (the flagged line and its control lines). Asked
  after every write of candidate scores (`scores_written`, beside the judge's picks) by a queue task, once the
  scores are committed; the event's id comes from the scores, so a flag announced twice for the same scores
  is sent once.
- bank.leader_changed: the bank's leader (over the default window) is another transcriber than the one last
  announced, or the first one. The minutely pump checks the banks whose results changed (`check_leaders`); the
  first check after an organization subscribes announces each bank's leader with `previous_leader` null.
- run.finished: a full-call run ended (done, failed or cancelled); run.judge_failed: its judge failed. Emitted
  in the transaction that ends it (`run_ended`)."""

import hashlib

from django.db import transaction
from ninja import Field, Schema

from oncore import queue
from oncore.api import ApiJSONEncoder
from oncore.transcribers.models import Transcriber
from oncore.webhooks import actions as webhooks
from oncore.webhooks.models import EventState

from ..lib import cells
from ..models import Bank, ControlLine, Flag, Run, Score
from ..queries import bank_results
from ..shapes.banks import BankOut, bank_out, banks_of
from ..shapes.flags import FlagOut, flag_out
from ..shapes.refs import TranscriberRef, transcriber_ref
from ..shapes.runs import RunOut, run_out
from ..shapes.turns import Cell, cell_out
from . import jobs

FLAG_SCORED = "flag.scored"
LEADER_CHANGED = "bank.leader_changed"
RUN_FINISHED = "run.finished"
JUDGE_FAILED = "run.judge_failed"
# tasks.announce_scores(line_ids), bound by the app's ready(): it imports this module.
SCORES_TASK = queue.Task("announces the flags scored on some lines", group=jobs.GROUP)


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


webhooks.register_events(
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


def _emit(organization_id, event_type, data, event_id=""):
    webhooks.emit(organization_id, event_type, data, event_id=event_id, encoder=ApiJSONEncoder)


def _cell_of(score):
    return None if score is None else cells.of_score(score)


def _as_api(schema, value) -> dict:
    """A value in exactly the shape the API answers with."""
    return schema.model_validate(value).model_dump()


# ---------------------------------------------------------------- flag.scored


def scores_written(organization_id: int, line_ids) -> None:
    """Candidate scores were written on these lines: once that commits, a task announces the flags they
    finished (nothing when no endpoint wants flag.scored)."""
    ids = sorted(set(line_ids))
    if ids and webhooks.wants(organization_id, FLAG_SCORED):
        SCORES_TASK.later(ids)


def announce_scores(line_ids) -> int:
    """Announce every flag in a bank, on these lines or with a control line on them, that all its bank's
    candidates have scored. Returns how many were complete."""
    flag_ids = set(Flag.objects.filter(line_id__in=line_ids, bank__isnull=False).values_list("pk", flat=True))
    flag_ids |= set(
        ControlLine.objects.filter(line_id__in=line_ids, flag__bank__isnull=False).values_list(
            "flag_id", flat=True
        )
    )
    return sum(_announce_flag(pk) for pk in sorted(flag_ids))


def _announce_flag(flag_id: int) -> bool:
    flag = Flag.objects.select_related("line__call__tenant", "bank").filter(pk=flag_id).first()
    if flag is None or flag.bank_id is None:
        return False
    candidate_ids = list(flag.bank.candidates.order_by("position").values_list("transcriber_id", flat=True))
    scores = list(
        Score.objects.filter(flag=flag, source=Score.CANDIDATE, transcriber_id__in=candidate_ids).order_by(
            "pk"
        )
    )
    if not candidate_ids or len(scores) < len(candidate_ids) * (1 + flag.controls.count()):
        return False
    mine = {s.transcriber_id: s for s in scores if s.control_id is None}
    production = Score.objects.filter(flag=flag, control__isnull=True, source=Score.LIVE).first()
    data = {
        "flag": _as_api(FlagOut, flag_out(flag)),
        "production": _as_api(Cell, cell_out(production.transcriber_id, cells.of_score(production)))
        if production
        else None,
        "candidates": [_as_api(Cell, cell_out(tid, _cell_of(mine.get(tid)))) for tid in candidate_ids],
    }
    fingerprint = ";".join(f"{s.pk}:{s.scored_at.isoformat()}" for s in scores)
    event_id = "evt_" + hashlib.sha256(f"{FLAG_SCORED}:{flag.pk}:{fingerprint}".encode()).hexdigest()[:32]
    _emit(flag.organization_id, FLAG_SCORED, data, event_id)
    return True


# ---------------------------------------------------------------- bank.leader_changed


def _subject(bank_id: int) -> str:
    return f"bank:{bank_id}:leader"


def check_leaders() -> int:
    """For each bank of an organization that wants bank.leader_changed, whose results changed since it was last
    checked: announce its leader if it is another than the one announced before. Returns the announcements."""
    org_ids = webhooks.organizations_wanting(LEADER_CHANGED)
    if not org_ids:
        return 0
    checked = {
        (s.organization_id, s.subject): s.checked_at
        for s in EventState.objects.filter(organization_id__in=org_ids, subject__startswith="bank:")
    }
    announced = 0
    for bank in Bank.objects.filter(organization_id__in=org_ids).order_by("pk"):
        last = checked.get((bank.organization_id, _subject(bank.pk)))
        if last is not None and last >= bank.results_changed_at:
            continue
        results = bank_results(bank)
        leader = results.leader.transcriber if results.leader else None
        with transaction.atomic():  # the leader recorded and its event stand or fall together
            before = webhooks.record_change(
                bank.organization_id, _subject(bank.pk), str(leader.pk) if leader else ""
            )
            if before is None:
                continue
            previous = Transcriber.objects.filter(pk=int(before)).first() if before else None
            _emit(
                bank.organization_id,
                LEADER_CHANGED,
                {
                    "bank": _as_api(BankOut, bank_out(banks_of(bank.organization_id).get(pk=bank.pk))),
                    "leader": _as_api(TranscriberRef, transcriber_ref(leader)) if leader else None,
                    "leader_accuracy": results.leader.summary.accuracy if leader else None,
                    "previous_leader": _as_api(TranscriberRef, transcriber_ref(previous))
                    if previous
                    else None,
                    "window_days": results.window_days,
                },
            )
        announced += 1
    return announced


# ---------------------------------------------------------------- full-call runs


def run_ended(run_id: int) -> None:
    """A run just ended (or its judge just failed): run.finished, and run.judge_failed when its judge failed."""
    run = Run.objects.filter(pk=run_id).select_related("candidate").first()
    if run is None:
        return
    wanted = [
        event
        for event, due in (
            (RUN_FINISHED, run.status in (Run.DONE, Run.FAILED, Run.CANCELLED)),
            (JUDGE_FAILED, run.judge_status == Run.JUDGE_FAILED),
        )
        if due and webhooks.wants(run.organization_id, event)
    ]
    if not wanted:
        return
    data = {"run": _as_api(RunOut, run_out(run))}
    for event in wanted:
        _emit(run.organization_id, event, data)
