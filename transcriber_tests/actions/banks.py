"""Every write of banks and their candidates: make, rename, set the organization's timezone (its days are counted
again), delete; add a candidate (after its backfill estimate is confirmed: the bank's lines it has not
transcribed yet are queued for it), remove, move and reorder candidates. Scores follow through scores.py, the
totals through aggregates in the same transaction."""

from dataclasses import dataclass
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Max

from oncore.formats import money
from oncore.templatetags.oncore_tags import dollars
from oncore.transcribers.engines.base import cost_for, key_problem
from oncore.transcribers.models import Transcriber

from .. import aggregates, errors, handles
from ..models import MAX_CANDIDATES, Bank, Candidate
from ..queries.lines import bank_lines, untranscribed
from . import scores


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
            scores.settings_changed(bank.pk)  # its name and threshold are on its figures
    except IntegrityError:
        raise _name_taken(bank.organization, bank.name) from None
    bank.refresh_from_db(fields=["settings_version", "results_changed_at", "snapshots_wanted_at"])
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
            f"{dollars(estimate.cost)}).{warning} Confirm the estimate to add it.",
            estimate,
        )
    if estimate.lines:
        handles.check_capacity(bank.organization_id)
    try:
        with transaction.atomic():
            Bank.objects.select_for_update().get(pk=bank.pk)
            position = (
                (bank.candidates.aggregate(m=Max("position"))["m"] + 1) if bank.candidates.exists() else 0
            )
            candidate = Candidate.objects.create(bank=bank, transcriber=transcriber, position=position)
            aggregates.candidates_changed(bank.pk)
            scores.settings_changed(bank.pk)
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
        scores.settings_changed(bank.pk)
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
        scores.settings_changed(bank.pk)
        return Candidate.objects.bulk_create(
            [Candidate(bank=bank, transcriber_id=t, position=i) for i, t in enumerate(transcriber_ids)]
        )
