"""The flags a screen lists, the bank the flag form preselects, and each flagged line's results per candidate
as they arrive on the call page (with its control lines and theirs). A page of lines asks a fixed number of
queries, whatever the number of flags on it."""

from dataclasses import dataclass

from ..lib import cells
from ..models import Bank, Candidate, ControlLine, Flag, JudgePick, Score, Transcription
from .filters import where


def flags_list(organization, *, bank=None, unbanked=None, tag="", call=None, date_from=None, date_to=None):
    """The organization's flags, newest first, with their line, call and tenant. Filters: a bank id, unbanked
    (True: only flags in no bank; False: only flags in a bank), a tag, a call id, the days they were made between."""
    qs = Flag.objects.filter(organization=organization).select_related("line__call__tenant")
    qs = where(
        qs,
        bank_id=bank,
        bank__isnull=unbanked,
        tags__contains=f",{' '.join(tag.split()).lower()}," if tag else None,
        line__call_id=call,
        created_at__date__gte=date_from,
        created_at__date__lte=date_to,
    )
    return qs.order_by("-created_at", "-id")


def remembered_bank(organization, user) -> tuple[Bank | None, str]:
    """The bank a new flag goes to unless the admin picks another, and why, as the flag form says it: the bank of
    the last line this user flagged (where that flag is now, so a move counts), else the organization's only bank;
    (None, "") when neither says (then the form offers every bank, and no bank)."""
    last = (
        Flag.objects.filter(organization=organization, created_by=user, bank__isnull=False)
        .order_by("-created_at", "-id")
        .select_related("bank", "line")
        .first()
    )
    if last is not None:
        return last.bank, (
            f"Preselected: {last.bank.name}, where your last flag is (call {last.line.call_id}, "
            f"line {last.line.position + 1}). Choose another bank, or no bank, here."
        )
    banks = list(Bank.objects.filter(organization=organization)[:2])
    if len(banks) == 1:
        return banks[0], f"Preselected: {banks[0].name}, this organization's only bank."
    return None, ""


PENDING, DONE, FAILED = "pending", "done", "failed"


@dataclass(frozen=True)
class Cell:
    """One candidate on one item: its score cell (waiting while queued, transcribing or being scored; scored; or
    failed, with why: the engine's error, or its text had no words) and whether the judge chose its version among
    those that matched."""

    transcriber: object
    score: cells.ScoreCell
    picked: bool = False

    @property
    def state(self) -> str:
        return PENDING if self.score.waiting else FAILED if self.score.failed else DONE

    @property
    def reason(self) -> str:
        return self.score.reason


@dataclass(frozen=True)
class Item:
    """The flagged line itself, or one of its control lines (its expected text is the live transcript)."""

    line: object
    control: ControlLine | None
    expected_text: str
    cells: list
    pick: JudgePick | None


@dataclass(frozen=True)
class FlagResults:
    flag: Flag
    items: list  # the flagged line first, then its control lines in line order

    @property
    def pending(self) -> bool:
        """Still being made (not settled: its controls are not drawn yet), transcribed or scored."""
        return not self.flag.settled or any(
            cell.state == PENDING for item in self.items for cell in item.cells
        )

    @property
    def controls(self) -> list:
        return self.items[1:]


def _cell(transcriber, score: Score | None, transcription: dict | None, pick: JudgePick | None) -> Cell:
    error = (transcription or {}).get("error", "")
    if score is not None:
        found = cells.of_score(score)
        if found.failed:
            why = "Its text had no words." if score.failure == Score.NO_TEXT else "No text came back."
            return Cell(transcriber, cells.with_reason(found, error or why))
        return Cell(transcriber, found, picked=pick is not None and pick.chosen_id == transcriber.pk)
    if transcription is not None and transcription["status"] == Transcription.FAILED:
        failed = cells.ScoreCell(transcriber.pk, cells.FAILED, reason=error or "The transcription failed.")
        return Cell(transcriber, failed)
    return Cell(transcriber, cells.waiting(transcriber.pk))


def flag_results(flags) -> dict[int, FlagResults]:
    """{flag id: FlagResults} for flags in a bank (a flag in no bank has no candidates: it is left out), in five
    queries: the banks' candidates, the control lines, the scores, the transcriptions (of the lines with a cell
    not scored or failed, when there are any) and the judge's picks (only the first when none is settled: an
    unsettled flag has none of the others yet, and its cells wait)."""
    flags = [f for f in flags if f.bank_id is not None]
    if not flags:
        return {}
    candidates: dict[int, list] = {}
    for c in (
        Candidate.objects.filter(bank_id__in={f.bank_id for f in flags})
        .select_related("transcriber")
        .order_by("position")
    ):
        candidates.setdefault(c.bank_id, []).append(c.transcriber)
    settled = [f for f in flags if f.settled]
    controls: dict[int, list] = {}
    scores, transcriptions, picks = {}, {}, {}
    if settled:
        for control in (
            ControlLine.objects.filter(flag__in=settled)
            .select_related("line")
            .order_by("line__position", "id")
        ):
            controls.setdefault(control.flag_id, []).append(control)
        scores = {
            (s.flag_id, s.control_id, s.transcriber_id): s
            for s in Score.objects.filter(flag__in=settled, source=Score.CANDIDATE).defer(
                "confusions",
                "text_key",
                "csv_cells",  # the turn table's CSV and the confusion pairs' only
            )
        }
        # The transcriptions say why a cell failed or that it failed before it was scored: read only for the
        # lines of items with a cell not scored or failed (none on a call whose flags are all scored).
        line_ids = {
            (control.line_id if control else flag.line_id)
            for flag in settled
            for control in [None, *controls.get(flag.pk, [])]
            for t in candidates.get(flag.bank_id, [])
            if getattr(scores.get((flag.pk, control.pk if control else None, t.pk)), "failed", True)
        }
        transcriber_ids = {t.pk for ts in candidates.values() for t in ts}
        if line_ids:
            transcriptions = {
                (t["line_id"], t["transcriber_id"]): t
                for t in Transcription.objects.filter(
                    line_id__in=line_ids, transcriber_id__in=transcriber_ids
                ).values("line_id", "transcriber_id", "status", "error")
            }
        picks = {
            (p.flag_id, p.control_id): p
            for p in JudgePick.objects.filter(flag__in=settled).exclude(chosen=None)
        }
    results = {}
    for flag in flags:
        items = []
        for control in [None, *controls.get(flag.pk, [])]:
            line = control.line if control else flag.line
            control_id = control.pk if control else None
            pick = picks.get((flag.pk, control_id))
            done = transcriptions if flag.settled else {}  # an unsettled flag's cells wait
            cells = [
                _cell(t, scores.get((flag.pk, control_id, t.pk)), done.get((line.pk, t.pk)), pick)
                for t in candidates.get(flag.bank_id, [])
            ]
            expected = control.expected_text if control else flag.expected_text
            items.append(Item(line, control, expected, cells, pick))
        results[flag.pk] = FlagResults(flag, items)
    return results
