"""The banks pages: the banks list (the leaderboard), make, edit or delete a bank, draw its control lines again, and
its candidates (add after the backfill estimate, move, remove)."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from oncore.accounts.access import admin_required

from .. import actions, queries
from ..actions import controls, vocabularies
from ..errors import ActionError, EstimateNotConfirmed
from ..forms import AddCandidateForm, BankForm
from ..lib import scoring
from ..queries import lookups, snapshots
from ..queries.lines import bank_lines
from .results import WINDOWS, window_of


@require_GET
@admin_required
def banks(request):
    """The banks as a leaderboard over a window: each bank's leader, its accuracy and n, the threshold, the lead
    over the runner-up, the work still waiting and the window's flags."""
    window = window_of(request)
    return render(
        request,
        "transcriber_tests/banks.html",
        {
            "board": snapshots.with_entities(queries.leaderboard(request.org, window), window),
            "window": window,
            "days": queries.window_days_covered(window, request.org.zone),
            "windows": WINDOWS,
            "trust_rule": scoring.TRUST_RULE,
            "live_model_reason": queries.LIVE_MODEL_REASON,
        },
    )


@require_http_methods(["GET", "POST"])
@admin_required
def bank_new(request):
    form = BankForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            bank = actions.do_create_bank(request.org, **form.action_kwargs())
        except ActionError as exc:
            form.add_error("name", exc.message)
        else:
            messages.success(request, f"Bank {bank.name} created. Add candidates to compare.")
            return redirect("tt:bank_candidates", bank.pk)
    return render(
        request, "transcriber_tests/bank_form.html", {"form": form}, status=422 if form.errors else 200
    )


@require_http_methods(["GET", "POST"])
@admin_required
def bank_edit(request, pk):
    bank = lookups.bank(request.org, pk)
    form = BankForm(request.POST or None, initial=BankForm.initial_for(bank))
    if request.method == "POST" and form.is_valid():
        before = bank.controls_per_flag
        try:
            actions.do_update_bank(bank, **form.action_kwargs())
        except ActionError as exc:
            form.add_error("name", exc.message)
        else:
            if bank.controls_per_flag != before and controls.estimate_redraw(bank).flags:
                # The flags already in it keep their controls unless the admin draws them again: offer it here.
                messages.success(
                    request, "Bank saved. Flags already in it keep their controls unless you draw them again."
                )
                return redirect("tt:bank_edit", bank.pk)
            messages.success(request, "Bank saved.")
            return redirect("tt:bank", bank.pk)
    return render(
        request,
        "transcriber_tests/bank_form.html",
        {"form": form, "bank": bank, "redraw": controls.estimate_redraw(bank)},
        status=422 if form.errors else 200,
    )


@require_POST
@admin_required
def bank_redraw_controls(request, pk):
    """Draw the controls of the bank's flags again to its setting (the estimate was shown on the settings page)."""
    bank = lookups.bank(request.org, pk)
    try:
        done = controls.do_redraw(bank, confirmed=request.POST.get("confirmed") == "on")
    except ActionError as exc:
        messages.error(request, exc.message)
        return redirect("tt:bank_edit", bank.pk)
    messages.success(
        request,
        f"Controls drawn again for {done.flags} flag{'s' if done.flags != 1 else ''}: {done.added} added, "
        f"{done.removed} removed; the candidates are transcribing the new ones.",
    )
    return redirect("tt:bank", bank.pk)


@require_POST
@admin_required
def bank_delete(request, pk):
    bank = lookups.bank(request.org, pk)
    name = bank.name
    actions.do_delete_bank(bank)
    messages.success(request, f"Bank {name} deleted. Its flags are kept, in no bank.")
    return redirect("tt:banks")


@require_http_methods(["GET", "POST"])
@admin_required
def bank_candidates(request, pk):
    """List, add (estimate, then confirm), reorder and remove candidates."""
    bank = lookups.bank(request.org, pk)
    form = AddCandidateForm(request.POST or None, bank=bank)
    estimate = None
    chosen = None
    if request.method == "POST" and form.is_valid():
        transcriber = chosen = form.cleaned_data["transcriber"]
        vocabulary = form.cleaned_data["vocabulary"]
        confirmed = form.cleaned_data["confirmed"]
        try:
            if vocabulary is not None:
                chosen = vocabularies.vocabulary_transcriber(transcriber, vocabulary)
                actions.do_add_candidate(bank, chosen, confirmed=confirmed)
            else:
                actions.do_add_candidate(bank, transcriber, confirmed=confirmed)
        except EstimateNotConfirmed as exc:
            estimate = exc.estimate
        except ActionError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, _added(bank, chosen))
            return redirect("tt:bank_candidates", bank.pk)
    candidates = queries.candidates_of(bank)
    return render(
        request,
        "transcriber_tests/bank_candidates.html",
        {
            "bank": bank,
            "candidates": candidates,
            "form": form,
            "estimate": estimate,
            "chosen": chosen,
            "chosen_base": form.cleaned_data.get("transcriber")
            if form.is_bound and form.is_valid()
            else None,
            "chosen_vocabulary": form.cleaned_data.get("vocabulary")
            if form.is_bound and form.is_valid()
            else None,
            "full": len(candidates) >= 8,
        },
        status=422 if form.errors else 200,
    )


def _added(bank, transcriber) -> str:
    """What adding a candidate set going: its transcriptions waiting, or nothing (an empty bank, or all reused)."""
    waiting = queries.pending_for_bank(bank, [transcriber.pk])
    if waiting:
        return (
            f"{transcriber} added; it is transcribing the bank's {waiting} line{'s' if waiting != 1 else ''}."
        )
    if bank_lines(bank).exists():
        return (
            f"{transcriber} added; it had already transcribed every line of the bank, so its scores are in."
        )
    return (
        f"{transcriber} added. The bank has no flagged lines yet: it transcribes each line flagged into it."
    )


@require_POST
@admin_required
def candidate_move(request, pk, transcriber_pk):
    bank = lookups.bank(request.org, pk)
    transcriber = lookups.candidate(bank, transcriber_pk)
    actions.do_move_candidate(bank, transcriber, up=request.POST.get("direction") == "up")
    return redirect("tt:bank_candidates", bank.pk)


@require_POST
@admin_required
def candidate_remove(request, pk, transcriber_pk):
    bank = lookups.bank(request.org, pk)
    transcriber = lookups.candidate(bank, transcriber_pk)
    actions.do_remove_candidate(bank, transcriber)
    messages.success(request, f"{transcriber} removed. Its scores are kept if you add it back.")
    return redirect("tt:bank_candidates", bank.pk)
