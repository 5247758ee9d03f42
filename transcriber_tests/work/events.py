"""The webhook events that the queue announces (what they are and their data: shapes/events.py; run.finished and
run.judge_failed are emitted in the transaction that ends a run, actions/runs.py run_ended):

- flag.scored: after every write of candidate scores, a queue task (tasks.announce_scores, asked for by
  actions/scores.py scores_written once the scores are committed) announces the flags on those lines that every
  candidate of their bank has scored, with the results the call page reads (queries.events.scored_flag, on
  queries.flag_results). The event's id comes from the scores, so a flag announced twice for the same scores is
  sent once.
- bank.leader_changed: the minutely pump checks the banks whose results changed (`check_leaders`); the first check
  after an organization subscribes announces each bank's leader with `previous_leader` null."""

import hashlib

from django.db import transaction

from oncore.webhooks import actions as webhooks

from ..queries import bank_results
from ..queries import events as reads
from ..queries.board import banks_of
from ..shapes import events


def _emit(organization_id, event_type, data, event_id=""):
    webhooks.emit(organization_id, event_type, data, event_id=event_id, encoder=events.ENCODER)


# ---------------------------------------------------------------- flag.scored


def announce_scores(line_ids) -> int:
    """Announce every flag in a bank, on these lines or with a control line on them, that all its bank's
    candidates have scored. Returns how many were complete."""
    return sum(_announce_flag(pk) for pk in reads.flags_on_lines(line_ids))


def _announce_flag(flag_id: int) -> bool:
    found = reads.scored_flag(flag_id)
    if found is None:
        return False
    flag = found.results.flag
    data = events.flag_scored_data(found.results, found.production)
    key = f"{events.FLAG_SCORED}:{flag.pk}:{found.fingerprint}"
    _emit(
        flag.organization_id, events.FLAG_SCORED, data, "evt_" + hashlib.sha256(key.encode()).hexdigest()[:32]
    )
    return True


# ---------------------------------------------------------------- bank.leader_changed


def check_leaders() -> int:
    """For each bank of an organization that wants bank.leader_changed, whose results changed since it was last
    checked: announce its leader if it is another than the one announced before. Returns the announcements."""
    org_ids = webhooks.organizations_wanting(events.LEADER_CHANGED)
    if not org_ids:
        return 0
    announced = 0
    for bank in reads.banks_to_check(org_ids):
        results = bank_results(bank)
        leader = results.leader.transcriber if results.leader else None
        with transaction.atomic():  # the leader recorded and its event stand or fall together
            before = webhooks.record_change(
                bank.organization_id, reads.leader_subject(bank.pk), str(leader.pk) if leader else ""
            )
            if before is None:
                continue
            data = events.leader_changed_data(
                banks_of(bank.organization_id).get(pk=bank.pk),
                leader,
                results.leader.summary.accuracy if leader else None,
                reads.transcriber(int(before)) if before else None,
                results.window_days,
            )
            _emit(bank.organization_id, events.LEADER_CHANGED, data)
        announced += 1
    return announced
