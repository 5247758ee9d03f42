"""Flag pages: flag a line, edit, move or delete a flag (each answered with the call page's line again, or the
whole page without JavaScript), a flag's results as they come in, the flags in no bank, and a flag's whole edit
history."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from oncore.accounts.access import admin_required
from oncore.http import redirect_next
from oncore.jinja import rows_html

from .. import actions, queries
from ..errors import ActionError
from ..forms import FlagForm, MoveFlagForm
from ..queries import lookups, people
from .calls import PAGE_SIZE, line_url, lines_html, results_helpers


def _line_fragment(request, line, form=None, status=200, screen=None):
    """Re-render one line of the call page (after a flag change, or with a form open); `screen`: the line's
    screen when the view has it already (queries.new_flag_screen)."""
    screen = screen or queries.line_screen(line)
    form_html = ""
    if form is not None:
        row = screen.rows[0]
        form_html = render_to_string(
            "transcriber_tests/_flag_form.html", {"form": form, "line": row.line, "flag": row.flag}, request
        )
    return HttpResponse(lines_html(request, screen, form_html, line.pk), status=status)


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
    flag = None
    if form.is_valid():
        try:
            flag = actions.do_flag_line(
                line,
                form.cleaned_data["expected_text"],
                bank=form.cleaned_data["bank"],
                tags=form.all_tags(),
                note=form.cleaned_data["note"],
                user=request.user,
                confirm_matches_live=form.cleaned_data["confirm_matches_live"],
                later=True,  # the queue draws its controls, scores it and counts it
            )
        except ActionError as exc:
            form.refused(exc)
    if form.errors:
        return _form(request, line, form, status=422)
    if request.htmx:
        return _line_fragment(request, line, screen=queries.new_flag_screen(line, flag))
    messages.success(request, "Line flagged.")
    return redirect(line_url(line))


def _form(request, line, form, flag=None, status=200):
    """The flag form: inline in the line's row for htmx, else on a page of its own (a plain form whose Cancel
    goes back to the line on its call's page)."""
    if request.htmx:
        return _line_fragment(request, line, form, status=status)
    return render(
        request,
        "transcriber_tests/flag_form_page.html",
        {"form": form, "line": line, "flag": flag, "cancel_url": line_url(line)},
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
    return redirect(line_url(flag.line))


@require_GET
@admin_required
def flag_results(request, pk):
    """A flagged line's results per candidate, with its control lines': the call page polls it until every
    candidate has finished (HTMX_STOP_POLLING)."""
    flag = lookups.flag(request.org, pk)
    found = queries.flag_results([flag]).get(flag.pk)
    if found is None:  # moved out of every bank meanwhile: nothing to wait for
        return HttpResponse("", status=HTMX_STOP_POLLING)
    html = rows_html(
        "transcriber_tests/flag_results.jinja",
        {"res": found, "call": flag.line.call, **results_helpers(request)},
    )
    return HttpResponse(html, status=200 if found.pending else HTMX_STOP_POLLING)


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


HISTORY_PAGE_SIZE = 100  # edits a flag's history page lists


@require_GET
@admin_required
def flag_history(request, pk):
    flag = lookups.flag(request.org, pk)
    page = Paginator(people.edits_of(flag).order_by("-at", "-id"), HISTORY_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    context = {
        "flag": flag,
        "history": people.history_of(flag),
        "page": page,
        "edits": [people.edit_of(e) for e in page.object_list],
    }
    return render(request, "transcriber_tests/flag_history.html", context)
