"""Entity benchmark pages: the runs with their headline figure (start a run, score a finished one), a run's
figures by tier with its three outputs, and the span diff between two runs.

Benchmark datasets and runs belong to no organization: they are the operator's. Every organization admin reads
the same runs; only staff users start or score one (a run bills the operator's vendor keys). Members get the
403 of the rest of the dashboard."""

import csv
import io
import json

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from oncore.accounts.access import benchmark_reader_required, staff_required
from oncore.csv import stream_csv
from oncore.transcribers.models import Transcriber

from .. import executor
from ..models import BenchmarkRun, Dataset
from ..plural import counted
from . import actions, reports, runs, scoring

TIER_CHOICES = [("A", "Tier A"), ("B", "Tier B"), ("AB", "Tiers A+B")]
ACTIVE = (BenchmarkRun.QUEUED, BenchmarkRun.RUNNING)


def _get_run_for_admin(request, pk) -> BenchmarkRun:
    """A benchmark run by id. Runs are global, so any organization admin may open any of them."""
    return get_object_or_404(BenchmarkRun.objects.select_related("dataset", "transcriber"), pk=pk)


class TierForm(forms.Form):
    """The tiers a page's figures count. Lenient: "ab" and "A+B" read as AB, anything unknown as A."""

    tiers = forms.CharField(
        required=False,
        label="Entity tiers",
        widget=forms.Select(choices=TIER_CHOICES, attrs={"data-submit-on-change": True}),
    )

    def clean_tiers(self) -> str:
        value = self.cleaned_data["tiers"].upper().replace("+", "")
        return value if value in scoring.TIER_CHOICES else "A"


def _tiers(request) -> str:
    form = TierForm(request.GET)
    return form.cleaned_data["tiers"] if form.is_valid() else "A"  # invalid only with a NUL character


class ScoreRunForm(forms.Form):
    allow_incomplete = forms.BooleanField(
        required=False, label="Score it as it stands", widget=forms.CheckboxInput(attrs={"value": "1"})
    )


class StartRunForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name", "-imported_at", "-id"))
    transcriber = forms.ModelChoiceField(
        queryset=Transcriber.catalogue().filter(enabled=True).order_by("display_name"),
        help_text="Every clip is sent to it; a paid vendor bills every clip.",
    )
    concurrency = forms.IntegerField(
        min_value=1,
        max_value=executor.MAX_CONCURRENCY,
        initial=executor.DEFAULT_CONCURRENCY,
        help_text="Clips sent at once.",
    )


class RunChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, run):
        return f"Run {run.pk}: {run.system_name} on {run.dataset}"


