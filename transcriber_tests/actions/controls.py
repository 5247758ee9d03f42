"""A flag's control lines: unflagged caller lines of the same call, scored with the flag, whose expected text is
their live transcript. They are drawn at random when a flag enters a bank (draw), retired when their line becomes
a flag (retire: its live text is known to be wrong now), and drawn again to a bank's new number on request
(redraw, after its setting changed; estimate_redraw says what that would cost first)."""

import random
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import Count

from oncore.calls.models import Call, Line
from oncore.formats import money
from oncore.templatetags.oncore_tags import dollars
from oncore.transcribers.engines.base import cost_for

from .. import aggregates, errors, handles
from ..lib import scoring
from ..models import Bank, ControlLine, Flag, Transcription
from ..queries.lines import clip_seconds, replayable
from . import scores


def _pool(flag: Flag, bank: Bank) -> list[Line]:
    """The lines a flag may draw as controls: the other caller lines of its call that have audio timing
    (replayable: not longer than ONCORE_MAX_LINE_S) and whose live text can stand as their expected text (not
    degenerate: it has words, it does not repeat itself, it has no more words than the line's duration allows;
    scoring.degenerate); never a flagged line (its live text is known to be wrong), and never a line already
    serving as a control in this bank, so two flags on one call never count one line twice."""
    in_bank = ControlLine.objects.filter(flag__bank=bank, line__call_id=flag.line.call_id).values("line_id")
    return [
        line
        for line in replayable(Line.objects.filter(call_id=flag.line.call_id, speaker=Line.CALLER))
        .exclude(pk=flag.line_id)
        .filter(flag__isnull=True)
        .exclude(pk__in=in_bank)
        .order_by("position")
        if not scoring.degenerate(line.text, line.duration_s)
    ]


def draw(
    flag: Flag, bank: Bank, rng: random.Random | None = None, count: int | None = None
) -> list[ControlLine]:
    """Draw the bank's number of control lines for a flag entering it, at random among the lines its call has
    left for it (_pool). A call with fewer such lines gives fewer. The call's row is locked while drawing, so two
    flags on one call draw one after the other. `count`: how many to draw (default: the bank's setting as it is
    now)."""
    if count is None:
        count = Bank.objects.values_list("controls_per_flag", flat=True).get(pk=bank.pk)
    if count <= 0:
        return []
    aggregates.lock_call(line=flag.line_id)
    pool = _pool(flag, bank)
    chosen = (rng or random.SystemRandom()).sample(pool, min(count, len(pool)))
    return [ControlLine.objects.create(flag=flag, line=line, expected_text=line.text) for line in chosen]


def retire(line, rng=None) -> None:
    """A line that becomes a flag stops being a control everywhere: its live text is now known to be wrong, so
    it can no longer stand as its own expected text (so does a line whose live text is degenerate:
    retire_degenerate_controls). Each flag it served leaves its bank's totals, loses that
    control (with its scores and picks), draws a replacement from the same call when one is left (scored as
    any control: the live transcript at once, the bank's candidates queued) and comes back into the totals.
    The call's row is locked first, as drawing controls does, so flagging two lines of one call waits in turn."""
    controls = ControlLine.objects.filter(line_id=line.pk).select_related(
        "flag__bank", "flag__line__call__live_transcriber"
    )
    if not controls.exists():
        return
    aggregates.lock_call(line=line.pk)
    for control in controls:  # a control is always of a flag in a bank: its controls leave with the bank
        flag, bank = control.flag, control.flag.bank
        aggregates.flag_leaving(flag.pk)
        control.delete()  # with its scores and picks
        replacements = draw(flag, bank, rng, count=1)
        candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
        scores.enter_items(flag, replacements, candidate_ids)
        scores.results_changed(bank.pk)


def retire_degenerate_controls() -> int:
    """Retire every control line whose live text is degenerate (scoring.degenerate: no words, a repetition
    loop, more words than its duration allows), drawn before such lines were kept out of the pool: each flag it
    served draws a replacement from the same call, as a flagged control's does (retire). The recount migration
    runs it. Returns how many lines were retired."""
    lines = Line.objects.filter(control_uses__isnull=False).distinct().order_by("pk")
    retired = 0
    for line in lines.iterator(chunk_size=2000):
        if scoring.degenerate(line.text, line.duration_s):
            with transaction.atomic():
                retire(line)
            retired += 1
    return retired


def retire_flagged_controls() -> int:
    """Retire every control line that has become a flag since it was drawn (flagging retires them now; banks
    from before kept them): migration 0012 runs it. Returns how many lines were retired."""
    lines = Line.objects.filter(flag__isnull=False, control_uses__isnull=False).distinct()
    retired = 0
    for line in lines.select_related("call").order_by("pk"):
        with transaction.atomic():
            retire(line)
        retired += 1
    return retired


