"""Full-call run pages: the runs of a bank, a new run (estimate, then confirm), the run page with its
progress, the review of the judge's labels, and the CSV of every line."""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, Exists, OuterRef, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from oncore import llm
from oncore.accounts.access import admin_required
from oncore.calls.models import Call
from oncore.transcribers.models import Transcriber

from . import exports, runs
from .errors import ActionError, EstimateNotConfirmed, RunInProgress
from .models import Bank, Flag, Run, RunLine

PAGE_SIZE = 50
CALL_CHOICES = 30


def _get_bank_for_admin(request, pk) -> Bank:
    return get_object_or_404(Bank, pk=pk, organization=request.org)


def _get_run_for_admin(request, pk) -> Run:
    """A run by its id, in the request's organization: reachable even after its bank was deleted."""
    return get_object_or_404(Run.objects.select_related("candidate", "bank", "created_by"), pk=pk,
                             organization=request.org)


def _query_without_page(request) -> str:
    q = request.GET.copy()
    q.pop("page", None)
    q.pop("fragment", None)
    return q.urlencode()


# ---------------------------------------------------------------- the runs of a bank


@require_GET
@admin_required
def bank_runs(request, pk):
    bank = _get_bank_for_admin(request, pk)
    qs = runs.runs_for_bank(bank).annotate(
        n_calls=Count("run_calls", distinct=True),
    )
    page = Paginator(qs, PAGE_SIZE).get_page(request.GET.get("page"))
    counts = runs.counts_for_runs(page.object_list)
    rows = [(run, counts.get(run.pk, {})) for run in page.object_list]
    return render(request, "transcriber_tests/runs/list.html", {
        "bank": bank, "page": page, "rows": rows, "active": runs.active_run(request.org.pk),
    })


# ---------------------------------------------------------------- a new run


class RunForm(forms.Form):
    candidate = forms.ModelChoiceField(queryset=Transcriber.objects.none(), required=False,
                                       empty_label="The bank's leader")
    calls = forms.TypedMultipleChoiceField(coerce=int, required=False, widget=forms.CheckboxSelectMultiple)
    more_calls = forms.CharField(required=False, label="Other call ids",
                                 help_text="Comma separated, for calls not listed above.")
    confirmed = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, bank: Bank, call_choices, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["candidate"].queryset = Transcriber.objects.filter(candidacies__bank=bank).order_by(
            "candidacies__position"
        )
        self.fields["calls"].choices = [(c.pk, str(c.pk)) for c in call_choices]

    def clean_more_calls(self):
        raw = self.cleaned_data["more_calls"].replace(";", ",").replace(" ", ",")
        try:
            return [int(part) for part in raw.split(",") if part.strip()]
        except ValueError:
            raise forms.ValidationError("Call ids are whole numbers, separated by commas.") from None

    def call_ids(self) -> list[int]:
        return list(dict.fromkeys(list(self.cleaned_data["calls"]) + self.cleaned_data["more_calls"]))


def _call_choices(request, bank, selected):
    """Calls to offer: those with a flag in this bank first, then the latest recorded ones, plus any selected."""
    flagged = Flag.objects.filter(line__call=OuterRef("pk"), bank=bank)
    base = Call.objects.filter(tenant__organization=request.org).select_related("tenant", "assistant")
    offered = list(
        base.filter(recorded=True).annotate(flagged=Exists(flagged), n_lines=Count("lines"))
        .order_by("-flagged", "-started_at", "-id")[:CALL_CHOICES]
    )
    missing = [pk for pk in selected if pk not in {c.pk for c in offered}]
    if missing:
        offered += list(base.filter(pk__in=missing).annotate(flagged=Exists(flagged), n_lines=Count("lines")))
    return offered