class CompareForm(forms.Form):
    a = RunChoiceField(queryset=BenchmarkRun.objects.none(), label="Run A")
    b = RunChoiceField(queryset=BenchmarkRun.objects.none(), label="Run B")
    tiers = forms.ChoiceField(choices=TIER_CHOICES, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        scored = BenchmarkRun.objects.filter(scored_at__isnull=False).select_related("dataset")
        self.fields["a"].queryset = scored.order_by("-created_at", "-id")
        self.fields["b"].queryset = scored.order_by("-created_at", "-id")

    def clean(self):
        data = super().clean()
        if data.get("a") and data.get("a") == data.get("b"):
            raise forms.ValidationError("Choose two different runs.")
        return data

    def diff(self) -> reports.RunDiff | None:
        """The span diff of a valid form; None (with the reason as a form error) when the runs cannot be
        compared."""
        if not self.is_valid():
            return None
        d = self.cleaned_data
        try:
            return reports.span_diff(d["a"], d["b"], d["tiers"] or "A")
        except ValueError as exc:
            self.add_error(None, str(exc))
            return None


class CompareFileForm(forms.Form):
    """A run against a hits CSV (a reference run's, as the dataset card publishes them, or any run's export)."""

    MAX_BYTES = 20 * 1024 * 1024

    a = RunChoiceField(queryset=BenchmarkRun.objects.none(), label="Run")
    hits = forms.FileField(
        label="Hits CSV", help_text="A .hits.csv file: span_key and found are required (see the guide)."
    )
    tiers = forms.ChoiceField(choices=TIER_CHOICES, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["a"].queryset = BenchmarkRun.objects.filter(scored_at__isnull=False).order_by(
            "-created_at", "-id"
        )
        self.fields["a"].widget.attrs["id"] = "id_file_a"
        self.fields["tiers"].widget.attrs["id"] = "id_file_tiers"

    def diff(self) -> reports.RunDiff | None:
        """The span diff of the run against the uploaded file; None (with the reason as a form error) when
        they cannot be compared."""
        if not self.is_valid():
            return None
        d = self.cleaned_data
        upload = d["hits"]
        try:
            if upload.size > self.MAX_BYTES:
                raise ValueError(f"{upload.name} is larger than {self.MAX_BYTES // 2**20} MB.")
            hits = actions.read_hits_csv(upload.read().decode("utf-8-sig"), upload.name)
            return reports.span_diff_with_file(d["a"], hits, d["tiers"] or "A")
        except UnicodeDecodeError:
            self.add_error("hits", "The file is not UTF-8 text: upload the .hits.csv as it was written.")
        except ValueError as exc:
            self.add_error(None, str(exc))
        return None


# ---------------------------------------------------------------- the runs


def _list_context(request, tiers: str) -> dict:
    rows = reports.run_list(tiers=tiers)
    return {
        "rows": rows,
        "tiers": tiers,
        "tier_form": TierForm(initial={"tiers": tiers}),
        "running": any(run.status in ACTIVE for run, _ in rows),
        "any_fixture": any(run.dataset.is_fixture for run, _ in rows),
    }


@require_GET
@benchmark_reader_required
def run_list(request):
    context = _list_context(request, _tiers(request))
    if request.htmx and request.GET.get("fragment") == "progress":
        # Polls stop (HTMX_STOP_POLLING) once no run is queued or running.
        return render(
            request,
            "benchmark/_runs_table.html",
            context,
            status=200 if context["running"] else HTMX_STOP_POLLING,
        )
    context["form"] = StartRunForm()
    return render(request, "benchmark/runs.html", context)


@require_POST
@staff_required
def run_start(request):
    form = StartRunForm(request.POST)
    if form.is_valid():
        d = form.cleaned_data
        active = BenchmarkRun.objects.filter(
            dataset=d["dataset"], transcriber=d["transcriber"], status__in=ACTIVE
        ).first()
        if active is not None:
            form.add_error(
                None,
                f"Run {active.pk} of {d['transcriber']} on this dataset is already {active.status}: "
                "a second run would send (and pay for) every clip again.",
            )
        else:
            try:
                run = runs.start_run(d["dataset"], d["transcriber"], concurrency=d["concurrency"])
            except executor.RunRefused as exc:
                form.add_error(None, str(exc))
            else:
                clips = counted(d["dataset"].clip_count, "clip")
                messages.success(request, f"Run {run.pk} queued: {run.system_name} over {clips}.")
                return redirect("bench:run", run.pk)
    context = _list_context(request, "A")
    context["form"] = form
    return render(request, "benchmark/runs.html", context, status=422)


# ---------------------------------------------------------------- one run


@require_GET
@benchmark_reader_required
def run_page(request, pk):
    run = _get_run_for_admin(request, pk)
    if request.htmx and request.GET.get("fragment") == "progress":
        # Polls stop (HTMX_STOP_POLLING) once the run is no longer queued or running.
        return render(
            request,
            "benchmark/_run_status.html",
            {"run": run, "score_form": ScoreRunForm()},
            status=200 if run.status in ACTIVE else HTMX_STOP_POLLING,
        )
    tiers = _tiers(request)
    scored = run.scored_at is not None
    return render(
        request,
        "benchmark/run.html",
        {
            "run": run,
            "tiers": tiers,
            "tier_form": TierForm(initial={"tiers": tiers}),
            "score_form": ScoreRunForm(),
            "headline": reports.headline(run, tiers) if scored else None,
            "table": reports.type_table(run, tiers) if scored else None,
            "gap": reports.subset_gap(run, tiers) if scored else None,
            "wer": (run.summary.get("wer") or {}).get("all") if scored else None,
            "clips": run.summary.get("clips") if scored else None,
            "active": run.status in ACTIVE,
        },
    )


@require_POST
@staff_required
def run_score(request, pk):
    run = _get_run_for_admin(request, pk)
    form = ScoreRunForm(request.POST)
    form.is_valid()  # always valid: the box is ticked or not
    try:
        card = actions.score_run(run, allow_incomplete=form.cleaned_data["allow_incomplete"])
    except actions.ScoringRefused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Run {run.pk} scored: {card.headline_text}.")
    return redirect("bench:run", run.pk)


def _not_scored(run) -> HttpResponse:
    return HttpResponse(
        f"Run {run.pk} is not scored yet: score it on its page first.", status=404, content_type="text/plain"
    )


@require_GET
@benchmark_reader_required
def run_hits_csv(request, pk):
    """The per-span hits CSV: the command's columns and rows, streamed with the dashboard's CSV safety."""
    run = _get_run_for_admin(request, pk)
    if run.scored_at is None:
        return _not_scored(run)
    rows = csv.reader(io.StringIO(reports.hits_csv_for_run(run)))
    next(rows)  # the header, given again by stream_csv
    return stream_csv(f"{run.label}.hits.csv", actions.HIT_COLUMNS, rows)


def _json_download(run, kind: str, data: dict) -> HttpResponse:
    if run.scored_at is None:
        return _not_scored(run)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"  # as actions.write_outputs writes it
    response = HttpResponse(text, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{run.label}.{kind}.json"'
    return response


@require_GET
@benchmark_reader_required
def run_summary_json(request, pk):
    run = _get_run_for_admin(request, pk)
    return _json_download(run, "summary", run.summary)


@require_GET
@benchmark_reader_required
def run_manifest_json(request, pk):
    run = _get_run_for_admin(request, pk)
    return _json_download(run, "manifest", run.manifest)


# ---------------------------------------------------------------- two runs


@require_http_methods(["GET", "POST"])
@benchmark_reader_required
def compare(request):
    """GET: two runs (?a=&b=). POST: a run against an uploaded hits CSV."""
    if request.method == "POST":
        file_form = CompareFileForm(request.POST, request.FILES)
        form = CompareForm(initial={"a": request.POST.get("a"), "tiers": request.POST.get("tiers")})
        result = file_form.diff()
        a, b = (file_form.cleaned_data["a"], None) if result else (None, None)
    else:
        initial = {"a": request.GET.get("a"), "tiers": _tiers(request)}
        form = (
            CompareForm(request.GET)
            if "a" in request.GET and "b" in request.GET
            else CompareForm(initial=initial)
        )
        file_form = CompareFileForm(initial=initial)
        result = form.diff() if form.is_bound else None
        a, b = (form.cleaned_data["a"], form.cleaned_data["b"]) if result else (None, None)
    return render(
        request,
        "benchmark/compare.html",
        {
            "form": form,
            "file_form": file_form,
            "result": result,
            "a": a,
            "b": b,  # None when the other side is a hits file: result.run_b is its name
            "a_name": f"Run {a.pk}" if a else "",
            "b_name": f"Run {b.pk}" if b else (result.run_b if result else ""),
            "query": request.GET.urlencode(),
        },
        status=422 if form.errors or file_form.errors else 200,
    )


@require_GET
@benchmark_reader_required
def compare_csv(request):
    form = CompareForm(request.GET)
    result = form.diff()
    if result is None:
        reasons = " ".join(e for errors in form.errors.values() for e in errors)
        return HttpResponse(reasons, status=422, content_type="text/plain")
    name = f"{form.cleaned_data['a'].label}-vs-run-{result.run_b}.diff.csv"
    return stream_csv(name, reports.DIFF_COLUMNS, result.csv_rows())
