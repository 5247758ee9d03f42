"""What the webhook events read (work/events.py sends them): the flags on some lines that every candidate of their
bank has scored, with their results as the call page reads them (flags.flag_results), and the banks whose leader
may have changed since it was last announced."""

from dataclasses import dataclass

from oncore.transcribers.models import Transcriber
from oncore.webhooks.models import EventState

from ..lib import cells
from ..lib.cells import ScoreCell
from ..models import Bank, ControlLine, Flag, Score
from .flags import FlagResults, flag_results


def flags_on_lines(line_ids) -> list[int]:
    """The flags in a bank on these lines, or with a control line on them, in id order."""
    flag_ids = set(Flag.objects.filter(line_id__in=line_ids, bank__isnull=False).values_list("pk", flat=True))
    flag_ids |= set(
        ControlLine.objects.filter(line_id__in=line_ids, flag__bank__isnull=False).values_list(
            "flag_id", flat=True
        )
    )
    return sorted(flag_ids)


@dataclass(frozen=True)
class ScoredFlag:
    results: FlagResults  # flag_results of the flag: its line's cells first
    production: ScoreCell | None  # the production transcript's cell of the flagged line
    fingerprint: str  # its candidate scores, ids and times: the same scores give the same event


def scored_flag(flag_id: int) -> ScoredFlag | None:
    """A flag in a bank that every candidate of the bank has scored (its line and its control lines); None until
    then, or when it is in no bank."""
    flag = Flag.objects.select_related("line__call__tenant", "bank").filter(pk=flag_id).first()
    if flag is None or flag.bank_id is None:
        return None
    candidate_ids = list(flag.bank.candidates.order_by("position").values_list("transcriber_id", flat=True))
    scores = list(
        Score.objects.filter(flag=flag, source=Score.CANDIDATE, transcriber_id__in=candidate_ids)
        .order_by("pk")
        .values_list("pk", "scored_at")
    )
    if not candidate_ids or len(scores) < len(candidate_ids) * (1 + flag.controls.count()):
        return None
    production = Score.objects.filter(flag=flag, control__isnull=True, source=Score.LIVE).first()
    return ScoredFlag(
        flag_results([flag])[flag.pk],
        cells.of_score(production) if production else None,
        ";".join(f"{pk}:{scored_at.isoformat()}" for pk, scored_at in scores),
    )


def leader_subject(bank_id: int) -> str:
    """What oncore.webhooks remembers a bank's announced leader under."""
    return f"bank:{bank_id}:leader"


def banks_to_check(organization_ids) -> list[Bank]:
    """The banks of these organizations whose results changed since their leader was last checked, in id order."""
    checked = {
        (s.organization_id, s.subject): s.checked_at
        for s in EventState.objects.filter(organization_id__in=organization_ids, subject__startswith="bank:")
    }
    return [
        bank
        for bank in Bank.objects.filter(organization_id__in=organization_ids).order_by("pk")
        if (last := checked.get((bank.organization_id, leader_subject(bank.pk)))) is None
        or last < bank.results_changed_at
    ]


def transcriber(pk: int) -> Transcriber | None:
    """The transcriber announced before (its id as oncore.webhooks remembered it), if it still exists."""
    return Transcriber.objects.filter(pk=pk).first()