@require_http_methods(["GET", "POST"])
@admin_required
def run_new(request, pk):
    """GET: choose calls and the candidate. POST: show the estimate; POST with confirmed: start the run."""
    bank = _get_bank_for_admin(request, pk)
    if request.method == "GET":
        raw = request.GET.getlist("call")
    else:
        raw = request.POST.getlist("calls") + request.POST.get("more_calls", "").replace(";", ",").split(",")
    selected = list(dict.fromkeys(int(c) for c in (r.strip() for r in raw) if c.isdigit()))
    choices = _call_choices(request, bank, selected)
    form = RunForm(request.POST or None, bank=bank, call_choices=choices, initial={"calls": selected})
    estimate, in_progress, status = None, None, 200
    if request.method == "POST" and form.is_valid():
        candidate = form.cleaned_data["candidate"]
        try:
            run = runs.start_run(bank, form.call_ids(), candidate=candidate,
                                 confirmed=form.cleaned_data["confirmed"], user=request.user)
        except EstimateNotConfirmed:
            estimate = runs.estimate_run(bank, form.call_ids(), candidate)
        except RunInProgress as exc:
            in_progress = exc.detail.get("run")
            form.add_error(None, exc.message)
        except ActionError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, f"Run {run.pk} queued: {run.candidate} over {len(form.call_ids())} call(s).")
            return redirect("runs:detail", run.pk)
    if form.errors:
        status = 422
    return render(request, "transcriber_tests/runs/new.html", {
        "bank": bank, "form": form, "choices": choices, "selected": set(selected), "estimate": estimate,
        "in_progress": in_progress, "leader": runs.default_candidate(bank), "max_calls": runs.MAX_CALLS,
        "judge_configured": llm.judge_configured(),
        "chosen_candidate": form.cleaned_data.get("candidate") if form.is_bound and form.is_valid() else None,
        "call_ids": form.call_ids() if form.is_bound and form.is_valid() else [],
    }, status=status)


@require_GET
@admin_required
def run_from_call(request, pk):
    """Start a run from a call: straight to the new-run page of the bank its flags are in, or choose a bank."""
    call = get_object_or_404(Call, pk=pk, tenant__organization=request.org)
    flagged = Bank.objects.filter(organization=request.org, flags__line__call=call).distinct()
    banks = list(flagged) or list(Bank.objects.filter(organization=request.org))
    if len(banks) == 1:
        return redirect(reverse("runs:new", args=[banks[0].pk]) + f"?call={call.pk}")
    return render(request, "transcriber_tests/runs/choose_bank.html", {"call": call, "banks": banks})


# ---------------------------------------------------------------- the run page


def _patterns_with_examples(run, per_pattern=3):
    patterns = list(run.patterns.all())
    examples = {}
    for rl in RunLine.objects.filter(pattern__in=patterns).select_related("line").order_by("position"):
        bucket = examples.setdefault(rl.pattern_id, [])
        if len(bucket) < per_pattern:
            bucket.append(rl)
    return [(p, examples.get(p.pk, [])) for p in patterns]


def _run_context(request, run):
    which = request.GET.get("label", "")
    if which not in runs.LINE_FILTERS:
        which = ""
    page = Paginator(runs.run_line_rows(run, which), PAGE_SIZE).get_page(request.GET.get("page"))
    return {
        "run": run, "s": runs.run_summary(run), "patterns": _patterns_with_examples(run),
        "calls": list(run.calls.order_by("run_calls__position")), "page": page, "which": which,
        "filters": [(key, label) for key, (label, _) in runs.LINE_FILTERS.items()],
        "query": _query_without_page(request),
    }


@require_GET
@admin_required
def run_page(request, pk):
    run = _get_run_for_admin(request, pk)
    context = _run_context(request, run)
    if request.htmx and request.GET.get("fragment") == "progress":
        # Polls stop (HTMX_STOP_POLLING) once the run is done, cancelled or failed.
        return render(request, "transcriber_tests/runs/_run_body.html", context, status=200 if run.is_active else HTMX_STOP_POLLING)
    return render(request, "transcriber_tests/runs/run.html", context)


@require_POST
@admin_required
def run_cancel(request, pk):
    run = _get_run_for_admin(request, pk)
    try:
        runs.cancel_run(run)
        messages.success(request, f"Run {run.pk} cancelled. What it transcribed so far is kept.")
    except ActionError as exc:
        messages.error(request, exc.message)
    return redirect("runs:detail", run.pk)


