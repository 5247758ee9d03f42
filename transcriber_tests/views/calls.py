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
from ..queries import boxes, cached, lookups
from ..queries.results import RESULTS_CACHE_SECONDS

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


def flag_boxes(request, screen, flags) -> dict:
    """{flag id: its box's HTML} (queries/boxes.py): as the queue stored it when its key is still the current one,
    else as rendered by a read before and kept RESULTS_CACHE_SECONDS at most (as the turn table's pages are), else
    rendered now (and kept). What the screen read already (a new flag's) is rendered from it."""
    found, keys = {}, {}
    for flag in flags:
        if flag.pk in screen.histories:
            continue
        key = boxes.key(flag)
        box = boxes.stored(flag, key)
        if box is not None:
            found[flag.pk] = box
        else:
            keys[flag.pk] = key
    kept = cache.get_many(list(keys.values()), version=cached.VERSION) if keys else {}
    found.update({pk: Markup(kept[k]) for pk, k in keys.items() if k in kept})
    missing = [flag for flag in flags if flag.pk not in found]
    if missing:
        rendered = boxes.render(missing, screen.call, screen.results, screen.histories)
        keep = {keys[pk]: str(html) for pk, html in rendered.items() if pk in keys}
        if keep:
            cache.set_many(keep, RESULTS_CACHE_SECONDS, version=cached.VERSION)
        found.update(rendered)
    return found


def results_helpers(request) -> dict:
    """What the line and flag-results row templates call: the request's CSRF token and the score cell helpers."""
    return {"csrf": get_token(request), **boxes.HELPERS}


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
