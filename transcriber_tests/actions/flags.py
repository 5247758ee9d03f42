"""Every write of flags, banks and candidates (the do_* functions). The HTML views and the API call them; no view
or router writes these tables itself. The scores those writes and the queue's finished transcriptions cause are
written by scores.py, control lines drawn, retired and drawn again by controls.py.

The other writers, each the only one for its rows: the queue's claims and outcomes of transcriptions (jobs, and
replay for the work of a claimed one), the judge's picks (picks: the actions ask for them and drop them through
it), the per-day totals (aggregates, in the transaction of each write here), full-call runs (runs.actions for
what a person asks, runs.pipeline for the steps), and the benches' synthetic banks (synthetic.py bulk-writes
these rows directly, for measuring only)."""

from dataclasses import dataclass
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from oncore.calls.models import Call, Line
from oncore.formats import money
from oncore.transcribers.engines.base import cost_for, key_problem
from oncore.transcribers.models import Transcriber

from .. import aggregates, errors, events, jobs, picks
from ..lib import scoring
from ..lines import bank_lines, untranscribed, why_not_flaggable
from ..models import MAX_CANDIDATES, Bank, Candidate, Flag, FlagEdit, Score
from ..models.history import name_of
from . import controls, scores


def _clean_expected(text: str) -> str:
    text = (text or "").strip()
    try:
        scoring.score_line(text, text)
    except ValueError:
        raise errors.ExpectedTextEmpty(
            "Type what the caller actually said: the expected text needs at least one word."
        ) from None
    return text


def _enter_bank(flag: Flag, bank: Bank, rng=None) -> None:
    """A flag joins a bank: its controls are drawn, the live transcript scored, every candidate queued."""
    drawn = controls.draw(flag, bank, rng)
    scores.score_live(flag)
    aggregates.flag_entered(flag.pk)  # counts the flag with its live scores
    candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
    scores.queue_lines(flag.organization_id, [flag.line] + [c.line for c in drawn], candidate_ids)


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
    key=None,
    rng=None,
    confirm_matches_live=False,
) -> Flag:
    """Flag a caller line with what was said, made by `user` (the dashboard) or `key` (an organization API key)."""
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
                created_by_key=key,
            )
            Call.objects.filter(pk=line.call_id).update(n_flags=F("n_flags") + 1)
            controls.retire(line, rng)
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
        scores.results_changed(flag.bank_id)
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


def _record_edits(flag: Flag, before: dict, user, key) -> None:
    """One FlagEdit per field of the flag that changed from `before`: who (the person, or the API key), when,
    old and new (tags written as the pages write them, space-separated)."""
    by = name_of(user, key)
    shown = {FlagEdit.TAGS: lambda v: " ".join(Flag.decode_tags(v))}
    FlagEdit.objects.bulk_create(
        FlagEdit(
            flag=flag,
            by=user,
            by_key=key,
            by_name=by[:150],
            field=field,
            old=shown.get(field, str)(old),
            new=shown.get(field, str)(getattr(flag, field)),
        )
        for field, old in before.items()
        if getattr(flag, field) != old
    )


def do_edit_flag(
    flag: Flag,
    *,
    expected_text=None,
    tags=None,
    note=None,
    confirm_matches_live=False,
    bank=KEEP,
    user=None,
    key=None,
) -> Flag:
    """Edit a flag, and move it to `bank` (a Bank, or None for no bank) when one is given: one transaction, so a
    refused move leaves the edit unsaved too. A new expected text re-scores every transcriber's stored text
    against it, and the judge's pick on the flagged line is dropped and asked again (it was made against the old
    text). Each field that changes is recorded with who changed it (`user`, or the API `key`) and when."""
    fields = ["updated_at"]
    with transaction.atomic():
        flag = Flag.objects.select_for_update().select_related("line").get(pk=flag.pk)
        before = {f: getattr(flag, f) for f in (FlagEdit.EXPECTED_TEXT, FlagEdit.TAGS, FlagEdit.NOTE)}
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
        _record_edits(flag, before, user, key)
        if retag:
            aggregates.flag_entered(flag.pk)
            scores.results_changed(flag.bank_id)
        if rescore:
            for score in flag.scores.filter(control__isnull=True):
                scores.write_score(
                    flag,
                    None,
                    score.transcriber_id,
                    score.source,
                    None if score.failure == Score.ERROR else score.hypothesis,
                    flag.expected_text,
                    score.cost,
                    score.latency_s,
                    score.audio_s,
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
        scores.results_changed(flag.bank_id)


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
    try:
        with transaction.atomic():
            bank.save(update_fields=fields)
            scores.results_changed(bank.pk)  # its name and threshold are on its figures
    except IntegrityError:
        raise _name_taken(bank.organization, bank.name) from None
    bank.refresh_from_db(fields=["results_changed_at", "snapshots_wanted_at"])
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
        scores.results_changed(*bank_ids)
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
            scores.results_changed(bank.pk)
            scores.queue_lines(bank.organization_id, bank_lines(bank), [transcriber.pk])
    except IntegrityError:
        raise errors.BankFull(f"{bank} already has {MAX_CANDIDATES} candidates; remove one first.") from None
    return candidate


def do_remove_candidate(bank: Bank, transcriber: Transcriber) -> None:
    """Remove a candidate. Its transcriptions and scores stay, so adding it back costs nothing."""
    with transaction.atomic():
        Bank.objects.select_for_update().get(pk=bank.pk)
        bank.candidates.filter(transcriber=transcriber).delete()
        aggregates.candidates_changed(bank.pk)
        scores.results_changed(bank.pk)
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
        scores.results_changed(bank.pk)
        return Candidate.objects.bulk_create(
            [Candidate(bank=bank, transcriber_id=t, position=i) for i, t in enumerate(transcriber_ids)]
        )
