"""The vocabularies pages: the organization's vocabularies (names, menu items, street names, product codes) with
who changed what; make, edit (terms one per line) and delete one. A bank's candidate sends one in its vendor's own
option (docs/vocabularies.md)."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from oncore.accounts.access import admin_required

from ..actions import vocabularies as actions
from ..errors import ActionError
from ..forms import VocabularyForm
from ..queries import vocabularies as queries


@require_GET
@admin_required
def vocabularies(request):
    return render(
        request,
        "transcriber_tests/vocabularies.html",
        {"rows": queries.vocabulary_rows(request.org), "edits": queries.recent_edits(request.org)},
    )


def _save(request, form, vocabulary=None):
    d = form.cleaned_data
    kwargs = {"name": d["name"], "terms": d["terms"], "assistant": d["assistant"], "user": request.user}
    if vocabulary is None:
        return actions.do_create_vocabulary(request.org, **kwargs)
    return actions.do_update_vocabulary(vocabulary, **kwargs)


@require_http_methods(["GET", "POST"])
@admin_required
def vocabulary_form(request, pk=None):
    vocabulary = queries.vocabulary(request.org, pk) if pk is not None else None
    initial = VocabularyForm.initial_for(vocabulary) if vocabulary else None
    form = VocabularyForm(request.POST or None, initial=initial, organization=request.org)
    if request.method == "POST" and form.is_valid():
        try:
            saved = _save(request, form, vocabulary)
        except ActionError as exc:
            form.add_error("terms" if "term" in exc.message.lower() else "name", exc.message)
        else:
            messages.success(request, f"Vocabulary {saved.name} saved: {len(saved.terms)} terms.")
            return redirect("tt:vocabularies")
    return render(
        request,
        "transcriber_tests/vocabulary_form.html",
        {
            "form": form,
            "vocabulary": vocabulary,
            "candidates": queries.candidates_with(vocabulary) if vocabulary else [],
        },
        status=422 if form.errors else 200,
    )


@require_POST
@admin_required
def vocabulary_delete(request, pk):
    vocabulary = queries.vocabulary(request.org, pk)
    name = vocabulary.name
    try:
        actions.do_delete_vocabulary(vocabulary, user=request.user)
    except ActionError as exc:
        messages.error(request, exc.message)
        return redirect("tt:vocabulary_edit", pk)
    messages.success(request, f"Vocabulary {name} deleted.")
    return redirect("tt:vocabularies")
