"""The calls pages: the calls list, a call with its lines (where lines are flagged), a line's audio; and the
home page, which sends an admin to the calls."""

from django.core.cache import cache
from django.http import HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET
from markupsafe import Markup

from oncore.accounts.access import admin_required, admins_of, current_membership
from oncore.http import clip_response, id_in, query_without_page
from oncore.jinja import rows_html

from .. import queries
from ..errors import ActionError
from ..forms import CallFilterForm
from ..queries import cached, lookups, people
from ..queries.results import RESULTS_CACHE_SECONDS
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
    """A call screen's lines (queries.CallScreen) rendered by line_rows.jinja, with each flag's box (flag_boxes)
    and the flag form's HTML (`form_html`) under the line `form_line` when one is open."""
    flags = [row.flag for row in screen.rows if row.flag]
    return rows_html(
        "transcriber_tests/line_rows.jinja",
        {
            "rows": screen.rows,
            "call": screen.call,
            "boxes": flag_boxes(request, screen, flags) if flags else {},
            "csrf": get_token(request),
            "form_html": form_html,
            "form_line": form_line,
        },
    )


def box_key(flag, call) -> str:
    """The versions of what a flag's box shows, read with the call, the flag and its bank: the call's flags (every
    write to its flags and their items moves it under the call's lock: aggregates.lock_call, and every judge's
    pick), the flag's own (every edit and move saves it; settling it marks it settled) and its bank's settings (its
    name, number of controls, candidates and their names: scores.settings_changed). A score written on another
    call of the bank keeps this call's boxes; a pending cell moves on only by a score's write (a transcription's
    outcome is written with its scores), so a box waiting for its candidates is kept too, and polls for them."""
    bank = flag.bank
    return cached.key(
        "flag-box",
        flag.pk,
        call.flags_version,
        flag.updated_at.isoformat(),
        flag.settled,
        flag.bank_id,
        bank.settings_version if bank else "",
    )


def flag_boxes(request, screen, flags) -> dict:
    """{flag id: its box's HTML} (flag_box.jinja: all of the box but its actions), rendered once and kept by the
    versions of what it shows (box_key) for RESULTS_CACHE_SECONDS at most (a transcriber or person renamed in the
    Django admin shows after that), as the turn table's pages are. What the screen read already (a new flag's) is
    used as it is; the rest is read here, in a few queries whatever the number of boxes, for those not kept."""
    keys = {flag.pk: box_key(flag, screen.call) for flag in flags if flag.pk not in screen.histories}
    found = cache.get_many(list(keys.values()), version=cached.VERSION) if keys else {}
    missing = [flag for flag in flags if flag.pk in keys and keys[flag.pk] not in found]
    results, histories = screen.results, screen.histories
    if missing:
        results = {**results, **queries.flag_results(missing)}
        histories = {**histories, **people.histories([flag.pk for flag in missing])}
    boxes, keep = {}, {}
    helpers = results_helpers(request)
    for flag in flags:
        key = keys.get(flag.pk)
        if key in found:
            boxes[flag.pk] = Markup(found[key])
            continue
        boxes[flag.pk] = rows_html(
            "transcriber_tests/flag_box.jinja",
            {
                "flag": flag,
                "h": histories.get(flag.pk),
                "res": results.get(flag.pk),
                "call": screen.call,
                **helpers,
            },
        )
        if key:
            keep[key] = str(boxes[flag.pk])
    if keep:
        cache.set_many(keep, RESULTS_CACHE_SECONDS, version=cached.VERSION)
    return boxes


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
