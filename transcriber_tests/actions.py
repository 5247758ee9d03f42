"""Every write of flags, banks and candidates (the do_* functions), and the scores those writes and the queue's
finished transcriptions cause (write_score, score_transcription). The HTML views and the API call the do_*
functions; no view or router writes these tables itself.

The other writers, each the only one for its rows: the queue's claims and outcomes of transcriptions (jobs, and
replay for the work of a claimed one), the judge's picks (picks: the actions ask for them and drop them through
it), the per-day totals (aggregates, in the transaction of each write here), full-call runs (runs.actions for
what a person asks, runs.pipeline for the steps), and the benches' synthetic banks (synthetic.py bulk-writes
these rows directly, for measuring only)."""

import random
from dataclasses import dataclass
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from oncore.calls.models import Call, Line
from oncore.formats import money
from oncore.transcribers.engines.base import cost_for, key_problem
from oncore.transcribers.models import Transcriber

from . import aggregates, errors, events, jobs, picks, scoring
from .lines import bank_lines, live_transcriber_of, replayable, untranscribed, why_not_flaggable
from .models import MAX_CANDIDATES, Bank, Candidate, ControlLine, Flag, Score, Transcription


def _clean_expected(text: str) -> str:
    text = (text or "").strip()
    try:
        scoring.score_line(text, text)
    except ValueError:
        raise errors.ExpectedTextEmpty(
            "Type what the caller actually said: the expected text needs at least one word."
        ) from None
    return text


def _items_on_line(line_id):
    """Flags and control lines whose audio is this line: (flag, control or None, expected text)."""
    items = [(f, None, f.expected_text) for f in Flag.objects.filter(line_id=line_id)]
    items += [
        (c.flag, c, c.expected_text)
        for c in ControlLine.objects.filter(line_id=line_id).select_related("flag")
    ]
    return items


def score_values(expected: str, hypothesis: str | None) -> dict:
    """The Score fields of one transcriber's text on one item: scored against the expected text, or failed
    ("error" when no text came back, hypothesis None; "no text" when it has no words after normalization)."""
    failure = scoring.failure_of(hypothesis)
    values = {"normalizer_version": scoring.NORMALIZER_VERSION, "failure": failure, "failed": bool(failure)}
    if failure:
        values.update(
            hypothesis=hypothesis or "",
            match=False,
            wer=None,
            wer_units=None,
            case_or_punctuation_only=False,
            substitutions=0,
            deletions=0,
            insertions=0,
            reference_words=0,
        )
        return values
    s = scoring.score_line(expected, hypothesis)
    values.update(
        hypothesis=hypothesis,
        match=s.match,
        wer=s.wer,
        wer_units=s.wer_units,
        case_or_punctuation_only=s.case_or_punctuation_only,
        substitutions=s.substitutions,
        deletions=s.deletions,
        insertions=s.insertions,
        reference_words=s.reference_words,
    )
    return values


def write_score(
    flag, control, transcriber_id, source, hypothesis: str | None, expected: str, cost=None
) -> Score:
    """Score one item for one transcriber; `hypothesis=None` means it produced no text (failed). `cost` is the
    audio cost of the transcription scored. The bank's totals (aggregates) follow in the same transaction."""
    values = {**score_values(expected, hypothesis), "cost": cost}
    with transaction.atomic(), aggregates.item_change(flag.pk, control.pk if control else None):
        score, created = Score.objects.select_for_update().get_or_create(
            flag=flag, control=control, transcriber_id=transcriber_id, source=source, defaults=values
        )
        if not created:
            for field, value in values.items():
                setattr(score, field, value)
            score.save(update_fields=[*values, "scored_at"])
    results_changed(flag.bank_id)
    return score


def results_changed(*bank_ids) -> None:
    """Mark banks' results as changed, so the cached results page is recomputed on its next view."""
    ids = [pk for pk in bank_ids if pk is not None]
    if ids:
        Bank.objects.filter(pk__in=ids).update(results_changed_at=timezone.now())


