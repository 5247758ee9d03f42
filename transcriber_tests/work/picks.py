"""The judge's pick on flagged and control lines.

Where two or more of a bank's candidates matched an item (a flag, or one of its control lines) but wrote it
differently ("Mary-Kate" and "mary kate"), the judge picks the version that fits the business best, from the
assistant's instructions and the neighbouring lines of the call, with one sentence of reasoning. It never
changes a score. One JudgePick per item; a pick whose versions no longer match the scores is asked again,
and one whose item no longer has two versions is removed.

`maybe_pick(flag_id, control_id)` is called once an item's last candidate is scored (`maybe_pick_line` does
it for every item on a line); `fill_picks(bank)` catches up a whole bank. Every path that writes candidate
scores asks through `actions.scores.ask_picks(line_ids)`, a queue task per line: a transcription that ends (done
or failed), scores taken from transcriptions that already exist (a flag moved or made on a line already
transcribed, for instance by a full-call run; a candidate added back), and an edited expected text (whose old pick
the edit drops first). The minutely pump catches up items left without a pick (`catch_up`, over
queries.picks.missing). Asking twice never makes two picks: one
row per item, held by unique constraints, and a pick on the same versions is not asked again.
Without ANTHROPIC_API_KEY nothing is picked or invented.
"""

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from oncore import llm
from oncore.calls.models import Call, Line

from .. import judge
from ..models import Bank, ControlLine, Flag, JudgePick, Score
from ..queries.picks import CATCH_UP_LIMIT, missing

CONTEXT_EACH_SIDE = 3


def _clean(text: str) -> str:
    return " ".join((text or "").split())


def versions_of(candidate_ids, scores) -> dict[str, str] | None:
    """The distinct texts of the candidates that matched, keyed by the id (as a string) of the first candidate
    in bank order that wrote each. None while a candidate has no score yet (the item is not finished)."""
    by_transcriber = {s.transcriber_id: s for s in scores}
    if any(tid not in by_transcriber for tid in candidate_ids):
        return None
    versions: dict[str, str] = {}
    for tid in candidate_ids:
        s = by_transcriber[tid]
        if s.failed or not s.match:
            continue
        text = _clean(s.hypothesis)
        if text not in versions.values():
            versions[str(tid)] = text
    return versions


def _context(line: Line) -> list[tuple[str, str]]:
    around = Line.objects.filter(
        call_id=line.call_id,
        position__gte=line.position - CONTEXT_EACH_SIDE,
        position__lte=line.position + CONTEXT_EACH_SIDE,
    ).order_by("position")
    return [(ln.speaker, "[the line being judged]" if ln.pk == line.pk else ln.text) for ln in around]


def _item(flag_id: int, control_id: int | None):
    flag = Flag.objects.select_related("bank", "line__call__assistant").filter(pk=flag_id).first()
    if flag is None:
        return None, None
    control = None
    if control_id is not None:
        control = ControlLine.objects.select_related("line").filter(pk=control_id, flag=flag).first()
        if control is None:
            return None, None
    return flag, control


def maybe_pick(flag_id: int, control_id: int | None = None) -> JudgePick | None:
    """Ask the judge to pick among the matching versions of one item, when there are two or more and the
    item's every candidate is scored. Returns the item's pick (new, kept or failed), or None."""
    flag, control = _item(flag_id, control_id)
    if flag is None or flag.bank_id is None:
        return None
    candidate_ids = list(flag.bank.candidates.order_by("position").values_list("transcriber_id", flat=True))
    scores = Score.objects.filter(
        flag=flag,
        source=Score.CANDIDATE,
        transcriber_id__in=candidate_ids,
        **({"control": control} if control else {"control__isnull": True}),
    )
    versions = versions_of(candidate_ids, scores)
    if versions is None:
        return None
    existing = JudgePick.objects.filter(flag=flag, control=control).first()
    if len(versions) < 2:
        if existing is not None:
            with transaction.atomic():
                picks_changed(flag)
                existing.delete()
        return None
    if existing is not None and existing.versions == versions and existing.chosen_id:
        return existing
    if not llm.judge_configured():
        return existing
    line = control.line if control else flag.line
    call = flag.line.call
    values = {"versions": versions, "prompt_version": judge.JUDGE_PROMPT_VERSION}
    try:
        pick = judge.pick_best_version(
            instructions=call.assistant.instructions if call.assistant else "",
            context_lines=_context(line),
            expected=control.expected_text if control else flag.expected_text,
            versions=versions,
        )
    except (llm.LLMError, llm.JudgeNotConfigured) as exc:
        values.update(chosen=None, chosen_text="", reasoning="", error=exc.message)
    else:
        c = pick.call
        values.update(
            chosen_id=int(pick.candidate),
            chosen_text=versions[pick.candidate],
            reasoning=pick.reasoning,
            error="",
            model=c.model,
            input_tokens=c.input_tokens + c.cache_read_tokens + c.cache_write_tokens,
            output_tokens=c.output_tokens,
            cost=c.cost,
        )
    try:
        with transaction.atomic():
            picks_changed(flag)
            found, _ = JudgePick.objects.update_or_create(flag=flag, control=control, defaults=values)
    except IntegrityError:  # two workers finished the item's last candidates at once; the other one wrote
        found = JudgePick.objects.filter(flag=flag, control=control).first()
    return found


def picks_changed(flag) -> None:
    """Before a pick on the flag's items is written (within its transaction), move the versions it shows in: its
    call's flags and the flag's items (its box on the call page), then its bank's picks (the turn table's kept
    pages), locking their rows in the order every change to a bank's items takes (aggregates.lock_call)."""
    Call.objects.filter(pk=flag.line.call_id).update(flags_version=F("flags_version") + 1)
    Flag.objects.filter(pk=flag.pk).update(items_version=F("items_version") + 1)
    Bank.objects.filter(pk=flag.bank_id).update(picks_changed_at=timezone.now())


def maybe_pick_line(line_id: int) -> int:
    """maybe_pick on every item whose audio is this line (its flag, and control uses). Returns picks held."""
    picked = 0
    for flag_id in Flag.objects.filter(line_id=line_id, bank__isnull=False).values_list("pk", flat=True):
        picked += maybe_pick(flag_id) is not None
    for flag_id, control_id in ControlLine.objects.filter(
        line_id=line_id, flag__bank__isnull=False
    ).values_list("flag_id", "pk"):
        picked += maybe_pick(flag_id, control_id) is not None
    return picked


def catch_up(limit: int = CATCH_UP_LIMIT) -> int:
    """maybe_pick on items left without a pick (see `missing`), for the minutely pump. Returns picks made."""
    if not llm.judge_configured():
        return 0
    return sum(maybe_pick(flag_id, control_id) is not None for flag_id, control_id in missing(limit))


@dataclass(frozen=True)
class FillResult:
    items: int
    picked: int
    failed: int


def fill_picks(bank) -> FillResult:
    """maybe_pick over every item of a bank: for a bank scored before the judge was configured, or after
    candidates changed. Items already picked on the same versions cost nothing."""
    items = [(f, None) for f in Flag.objects.filter(bank=bank).values_list("pk", flat=True)]
    items += list(ControlLine.objects.filter(flag__bank=bank).values_list("flag_id", "pk"))
    picked = failed = 0
    for flag_id, control_id in items:
        pick = maybe_pick(flag_id, control_id)
        if pick is not None:
            picked += bool(pick.chosen_id)
            failed += not pick.chosen_id
    return FillResult(len(items), picked, failed)
