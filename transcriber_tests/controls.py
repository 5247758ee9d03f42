"""A flag's control lines: unflagged caller lines of the same call, scored with the flag, whose expected text is
their live transcript. They are drawn at random when a flag enters a bank (draw), retired when their line becomes
a flag (retire: its live text is known to be wrong now), and drawn again to a bank's new number on request
(redraw, after its setting changed; estimate_redraw says what that would cost first)."""

import random

from django.db import transaction

from oncore.calls.models import Call, Line

from . import aggregates, scores, scoring
from .lines import replayable
from .models import Bank, ControlLine, Flag


def draw(
    flag: Flag, bank: Bank, rng: random.Random | None = None, count: int | None = None
) -> list[ControlLine]:
    """Draw the bank's number of control lines for a flag entering it, at random among the other caller lines
    of its call that have audio timing (replayable: not longer than ONCORE_MAX_LINE_S) and whose live text has
    words (it is their expected text). Never a
    flagged line (its live text is known to be wrong), and never a line already serving as a control in this
    bank, so two flags on one call never count one line twice. A call with fewer such lines gives fewer.
    The call's row is locked while drawing, so two flags on one call draw one after the other. `count`: how many
    to draw (default: the bank's setting as it is now; a settings change applies to the flags that enter the
    bank after it)."""
    if count is None:
        count = Bank.objects.values_list("controls_per_flag", flat=True).get(pk=bank.pk)
    if count <= 0:
        return []
    call_id = flag.line.call_id
    Call.objects.select_for_update().filter(pk=call_id).first()
    in_bank = ControlLine.objects.filter(flag__bank=bank, line__call_id=call_id).values("line_id")
    pool = [
        line
        for line in replayable(Line.objects.filter(call_id=call_id, speaker=Line.CALLER))
        .exclude(pk=flag.line_id)
        .filter(flag__isnull=True)
        .exclude(pk__in=in_bank)
        .order_by("position")
        if scoring.has_words(line.text)
    ]
    chosen = (rng or random.SystemRandom()).sample(pool, min(count, len(pool)))
    return [ControlLine.objects.create(flag=flag, line=line, expected_text=line.text) for line in chosen]


def retire(line, rng=None) -> None:
    """A line that becomes a flag stops being a control everywhere: its live text is now known to be wrong, so
    it can no longer stand as its own expected text. Each flag it served leaves its bank's totals, loses that
    control (with its scores and picks), draws a replacement from the same call when one is left (scored as
    any control: the live transcript at once, the bank's candidates queued) and comes back into the totals.
    The call's row is locked first, as drawing controls does, so flagging two lines of one call waits in turn."""
    controls = ControlLine.objects.filter(line_id=line.pk).select_related(
        "flag__bank", "flag__line__call__live_transcriber"
    )
    if not controls.exists():
        return
    Call.objects.select_for_update().filter(pk=line.call_id).first()
    for control in controls:  # a control is always of a flag in a bank: its controls leave with the bank
        flag, bank = control.flag, control.flag.bank
        aggregates.flag_leaving(flag.pk)
        control.delete()  # with its scores and picks
        replacements = draw(flag, bank, rng, count=1)
        aggregates.flag_entered(flag.pk)
        scores.score_live_controls(flag, replacements)
        candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
        scores.queue_lines(flag.organization_id, [c.line for c in replacements], candidate_ids)
        scores.results_changed(bank.pk)


def retire_flagged_controls() -> int:
    """Retire every control line that has become a flag since it was drawn (flagging retires them now; banks
    from before kept them): migration 0011 runs it. Returns how many lines were retired."""
    lines = Line.objects.filter(flag__isnull=False, control_uses__isnull=False).distinct()
    retired = 0
    for line in lines.select_related("call").order_by("pk"):
        with transaction.atomic():
            retire(line)
        retired += 1
    return retired