@require_POST
@admin_required
def run_retry_judge(request, pk):
    run = _get_run_for_admin(request, pk)
    try:
        runs.retry_judge(run)
        messages.success(request, "The judge carries on from where it stopped.")
    except ActionError as exc:
        messages.error(request, exc.message)
    return redirect("runs:detail", run.pk)


# ---------------------------------------------------------------- review


REVIEW_FILTERS = {
    "": ("Whole sample", Q()),
    "todo": ("Not reviewed yet", Q(review_agrees__isnull=True)),
    "agreed": ("Agreed", Q(review_agrees=True)),
    "disagreed": ("Disagreed", Q(review_agrees=False)),
}


@require_GET
@admin_required
def run_review(request, pk):
    run = _get_run_for_admin(request, pk)
    which = request.GET.get("show", "")
    if which not in REVIEW_FILTERS:
        which = ""
    lines = run.lines.filter(in_review=True).filter(REVIEW_FILTERS[which][1]).select_related("line__call")
    page = Paginator(lines.order_by("position"), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "transcriber_tests/runs/review.html", {
        "run": run, "s": runs.run_summary(run), "page": page, "which": which,
        "filters": [(key, label) for key, (label, _) in REVIEW_FILTERS.items()], "query": _query_without_page(request),
    })


@require_POST
@admin_required
def run_review_line(request, pk, line_pk):
    run = _get_run_for_admin(request, pk)
    run_line = get_object_or_404(RunLine.objects.select_related("line__call"), pk=line_pk, run=run)
    answer = request.POST.get("agrees")
    if answer not in ("yes", "no"):
        messages.error(request, "Answer agree or disagree.")
        return redirect("runs:review", run.pk)
    try:
        runs.review_line(run_line, answer == "yes", request.user)
    except ActionError as exc:
        messages.error(request, exc.message)
        return redirect("runs:review", run.pk)
    if request.htmx:
        return render(request, "transcriber_tests/runs/_review_row.html", {"run": run, "rl": run_line})
    return redirect(reverse("runs:review", args=[run.pk]) + f"#rl-{run_line.pk}")


# ---------------------------------------------------------------- CSV


RUN_LINE_COLUMNS = [
    "run_id", "candidate", "bank", "call_id", "tenant", "line_id", "line_position", "start_s", "end_s",
    "flagged", "expected_text", "live_text", "candidate_text", "candidate_failed", "candidate_error", "differs",
    "label", "label_source", "reasoning", "pattern", "candidate_wer", "live_wer", "calibration", "replay_text",
    "replay_matches", "in_review_sample", "review",
]


def _yes(value) -> str:
    return "" if value is None else ("yes" if value else "no")


def run_csv_rows(run):
    lines = run.lines.select_related("line__call__tenant", "pattern").order_by("position")
    for rl in lines.iterator(chunk_size=1000):
        line = rl.line
        yield [
            run.pk, run.candidate.display_name, run.bank_name, line.call_id, line.call.tenant.name, line.pk,
            line.position, line.start_s, line.end_s, _yes(bool(rl.expected_text)), rl.expected_text, rl.live_text,
            rl.candidate_text, _yes(rl.candidate_failed) if rl.compared else "", rl.candidate_error,
            _yes(rl.differs) if rl.compared else "", rl.label, rl.label_source, rl.reasoning,
            rl.pattern.name if rl.pattern else "", "" if rl.candidate_wer is None else round(rl.candidate_wer, 4),
            "" if rl.live_wer is None else round(rl.live_wer, 4), _yes(rl.calibration), rl.replay_text,
            _yes(rl.replay_matches), _yes(rl.in_review),
            {True: "agree", False: "disagree"}.get(rl.review_agrees, ""),
        ]


@require_GET
@admin_required
def run_export(request, pk):
    run = _get_run_for_admin(request, pk)
    name = f"run-{run.pk}-{slugify(run.candidate.display_name)}.csv"
    return exports.stream_csv(name, RUN_LINE_COLUMNS, run_csv_rows(run))
