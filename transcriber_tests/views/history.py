"""A flag's whole edit history, the call page's "show all": every edit of its expected text, tags or note, newest
first, a page at a time (the call page shows the latest few beside the flag). Parse, look up, read, render."""

from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_GET

from oncore.accounts.access import admin_required

from ..queries import lookups, people

PAGE_SIZE = 100


@require_GET
@admin_required
def flag_history(request, pk):
    flag = lookups.flag(request.org, pk)
    page = Paginator(people.edits_of(flag).order_by("-at", "-id"), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    context = {
        "flag": flag,
        "history": people.history_of(flag),
        "page": page,
        "edits": [people.edit_of(e) for e in page.object_list],
    }
    return render(request, "transcriber_tests/flag_history.html", context)
