"""Every write of flags: flag a line (with its expected text; into a bank or none), edit it (each change kept in
its history, FlagEdit), move it to another bank or none, delete it. A flag entering a bank draws its control lines
(controls.py), has its live transcript scored as stored and its lines queued for the bank's candidates (scores.py),
and is counted in the bank's totals (aggregates) in the same transaction; a flag leaving one is taken out of them.
A flag made by a request (the call page's form) is written alone, unsettled, and the queue does the rest of making
it (settle): until then it counts nowhere."""

from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from oncore.calls.models import Call, Line

from .. import aggregates, errors, handles
from ..lib import scoring
from ..models import Bank, Flag, FlagEdit, JudgePick, Score
from ..models.history import name_of
from ..queries.lines import why_not_flaggable
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
    candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
    scores.enter_items(flag, drawn, candidate_ids, own_line=True)


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
    later=False,
) -> Flag:
    """Flag a caller line with what was said, made by `user` (the dashboard) or `key` (an organization API key).
    `later`: write the flag only and leave the rest of making it to the queue (settle), as a request does: it
    is saved unsettled, and the queue retires the controls its line served, draws its own, scores it and counts
    it in its bank."""
    if not (Line.call.is_cached(line) and Call.tenant.is_cached(line.call)):  # as lookups.line reads it
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
        handles.check_capacity(organization_id)
    try:
        with transaction.atomic(), scores.changes():
            flag = Flag.objects.create(
                organization_id=organization_id,
                line=line,
                bank=bank,
                expected_text=expected_text,
                tags=Flag.encode_tags(tags),
                note=note or "",
                created_by=user,
                created_by_key=key,
                settled=not later,
            )
            Call.objects.filter(pk=line.call_id).update(n_flags=F("n_flags") + 1)
            if later:
                handles.SETTLE_FLAG.later(flag.pk)
            else:
                _settle(flag, rng)
    except IntegrityError:
        raise _flag_exists(line) from None
    return flag


def _settle(flag: Flag, rng=None) -> None:
    """The rest of making a flag: the controls its line served are retired, and in a bank it enters it."""
    controls.retire(flag.line, rng)
    if flag.bank is not None:
        _enter_bank(flag, flag.bank, rng)


def settle(flag_id: int, rng=None) -> bool:
    """Do the rest of making a flag that its request left to the queue (do_flag_line's `later`), in the bank it
    is in now (it may have been moved meanwhile). False when there is nothing to do: it is settled already, or
    deleted."""
    with transaction.atomic(), scores.changes():
        aggregates.lock_call(flag=flag_id)  # the call before the flag (aggregates.lock_call)
        flag = (
            Flag.objects.select_for_update(of=("self",))
            .select_related("line__call", "bank")
            .filter(pk=flag_id, settled=False)
            .first()
        )
        if flag is None:
            return False
        flag.settled = True
        flag.save(update_fields=["settled"])
        _settle(flag, rng)
    return True


def settle_waiting(older_than_s: float = 0.0) -> int:
    """Settle every flag still unsettled that was made more than `older_than_s` seconds ago (the queue's task for
    it was lost, or the queue is run in this process: drain). Returns how many."""
    made_before = timezone.now() - timedelta(seconds=older_than_s)
    ids = (
        Flag.objects.filter(settled=False, created_at__lte=made_before)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    return sum(settle(pk) for pk in list(ids))


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
        handles.check_capacity(flag.organization_id)
    with transaction.atomic(), scores.changes():
        call_id = aggregates.lock_call(flag=flag.pk)  # the call before the flag (aggregates.lock_call)
        flag = Flag.objects.select_for_update().select_related("line__call").get(pk=flag.pk)
        if flag.bank_id == (bank.pk if bank else None):
            return flag
        handles.BUILD_BOXES.later(call_id)
        if not flag.settled:  # the queue enters it into the bank it is in when it settles it
            flag.bank = bank
            flag.joined_at = timezone.now()
            flag.save(update_fields=["bank", "joined_at", "updated_at"])
            return flag
        scores.results_changed(flag.bank_id)
        aggregates.flag_leaving(flag.pk)
        flag.controls.all().delete()  # with their scores and picks
        _drop_pick(flag)  # asked again over the new bank's candidates
        flag.bank = bank
        flag.joined_at = timezone.now()  # it counts in the new bank from today
        flag.save(update_fields=["bank", "joined_at", "updated_at"])
        if bank is not None:
            _enter_bank(flag, bank, rng)
    return flag


def _drop_pick(flag) -> None:
    """Remove the judge's pick on a flagged line: its expected text or its bank changed, so it is asked again."""
    JudgePick.objects.filter(flag=flag, control__isnull=True).delete()


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
    with transaction.atomic(), scores.changes():
        call_id = aggregates.lock_call(flag=flag.pk)  # the call before the flag (aggregates.lock_call)
        handles.BUILD_BOXES.later(call_id)
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
            _drop_pick(flag)
            scores.ask_picks([flag.line_id])
            scores.scores_written(flag.organization_id, [flag.line_id])
        if bank is not KEEP and (bank.pk if bank else None) != flag.bank_id:
            flag = do_move_flag(flag, bank)
    return flag


def do_delete_flag(flag: Flag) -> None:
    """Delete a flag with its controls and scores. Transcriptions stay: another bank may use them."""
    with transaction.atomic(), scores.changes():
        aggregates.flag_leaving(flag.pk)
        call_id = Line.objects.filter(pk=flag.line_id).values_list("call_id", flat=True).first()
        if flag.delete()[0]:
            Call.objects.filter(pk=call_id).update(n_flags=F("n_flags") - 1)
        scores.results_changed(flag.bank_id)
