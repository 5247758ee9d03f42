"""The calls pages: the calls list, a call with its lines (where lines are flagged), a line's audio; and the
home page, which sends an admin to the calls."""

from django.http import HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from oncore.accounts.access import admin_required, admins_of, current_membership
from oncore.http import clip_response, id_in, query_without_page
from oncore.jinja import rows_html

from .. import queries
from ..errors import ActionError
from ..forms import CallFilterForm
from ..queries import lookups
from ..templatetags import scores

PAGE_SIZE = 50  # calls a page lists, and flags, and turn-table items


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


@require_GET
@admin_required
def calls(request):
    """The organization's calls, newest first, a keyset page at a time (?after=<cursor>), with "about N calls"
    when counting them exactly would be slow."""
    form = CallFilterForm(request.GET or None, organization=request.org)
    after = form.cleaned_data.get("after") if form.is_bound and form.is_valid() else None
    calls = queries.calls_page(
        request.org, after=after, size=PAGE_SIZE, columns=queries.calls.ROW_COLUMNS, **form.filters()
    )
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
            "live": screen.live,
            "rows_html": lines_html(request, screen),
        },
    )


def lines_html(request, screen, form_html="", form_line=None):
    """A call screen's lines (queries.CallScreen) rendered by line_rows.jinja, with the flag form's HTML
    (`form_html`) under the line `form_line` when one is open."""
    return rows_html(
        "transcriber_tests/line_rows.jinja",
        {
            "rows": screen.rows,
            "call": screen.call,
            "results": screen.results,
            "histories": screen.histories,
            "form_html": form_html,
            "form_line": form_line,
            **results_helpers(request),
        },
    )


def results_helpers(request) -> dict:
    """What the line and flag-results row templates call: the request's CSRF token and the score cell helpers."""
    return {
        "csrf": get_token(request),
        "score_cell": scores.score_cell,
        "marks_legend": scores.marks_legend,
        "entity_legend": scores.entity_legend,
    }


def line_url(line) -> str:
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
