"""Dashboard views: parse (a form), find the object through its organization-scoped lookup (lookups.py), call
the action a person asked for or the screen's one read (queries), render. No view reads or writes a table itself."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from oncore.accounts.access import admin_required, admins_of, current_membership
from oncore.http import clip_response, id_in, query_without_page, redirect_next
from oncore.jinja import rows_html
from oncore.ratelimit import rate_limited

from .. import actions, queries
from ..actions import controls
from ..errors import ActionError, EstimateNotConfirmed
from ..forms import AddCandidateForm, BankForm, CallFilterForm, FlagForm, MoveFlagForm, ResultsFilterForm
from ..lib import alignment, scoring
from ..queries import jobs, lookups, people, snapshots
from ..queries.lines import bank_lines
from ..shapes import exports
from ..templatetags.scores import row_cells

PAGE_SIZE = 50
WINDOWS = [7, 14, 30, 60, 90]


def _window(request) -> int:
    return queries.clamp_window(request.GET.get("window", queries.DEFAULT_WINDOW_DAYS))


@require_GET
def home(request):
    """Admins go to the calls page; a member sees what they can do here and who to ask (nothing of transcriber
    testing: it spans every tenant's calls, so it is for organization admins)."""
    if not request.user.is_authenticated:
        return redirect("login")
    membership = current_membership(request)
    if membership is not None and membership.is_admin:
        return redirect("tt:calls")
    admins = admins_of(membership.organization) if membership else []
    return render(request, "home_member.html", {"membership": membership, "admins": admins})


# ---------------------------------------------------------------- calls


@require_GET
@admin_required
def calls(request):
    """The organization's calls, newest first, a keyset page at a time (?after=<cursor>), with "about N calls"
    when counting them exactly would be slow."""
    form = CallFilterForm(request.GET or None, organization=request.org)
    after = form.cleaned_data.get("after") if form.is_bound and form.is_valid() else None
    calls = queries.calls_page(request.org, after=after, size=PAGE_SIZE, **form.filters())
    return render(
        request,
        "transcriber_tests/calls.html",
        {
            "calls": calls,
            "rows_html": rows_html(
                "transcriber_tests/call_rows.jinja", {"calls": calls.calls, "tz": request.org.timezone}
            ),
            "after": after,
            "form": form,
            "query": query_without_page(request, "after"),
        },
        status=422 if form.errors else 200,
    )


@require_GET
@admin_required
def call_page(request, pk):
    """The call's lines, a page at a time (?page=N, or ?line=ID for the page that holds that line)."""
    screen = queries.call_screen(
        lookups.call(request.org, pk), request.GET.get("page"), id_in(request.GET.get("line"))
    )
    return render(
        request,
        "transcriber_tests/call.html",
        {
            "call": screen.call,
            "page": screen.page,
            "rows": screen.rows,
            "results": screen.results,
            "live": screen.live,
            "histories": screen.histories,
        },
    )


def _line_url(line) -> str:
    """The call page at this line (on whichever page of the call's lines holds it)."""
    return reverse("tt:call", args=[line.call_id]) + f"?line={line.pk}#line-{line.pk}"


@require_GET
@admin_required
def line_audio(request, pk):
    """The line's clip for playback (both channels, with its margin), with HTTP Range so the browser can seek."""
    line = lookups.line(request.org, pk)
    try:
        clip = queries.line_clip(line)
    except ActionError as exc:
        return HttpResponse(exc.message, status=404, content_type="text/plain")
    try:
        return clip_response(request, clip)
    except ValueError:
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{clip.wav_size}"
        return response


# ---------------------------------------------------------------- flags


def _line_fragment(request, line, form=None, status=200):
    """Re-render one line of the call page (after a flag change, or with a form open)."""
    screen = queries.line_screen(line)
    return render(
        request,
        "transcriber_tests/_line_row.html",
        {
            "row": screen.rows[0],
            "form": form,
            "call": screen.call,
            "results": screen.results,
            "histories": screen.histories,
        },
        status=status,
    )


@require_http_methods(["GET", "POST"])
@admin_required
def flag_line(request, pk):
    """GET: the inline flag form. POST: flag the line."""
    line = lookups.line(request.org, pk)
    if request.method == "GET":
        # The bank defaults to the one this admin flagged into last (or the only bank), and the form says so; no
        # bank is one choice away.
        bank, why = queries.remembered_bank(request.org, request.user)
        form = FlagForm(
            organization=request.org, line=line, initial={"expected_text": line.text, "bank": bank}
        )
        form.preselect(why)
        return _form(request, line, form)
    form = FlagForm(request.POST, organization=request.org, line=line)
    if form.is_valid():
        try:
            actions.do_flag_line(
                line,
                form.cleaned_data["expected_text"],
                bank=form.cleaned_data["bank"],
                tags=form.all_tags(),
                note=form.cleaned_data["note"],
                user=request.user,
                confirm_matches_live=form.cleaned_data["confirm_matches_live"],
            )
        except ActionError as exc:
            form.refused(exc)
    if form.errors:
        return _form(request, line, form, status=422)
    if request.htmx:
        return _line_fragment(request, line)
    messages.success(request, "Line flagged.")
    return redirect(_line_url(line))


def _form(request, line, form, flag=None, status=200):
    """The flag form: inline in the line's row for htmx, else on a page of its own (a plain form whose Cancel
    goes back to the line on its call's page)."""
    if request.htmx:
        return _line_fragment(request, line, form, status=status)
    return render(
        request,
        "transcriber_tests/flag_form_page.html",
        {"form": form, "line": line, "flag": flag, "cancel_url": _line_url(line)},
        status=status,
    )


@require_http_methods(["GET", "POST"])
@admin_required
def edit_flag(request, pk):
    flag = lookups.flag(request.org, pk)
    if request.method == "GET":
        return _form(
            request,
            flag.line,
            FlagForm(organization=request.org, line=flag.line, initial=FlagForm.initial_for(flag)),
            flag,
        )
    form = FlagForm(request.POST, organization=request.org, line=flag.line)
    if form.is_valid():
        try:
            actions.do_edit_flag(
                flag,
                expected_text=form.cleaned_data["expected_text"],
                tags=form.all_tags(),
                note=form.cleaned_data["note"],
                confirm_matches_live=form.cleaned_data["confirm_matches_live"],
                bank=form.cleaned_data["bank"],
                user=request.user,
            )
        except ActionError as exc:
            form.refused(exc)
    if form.errors:
        return _form(request, flag.line, form, flag, status=422)
    if request.htmx:
        return _line_fragment(request, flag.line)
    messages.success(request, "Flag saved.")
    return redirect(_line_url(flag.line))


@require_GET
@admin_required
def flag_results(request, pk):
    """A flagged line's results per candidate, with its control lines': the call page polls it until every
    candidate has finished (HTMX_STOP_POLLING)."""
    flag = lookups.flag(request.org, pk)
    found = queries.flag_results([flag]).get(flag.pk)
    if found is None:  # moved out of every bank meanwhile: nothing to wait for
        return HttpResponse("", status=HTMX_STOP_POLLING)
    return render(
        request,
        "transcriber_tests/_flag_results.html",
        {"res": found, "call": flag.line.call},
        status=200 if found.pending else HTMX_STOP_POLLING,
    )


@require_POST
@admin_required
def move_flag(request, pk):
    flag = lookups.flag(request.org, pk)
    form = MoveFlagForm(request.POST, organization=request.org)
    if not form.is_valid():
        messages.error(request, "Choose a bank of this organization.")
    else:
        try:
            actions.do_move_flag(flag, form.cleaned_data["bank"])
            messages.success(request, f"Flag moved to {form.cleaned_data['bank'] or 'no bank'}.")
        except ActionError as exc:
            messages.error(request, exc.message)
    return redirect_next(request, reverse("tt:unbanked_flags"))


@require_POST
@admin_required
def delete_flag(request, pk):
    flag = lookups.flag(request.org, pk)
    line = flag.line
    actions.do_delete_flag(flag)
    if request.htmx:
        return _line_fragment(request, line)
    messages.success(request, "Flag deleted.")
    return redirect("tt:call", line.call_id)


@require_GET
@admin_required
def unbanked_flags(request):
    flags = queries.flags_list(request.org, unbanked=True)
    page = Paginator(flags, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "transcriber_tests/unbanked.html",
        {
            "page": page,
            "banks": queries.banks_list(request.org),
        },
    )


# ---------------------------------------------------------------- banks


@require_GET
@admin_required
def banks(request):
    """The banks as a leaderboard over a window: each bank's leader, its accuracy and n, the threshold, the lead
    over the runner-up, the work still waiting and the window's flags."""
    window = _window(request)
    return render(
        request,
        "transcriber_tests/banks.html",
        {
            "board": queries.leaderboard(request.org, window),
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
    if request.method == "POST" and form.is_valid():
        transcriber = form.cleaned_data["transcriber"]
        try:
            actions.do_add_candidate(bank, transcriber, confirmed=form.cleaned_data["confirmed"])
        except EstimateNotConfirmed as exc:
            estimate = exc.estimate
        except ActionError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, _added(bank, transcriber))
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
            "chosen": form.cleaned_data.get("transcriber") if form.is_bound and form.is_valid() else None,
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


# ---------------------------------------------------------------- results and the turn table


@require_GET
@admin_required
@rate_limited("results")
def bank_results(request, pk):
    """The bank's figures from their newest snapshot (snapshots.py: computed when its results change), inside
    what is always fresh: the window, the filter and the work still waiting. The body polls (every 2 s) while
    work waits or newer figures are being computed, and stops (HTMX_STOP_POLLING) once neither is true."""
    bank = lookups.bank(request.org, pk)
    # ?tenant= or ?assistant=: the cards recomputed on that tenant's or assistant's calls.
    filters = ResultsFilterForm(request.GET, organization=request.org)
    frame = queries.results_frame(bank, _window(request), filters.group)
    figures = snapshots.results_of(bank, frame.window_days, group=frame.group, data=False)
    context = {
        "bank": bank,
        "r": frame,
        "figures": figures,
        "windows": WINDOWS,
        "queue": jobs.queue_status(request.org.pk) if frame.pending else {},
        "filters": filters,
    }
    if request.htmx and request.GET.get("fragment") == "progress":
        done = not frame.pending and not figures.stale
        return render(
            request,
            "transcriber_tests/_results_body.html",
            context,
            status=HTMX_STOP_POLLING if done else 200,
        )
    return render(request, "transcriber_tests/results.html", context, status=422 if filters.errors else 200)


@require_GET
@admin_required
@rate_limited("turns")
def turn_table(request, pk):
    bank = lookups.bank(request.org, pk)
    window = _window(request)
    kind = request.GET.get("kind", "")
    tag = request.GET.get("tag", "").replace("\x00", "")  # no tag holds one; PostgreSQL cannot compare it
    disagree = request.GET.get("disagree") == "1"
    pair, pair_of = _pair_filter(bank, request.GET)
    flagged_by = people.parse_flagger(request.GET.get("flagged_by", ""))
    screen = queries.turn_screen(
        bank,
        window,
        request.GET.get("page"),
        size=PAGE_SIZE,
        kind=kind,
        tag=tag,
        disagree=disagree,
        pair=pair,
        flagged_by=flagged_by,
    )
    return render(
        request,
        "transcriber_tests/turns.html",
        {
            "bank": bank,
            "page": screen.page,
            "rows": screen.rows,
            "candidates": screen.candidates,
            "screen": screen,
            "window": window,
            "kind": kind,
            "tag": tag,
            "disagree": disagree,
            "query": query_without_page(request),
            "windows": WINDOWS,
            "pair": pair and alignment.parse_pair(pair[1]),
            "pair_of": pair_of,
            "pair_token": pair[1] if pair else "",
            "flaggers": people.flaggers(request.org),
            "flagged_by": request.GET.get("flagged_by", "") if flagged_by else "",
            "rows_html": rows_html(
                "transcriber_tests/turn_rows.jinja",
                {
                    "rows": screen.rows,
                    "cells": row_cells(screen.rows),
                    "candidates": screen.candidates,
                    "tz": screen.timezone,
                },
            ),
        },
    )


def _pair_filter(bank, params):
    """The turn table's confusion-pair filter (?transcriber=<id>&pair=s:for>four): ((transcriber id, pair),
    the candidate) when both name one of the bank's candidates and a valid pair, else (None, None)."""
    token = (params.get("pair") or "").strip()
    transcriber = id_in(params.get("transcriber"))
    if not token or transcriber is None or alignment.parse_pair(token) is None:
        return None, None
    found = next(
        (c.transcriber for c in queries.candidates_of(bank) if c.transcriber_id == transcriber), None
    )
    return ((transcriber, token), found) if found else (None, None)


@require_GET
@admin_required
@rate_limited("exports")
def export_results(request, pk):
    bank = lookups.bank(request.org, pk)
    filters = ResultsFilterForm(request.GET, organization=request.org)
    if filters.errors:
        said = " ".join(message for errs in filters.errors.values() for message in errs)
        return HttpResponse(f"No results CSV for that filter: {said}", status=422, content_type="text/plain")
    return exports.results_csv(bank, _window(request), filters.group)


@require_GET
@admin_required
@rate_limited("exports")
def export_turns(request, pk):
    bank = lookups.bank(request.org, pk)
    return exports.turns_csv(bank, _window(request))