# ---------------------------------------------------------------- drawing again to a bank's new number


@dataclass(frozen=True)
class RedrawEstimate:
    """What drawing a bank's flags' controls again to its setting would do: `flags` whose number differs,
    `removed` controls over the number (with their scores), `added` lines to draw (as many as their calls have
    left), `to_transcribe` of those × candidates not yet transcribed, and what that costs (the candidates'
    prices on those lines' clips, an average over the lines each flag could draw, since the draw is random)."""

    controls_per_flag: int
    flags: int
    removed: int
    added: int
    to_transcribe: int
    already_transcribed: int
    cost: Decimal

    def as_dict(self) -> dict:
        return {
            "controls_per_flag": self.controls_per_flag,
            "flags": self.flags,
            "removed": self.removed,
            "added": self.added,
            "to_transcribe": self.to_transcribe,
            "already_transcribed": self.already_transcribed,
            "cost": money(self.cost),
        }


def _differing(bank: Bank):
    """The bank's settled flags whose number of controls is not its setting, with that number (an unsettled
    one draws the bank's number when it settles)."""
    return (
        Flag.objects.filter(bank=bank, settled=True)
        .annotate(n_controls=Count("controls"))
        .exclude(n_controls=bank.controls_per_flag)
        .select_related("line")
        .order_by("joined_at", "id")
    )


def estimate_redraw(bank: Bank) -> RedrawEstimate:
    """What do_redraw would do and cost now."""
    want = bank.controls_per_flag
    candidates = list(bank.candidates.select_related("transcriber"))
    flags = removed = added = to_transcribe = reused = 0
    cost = Decimal(0)
    for flag in _differing(bank):
        flags += 1
        if flag.n_controls > want:
            removed += flag.n_controls - want
            continue
        pool = _pool(flag, bank)
        n = min(want - flag.n_controls, len(pool))
        added += n
        if not pool or not n:
            continue
        done = Transcription.objects.filter(line__in=pool).values_list("line_id", "transcriber_id")
        done = set(done)
        for c in candidates:
            share = sum(1 for line in pool if (line.pk, c.transcriber_id) not in done) / len(pool)
            to_transcribe += round(n * share)
            reused += n - round(n * share)
            seconds = sum(clip_seconds(line) for line in pool) / len(pool) * n * share
            cost += cost_for(seconds, c.transcriber.price_per_minute)
    return RedrawEstimate(want, flags, removed, added, to_transcribe, reused, cost)


def do_redraw(bank: Bank, *, confirmed: bool = False, rng=None) -> RedrawEstimate:
    """Bring every flag of the bank to its number of control lines: controls over the number leave (the newest
    drawn first, with their scores and picks), and the missing ones are drawn from the same call (as many as it
    has left), scored live at once and queued for every candidate. The estimate must be confirmed."""
    estimate = estimate_redraw(bank)
    if not confirmed:
        raise errors.EstimateNotConfirmed(
            f"Drawing the controls of {estimate.flags} flags again removes {estimate.removed} and draws "
            f"{estimate.added} control lines: {estimate.to_transcribe} transcriptions by the bank's candidates, "
            f"about {dollars(estimate.cost)}. Confirm the estimate to draw them.",
            estimate,
        )
    if estimate.added:
        handles.check_capacity(bank.organization_id)
    rng = rng or random.SystemRandom()
    with transaction.atomic():
        # Every change to a bank's items locks the item's call, then its flag, then shares the bank's row
        # (aggregates.lock_call): the redraw takes its flags' calls first too, in id order, then the bank's row
        # for update, so a flag made on one of those calls meanwhile waits for it (it waited for the flag
        # holding its call, and the flag for its bank's row: PostgreSQL ended one of them as a deadlock).
        calls = sorted({flag.line.call_id for flag in _differing(bank)})
        list(
            Call.objects.select_for_update(no_key=True).filter(pk__in=calls).order_by("pk").values_list("pk")
        )
        bank = Bank.objects.select_for_update().get(pk=bank.pk)
        candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
        for flag in _differing(bank).filter(line__call_id__in=calls):
            aggregates.flag_leaving(flag.pk)
            extra = list(flag.controls.order_by("-id")[: max(0, flag.n_controls - bank.controls_per_flag)])
            ControlLine.objects.filter(pk__in=[c.pk for c in extra]).delete()  # with their scores and picks
            drawn = draw(flag, bank, rng, count=max(0, bank.controls_per_flag - flag.n_controls))
            scores.enter_items(flag, drawn, candidate_ids)
        scores.results_changed(bank.pk)
    return estimate