def score_transcription(transcription: Transcription) -> int:
    """Write the candidate score of every item on the transcription's line. Returns how many."""
    items = _items_on_line(transcription.line_id)
    done = transcription.status == Transcription.DONE
    text, cost = (transcription.text, transcription.cost) if done else (None, None)
    # Every flag involved is locked up front, in id order, so two lines scored at once never wait on each other.
    list(
        Flag.objects.select_for_update()
        .filter(pk__in={f.pk for f, _, _ in items})
        .order_by("pk")
        .values_list("pk")
    )
    for flag, control, expected in items:
        write_score(flag, control, transcription.transcriber_id, Score.CANDIDATE, text, expected, cost)
    return len(items)


def _score_live(flag: Flag) -> None:
    """The live transcript is scored as stored, straight away, never transcribed again."""
    live = live_transcriber_of(flag.line.call)
    write_score(flag, None, live.pk, Score.LIVE, flag.line.text, flag.expected_text)
    for control in flag.controls.select_related("line"):
        write_score(flag, control, live.pk, Score.LIVE, control.line.text, control.expected_text)


def _sample_controls(
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


def _queue_lines(organization_id: int, lines, transcriber_ids) -> int:
    """Make sure each (line, transcriber) has a transcription; score items at once where one already exists.
    Returns how many transcriptions were newly queued."""
    lines = list(lines)
    existing = {
        (t.line_id, t.transcriber_id): t
        for t in Transcription.objects.filter(line__in=lines, transcriber_id__in=transcriber_ids)
    }
    new, reused = [], set()
    for line in lines:
        for tid in transcriber_ids:
            found = existing.get((line.pk, tid))
            if found is None:
                new.append(Transcription(organization_id=organization_id, line=line, transcriber_id=tid))
            elif found.status in jobs.FINISHED:
                score_transcription(found)
                reused.add(line.pk)
    Transcription.objects.bulk_create(new, ignore_conflicts=True)
    if new:
        transaction.on_commit(lambda: jobs.pump(organization_id))
    # Scores from reused transcriptions may complete an item: the judge is asked as when a transcription ends.
    picks.ask_later(reused)
    events.scores_written(organization_id, reused)
    return len(new)


def _retire_controls(line, rng=None) -> None:
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
        replacements = _sample_controls(flag, bank, rng, count=1)
        aggregates.flag_entered(flag.pk)
        live = live_transcriber_of(flag.line.call)
        for new in replacements:
            write_score(flag, new, live.pk, Score.LIVE, new.line.text, new.expected_text)
        candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
        _queue_lines(flag.organization_id, [c.line for c in replacements], candidate_ids)
        results_changed(bank.pk)


def retire_flagged_controls() -> int:
    """Retire every control line that has become a flag since it was drawn (flagging retires them now; banks
    from before kept them): migration 0011 runs it. Returns how many lines were retired."""
    lines = Line.objects.filter(flag__isnull=False, control_uses__isnull=False).distinct()
    retired = 0
    for line in lines.select_related("call").order_by("pk"):
        with transaction.atomic():
            _retire_controls(line)
        retired += 1
    return retired


def _enter_bank(flag: Flag, bank: Bank, rng=None) -> None:
    """A flag joins a bank: its controls are drawn, the live transcript scored, every candidate queued."""
    controls = _sample_controls(flag, bank, rng)
    aggregates.flag_entered(flag.pk)
    _score_live(flag)
    candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
    _queue_lines(flag.organization_id, [flag.line] + [c.line for c in controls], candidate_ids)


# ---------------------------------------------------------------- flags


def _check_not_live(expected_text: str, line, confirmed: bool) -> None:
    """Refuse an expected text that equals the live transcript after normalization unless confirmed: the
    line was not wrong, so flagging it says the live transcriber got it right."""
    if not confirmed and scoring.normalize(expected_text) == scoring.normalize(line.text):
        raise errors.ExpectedMatchesLive(
            "The live transcript already says this, so the line was not wrong. Type what the caller actually "
            "said, or confirm that you want to flag it with the text it already has.",
            {"line": line.pk, "production_text": line.text},
        )


def do_flag_line(
    line,
    expected_text,
    *,
    bank=None,
    tags=(),
    note="",
    user=None,
    rng=None,
    confirm_matches_live=False,
) -> Flag:
    line = Line.objects.select_related("call__tenant", "call__live_transcriber").get(pk=line.pk)
    organization_id = line.call.tenant.organization_id
    if bank is not None and bank.organization_id != organization_id:
        raise errors.NotFound("No such bank in this organization.")
    problem = why_not_flaggable(line)
    if problem:
        raise problem
    expected_text = _clean_expected(expected_text)
    if Flag.objects.filter(line=line).exists():
        raise _flag_exists(line)
    _check_not_live(expected_text, line, confirm_matches_live)
    if bank is not None:
        jobs.check_capacity(organization_id)
    try:
        with transaction.atomic():
            flag = Flag.objects.create(
                organization_id=organization_id,
                line=line,
                bank=bank,
                expected_text=expected_text,
                tags=Flag.encode_tags(tags),
                note=note or "",
                created_by=user,
            )
            Call.objects.filter(pk=line.call_id).update(n_flags=F("n_flags") + 1)
            _retire_controls(line, rng)
            if bank is not None:
                _enter_bank(flag, bank, rng)
    except IntegrityError:
        raise _flag_exists(line) from None
    return flag


def _flag_exists(line) -> errors.FlagExists:
    flag_id = Flag.objects.filter(line=line).values_list("pk", flat=True).first()
    return errors.FlagExists(
        f"This line already has flag {flag_id}; edit that flag instead.", {"line": line.pk, "flag": flag_id}
    )


def do_move_flag(flag: Flag, bank: Bank | None, rng=None) -> Flag:
    """Move a flag to another bank, or out of every bank. Its controls (with their scores and picks) leave with
    the old bank; entering a bank draws that bank's number of controls afresh and scores the flag with its
    candidates."""
    if bank is not None and bank.organization_id != flag.organization_id:
        raise errors.NotFound("No such bank in this organization.")
    if bank is not None and bank.pk != flag.bank_id:
        jobs.check_capacity(flag.organization_id)
    with transaction.atomic():
        flag = Flag.objects.select_for_update().select_related("line__call").get(pk=flag.pk)
        if flag.bank_id == (bank.pk if bank else None):
            return flag
        results_changed(flag.bank_id)
        aggregates.flag_leaving(flag.pk)
        flag.controls.all().delete()  # with their scores and picks
        picks.drop(flag)  # asked again over the new bank's candidates
        flag.bank = bank
        flag.joined_at = timezone.now()  # it counts in the new bank from today
        flag.save(update_fields=["bank", "joined_at", "updated_at"])
        if bank is not None:
            _enter_bank(flag, bank, rng)
    return flag


KEEP = object()  # do_edit_flag's bank when the flag stays where it is


def do_edit_flag(
    flag: Flag, *, expected_text=None, tags=None, note=None, confirm_matches_live=False, bank=KEEP
) -> Flag:
    """Edit a flag, and move it to `bank` (a Bank, or None for no bank) when one is given: one transaction, so a
    refused move leaves the edit unsaved too. A new expected text re-scores every transcriber's stored text
    against it, and the judge's pick on the flagged line is dropped and asked again (it was made against the old
    text)."""
    fields = ["updated_at"]
    with transaction.atomic():
        flag = Flag.objects.select_for_update().select_related("line").get(pk=flag.pk)
        rescore = False
        if expected_text is not None:
            expected_text = _clean_expected(expected_text)
            rescore = expected_text != flag.expected_text
            if rescore:
                _check_not_live(expected_text, flag.line, confirm_matches_live)
            flag.expected_text = expected_text
            fields.append("expected_text")
        retag = tags is not None and Flag.encode_tags(tags) != flag.tags
        if tags is not None:
            flag.tags = Flag.encode_tags(tags)
            fields.append("tags")
        if note is not None:
            flag.note = note
            fields.append("note")
        if retag:  # its bank's per-tag totals move with the flag
            aggregates.flag_leaving(flag.pk)
        flag.save(update_fields=fields)
        if retag:
            aggregates.flag_entered(flag.pk)
            results_changed(flag.bank_id)
        if rescore:
            for score in flag.scores.filter(control__isnull=True):
                write_score(
                    flag,
                    None,
                    score.transcriber_id,
                    score.source,
                    None if score.failure == Score.ERROR else score.hypothesis,
                    flag.expected_text,
                    score.cost,
                )
            picks.drop(flag)
            picks.ask_later([flag.line_id])
            events.scores_written(flag.organization_id, [flag.line_id])
        if bank is not KEEP and (bank.pk if bank else None) != flag.bank_id:
            flag = do_move_flag(flag, bank)
    return flag


def do_delete_flag(flag: Flag) -> None:
    """Delete a flag with its controls and scores. Transcriptions stay: another bank may use them."""
    with transaction.atomic():
        aggregates.flag_leaving(flag.pk)
        call_id = Line.objects.filter(pk=flag.line_id).values_list("call_id", flat=True).first()
        if flag.delete()[0]:
            Call.objects.filter(pk=call_id).update(n_flags=F("n_flags") - 1)
        results_changed(flag.bank_id)


# ---------------------------------------------------------------- banks and candidates


def do_create_bank(
    organization, *, name, language_label="", threshold=Decimal("0.6"), controls_per_flag=1
) -> Bank:
    try:
        with transaction.atomic():
            return Bank.objects.create(
                organization=organization,
                name=name.strip(),
                language_label=language_label.strip(),
                threshold=threshold,
                controls_per_flag=controls_per_flag,
            )
    except IntegrityError:
        raise _name_taken(organization, name.strip()) from None


def do_update_bank(bank: Bank, **changes) -> Bank:
    allowed = {"name", "language_label", "threshold", "controls_per_flag"}
    fields = [k for k in changes if k in allowed]
    for key in fields:
        setattr(bank, key, changes[key].strip() if isinstance(changes[key], str) else changes[key])
    bank.results_changed_at = timezone.now()
    fields.append("results_changed_at")
    try:
        with transaction.atomic():
            bank.save(update_fields=fields)
    except IntegrityError:
        raise _name_taken(bank.organization, bank.name) from None
    return bank


def _name_taken(organization, name) -> errors.BankNameTaken:
    bank_id = Bank.objects.filter(organization=organization, name=name).values_list("pk", flat=True).first()
    return errors.BankNameTaken(
        f"A bank named {name!r} already exists (bank {bank_id}); choose another name.", {"bank": bank_id}
    )


def do_set_timezone(organization, zone: str) -> int:
    """Count the organization's days in this timezone (an IANA name, checked by the caller) from now on: its banks'
    per-day totals are recounted in the new days, in the same transaction. Returns how many banks."""
    bank_ids = list(Bank.objects.filter(organization=organization).values_list("pk", flat=True))
    with transaction.atomic():
        type(organization).objects.filter(pk=organization.pk).update(timezone=zone)
        organization.timezone = zone
        aggregates.rebuild(bank_ids)
        results_changed(*bank_ids)
    return len(bank_ids)


def do_delete_bank(bank: Bank) -> None:
    """Delete a bank. Its flags stay, in no bank; its runs leave every list but stay reachable by id."""
    bank.delete()


@dataclass(frozen=True)
class Estimate:
    transcriber_id: int
    lines: int
    already_transcribed: int
    audio_seconds: float
    price_per_minute: Decimal
    cost: Decimal
    key_problem: str = ""  # why its lines would fail on this server (its vendor key is not set), or ""

    @property
    def audio_minutes(self) -> float:
        return self.audio_seconds / 60

    def as_dict(self) -> dict:
        """The estimate as the API shows it, in GET .../candidates/estimate and in estimate_not_confirmed."""
        return {
            "transcriber_id": self.transcriber_id,
            "lines": self.lines,
            "already_transcribed": self.already_transcribed,
            "audio_seconds": round(self.audio_seconds, 3),
            "audio_minutes": round(self.audio_minutes, 3),
            "price_per_minute": money(self.price_per_minute),
            "cost": money(self.cost),
            "key_problem": self.key_problem or None,
        }


def estimate_backfill(bank: Bank, transcriber: Transcriber) -> Estimate:
    lines = list(bank_lines(bank).only("id", "start_s", "end_s"))
    todo, seconds = untranscribed(lines, transcriber)
    price = Decimal(str(transcriber.price_per_minute))
    return Estimate(
        transcriber.pk,
        len(todo),
        len(lines) - len(todo),
        seconds,
        price,
        cost_for(seconds, price),
        key_problem(transcriber),
    )


def do_add_candidate(bank: Bank, transcriber: Transcriber, *, confirmed: bool = False) -> Candidate:
    """Add a candidate and backfill every flag and control in the bank. The estimate must be confirmed."""
    if not transcriber.enabled:
        raise errors.TranscriberDisabled(f"{transcriber} is disabled in the catalogue.")
    existing = bank.candidates.filter(transcriber=transcriber).first()
    if existing is not None:
        raise errors.CandidateExists(
            f"{transcriber} is already a candidate in {bank} (position {existing.position}).",
            {"candidate": {"transcriber_id": transcriber.pk, "position": existing.position}},
        )
    if bank.candidates.count() >= MAX_CANDIDATES:
        raise errors.BankFull(f"{bank} already has {MAX_CANDIDATES} candidates; remove one first.")
    estimate = estimate_backfill(bank, transcriber)
    if not confirmed:
        warning = (
            f" {estimate.key_problem} Until it is, every line sent to it fails."
            if estimate.key_problem
            else ""
        )
        raise errors.EstimateNotConfirmed(
            f"Adding {transcriber} transcribes {estimate.lines} lines ({estimate.audio_minutes:.1f} audio minutes, "
            f"about ${money(estimate.cost)}).{warning} Confirm the estimate to add it.",
            estimate,
        )
    if estimate.lines:
        jobs.check_capacity(bank.organization_id)
    try:
        with transaction.atomic():
            Bank.objects.select_for_update().get(pk=bank.pk)
            position = (
                (bank.candidates.aggregate(m=Max("position"))["m"] + 1) if bank.candidates.exists() else 0
            )
            candidate = Candidate.objects.create(bank=bank, transcriber=transcriber, position=position)
            aggregates.candidates_changed(bank.pk)
            results_changed(bank.pk)
            _queue_lines(bank.organization_id, bank_lines(bank), [transcriber.pk])
    except IntegrityError:
        raise errors.BankFull(f"{bank} already has {MAX_CANDIDATES} candidates; remove one first.") from None
    return candidate


def do_remove_candidate(bank: Bank, transcriber: Transcriber) -> None:
    """Remove a candidate. Its transcriptions and scores stay, so adding it back costs nothing."""
    with transaction.atomic():
        Bank.objects.select_for_update().get(pk=bank.pk)
        bank.candidates.filter(transcriber=transcriber).delete()
        aggregates.candidates_changed(bank.pk)
        results_changed(bank.pk)
        for position, candidate in enumerate(bank.candidates.order_by("position")):
            if candidate.position != position:
                candidate.position = position
                candidate.save(update_fields=["position"])


def do_move_candidate(bank: Bank, transcriber: Transcriber, *, up: bool) -> None:
    """Move a candidate one place up or down the bank's order (the first stays first, the last last)."""
    order = list(bank.candidates.order_by("position").values_list("transcriber_id", flat=True))
    i = order.index(transcriber.pk)
    j = i - 1 if up else i + 1
    if 0 <= j < len(order):
        order[i], order[j] = order[j], order[i]
        do_reorder_candidates(bank, order)


def do_reorder_candidates(bank: Bank, transcriber_ids) -> list[Candidate]:
    """Put the candidates in the given order; it must name each current candidate once."""
    transcriber_ids = [int(t) for t in transcriber_ids]
    with transaction.atomic():
        Bank.objects.select_for_update().get(pk=bank.pk)
        current = {c.transcriber_id: c for c in bank.candidates.all()}
        if sorted(transcriber_ids) != sorted(current):
            raise errors.ActionError(
                "The new order must list every current candidate exactly once.",
                {"current": sorted(current), "given": transcriber_ids},
            )
        bank.candidates.all().delete()
        results_changed(bank.pk)
        return Candidate.objects.bulk_create(
            [Candidate(bank=bank, transcriber_id=t, position=i) for i, t in enumerate(transcriber_ids)]
        )
