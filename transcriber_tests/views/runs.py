"""Full-call run pages: the runs of a bank, a new run (estimate, then confirm), the run page with its
progress, the review of the judge's labels, and the CSV of every line. Each view parses, authorizes through
one helper per model, calls one action (actions/runs.py) or query (queries/runs.py) and renders."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from oncore import llm
from oncore.accounts.access import admin_required
from oncore.http import ids_in, query_without_page
from oncore.ratelimit import rate_limited

from ..actions import runs as actions
from ..errors import ActionError, EstimateNotConfirmed, RunInProgress
from ..forms import RunForm
from ..lib.runs import left_out_summary
from ..models import RunLine
from ..queries import lookups
from ..queries import runs as queries
from ..shapes import exports

PAGE_SIZE = 50


# ---------------------------------------------------------------- the runs of a bank


@require_GET
@admin_required
def bank_runs(request, pk):
    bank = lookups.bank(request.org, pk)
    page = Paginator(queries.runs_for_bank(bank), PAGE_SIZE).get_page(request.GET.get("page"))
    counts = queries.counts_for_runs(page.object_list)
    rows = [(run, counts.get(run.pk, {})) for run in page.object_list]
    return render(
        request,
        "transcriber_tests/runs/list.html",
        {
            "bank": bank,
            "page": page,
            "rows": rows,
            "active": queries.active_run(request.org.pk),
        },
    )


# ---------------------------------------------------------------- a new run


@require_http_methods(["GET", "POST"])
@admin_required
def run_new(request, pk):
    """GET: choose calls and the candidate. POST: show the estimate; POST with confirmed: start the run."""
    bank = lookups.bank(request.org, pk)
    if request.method == "GET":
        raw = request.GET.getlist("call")
    else:
        raw = request.POST.getlist("calls") + request.POST.get("more_calls", "").replace(";", ",").split(",")
    selected = ids_in(raw)
    choices = queries.call_choices(request.org, bank, selected)
    leader = queries.default_candidate(bank)
    form = RunForm(
        request.POST or None, bank=bank, call_choices=choices, leader=leader, initial={"calls": selected}
    )
    estimate, in_progress, status = None, None, 200
    if request.method == "POST" and form.is_valid():
        candidate = form.cleaned_data["candidate"]
        try:
            run = actions.do_start_run(
                bank,
                form.call_ids(),
                candidate=candidate,
                confirmed=form.cleaned_data["confirmed"],
                user=request.user,
            )
        except EstimateNotConfirmed as exc:
            estimate = exc.estimate
        except RunInProgress as exc:
            in_progress = exc.detail.get("run")
            form.add_error(None, exc.message)
        except ActionError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(
                request, f"Run {run.pk} queued: {run.candidate} over {len(form.call_ids())} call(s)."
            )
            return redirect("runs:detail", run.pk)
    if form.errors:
        status = 422
    return render(
        request,
        "transcriber_tests/runs/new.html",
        {
            "bank": bank,
            "form": form,
            "estimate": estimate,
            "left_out_summary": left_out_summary(estimate.left_out) if estimate else "",
            "in_progress": in_progress,
            "leader": leader,
            "max_calls": actions.MAX_CALLS,
            "judge_configured": llm.judge_configured(),
            "chosen_candidate": form.cleaned_data.get("candidate")
            if form.is_bound and form.is_valid()
            else None,
            "call_ids": form.call_ids() if form.is_bound and form.is_valid() else [],
        },
        status=status,
    )


@require_GET
@admin_required
def run_from_call(request, pk):
    """Start a run from a call: straight to the new-run page of the bank its flags are in, or choose a bank."""
    call = lookups.call(request.org, pk)
    banks = queries.banks_for_call(request.org, call)
    if len(banks) == 1:
        return redirect(reverse("runs:new", args=[banks[0].pk]) + f"?call={call.pk}")
    return render(request, "transcriber_tests/runs/choose_bank.html", {"call": call, "banks": banks})


# ---------------------------------------------------------------- the run page


def _run_context(request, run):
    which = request.GET.get("label", "")
    if which not in queries.LINE_FILTERS:
        which = ""
    page = Paginator(queries.run_line_rows(run, which), PAGE_SIZE).get_page(request.GET.get("page"))
    left_out = queries.left_out_of(run)
    s = queries.run_summary(run)
    return {
        "run": run,
        "s": s,
        "awaiting_review": s.review_sample - s.reviewed,
        "patterns": queries.patterns_with_examples(run),
        "calls": queries.run_calls(run),
        "page": page,
        "which": which,
        "by_label": queries.BY_LABEL,
        "filters": [(key, label) for key, (label, _) in queries.LINE_FILTERS.items()],
        "query": query_without_page(request),
        "agreement_by_version": queries.review_agreement(run),
        "estimate_total": queries.estimated_total(run),
        "left_out": left_out,
        "left_out_summary": left_out_summary(left_out),
    }


@require_GET
@admin_required
def run_page(request, pk):
    run = lookups.run(request.org, pk)
    context = _run_context(request, run)
    if request.htmx and request.GET.get("fragment") == "progress":
        # Polls stop (HTMX_STOP_POLLING) once the run is done, cancelled or failed.
        return render(
            request,
            "transcriber_tests/runs/_run_body.html",
            context,
            status=200 if run.is_active else HTMX_STOP_POLLING,
        )
    return render(request, "transcriber_tests/runs/run.html", context)


@require_POST
@admin_required
def run_cancel(request, pk):
    run = lookups.run(request.org, pk)
    try:
        actions.do_cancel_run(run)
        messages.success(request, f"Run {run.pk} cancelled. What it transcribed so far is kept.")
    except ActionError as exc:
        messages.error(request, exc.message)
    return redirect("runs:detail", run.pk)


@require_POST
@admin_required
def run_retry_judge(request, pk):
    run = lookups.run(request.org, pk)
    try:
        actions.do_retry_judge(run)
        messages.success(request, "The judge carries on from where it stopped.")
    except ActionError as exc:
        messages.error(request, exc.message)
    return redirect("runs:detail", run.pk)


# ---------------------------------------------------------------- review


@require_GET
@admin_required
def run_review(request, pk):
    run = lookups.run(request.org, pk)
    which = request.GET.get("show", "")
    if which not in queries.REVIEW_FILTERS:
        which = ""
    page = Paginator(queries.review_lines(run, which), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "transcriber_tests/runs/review.html",
        {
            "run": run,
            "s": queries.run_summary(run),
            "page": page,
            "which": which,
            "filters": [(key, label) for key, (label, _) in queries.REVIEW_FILTERS.items()],
            "query": query_without_page(request),
            "agreement_by_version": queries.review_agreement(run),
            "label_choices": RunLine.LABELS,
            "back": request.GET.urlencode(),
        },
    )


REVIEW_BACK = ("show", "page")  # what the review page's address keeps after a plain (no JavaScript) answer


def _review_back(request, run, run_line) -> str:
    """The review page the answer came from (its filter and page), at the line answered."""
    back = QueryDict(request.POST.get("back", "")).copy()
    for key in list(back):
        if key not in REVIEW_BACK:
            del back[key]
    query = f"?{back.urlencode()}" if back else ""
    return reverse("runs:review", args=[run.pk]) + query + f"#rl-{run_line.pk}"


def _review_answer(request, run, run_line, error: str = ""):
    """htmx's answer to a review: the line's row, and the sample's progress swapped in out of band."""
    context = {
        "run": run,
        "rl": run_line,
        "label_choices": RunLine.LABELS,
        "error": error,
        "back": request.POST.get("back", ""),
        "s": queries.run_summary(run),
        "agreement_by_version": queries.review_agreement(run),
    }
    return render(
        request, "transcriber_tests/runs/_review_answer.html", context, status=422 if error else 200
    )


@require_POST
@admin_required
def run_review_line(request, pk, line_pk):
    run = lookups.run(request.org, pk)
    run_line = lookups.run_line(run, line_pk)
    label = request.POST.get("label")
    error = ""
    if label not in dict(RunLine.LABELS):
        error = "Choose the label you would give the line."
    else:
        try:
            actions.do_review_line(run_line, label, request.user)
        except ActionError as exc:
            error = exc.message
    if request.htmx:
        return _review_answer(request, run, run_line, error)
    if error:
        messages.error(request, error)
    return redirect(_review_back(request, run, run_line))


# ---------------------------------------------------------------- CSV


@require_GET
@admin_required
@rate_limited("exports")
def run_export(request, pk):
    return exports.run_csv(lookups.run(request.org, pk))
