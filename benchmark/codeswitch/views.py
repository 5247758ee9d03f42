"""Code-switching evaluation pages: the imported datasets, and one report per dataset with its CSV and JSON.
Datasets and runs are the operator's like the entity benchmark's; organization admins and staff read them
(members get 403).

Included from benchmark/urls.py with path("codeswitch/", include("benchmark.codeswitch.urls"))."""

from django.db.models import Prefetch
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.safestring import mark_safe
from django.utils.text import slugify
from django.views.decorators.http import require_GET
from django_htmx.http import HTMX_STOP_POLLING

from oncore.accounts.access import benchmark_reader_required
from oncore.csv import stream_csv

from ..models import CsDataset, CsRun
from . import pictures as cs_pictures
from . import report


def _get_dataset_for_admin(request, pk) -> CsDataset:
    """A code-switched dataset by id; datasets are global, so any organization admin may open one."""
    return get_object_or_404(CsDataset, pk=pk)


@require_GET
@benchmark_reader_required
def dataset_list(request):
    """The datasets with their runs' progress; the list polls itself while a run is queued or running."""
    runs = CsRun.objects.select_related("transcriber").order_by("created_at", "id")
    datasets = list(CsDataset.objects.order_by("name").prefetch_related(Prefetch("runs", queryset=runs)))
    active = any(run.status in (CsRun.QUEUED, CsRun.RUNNING) for d in datasets for run in d.runs.all())
    context = {"datasets": datasets, "active": active}
    if request.htmx and request.GET.get("fragment") == "progress":
        return render(
            request, "benchmark/cs/_datasets_table.html", context, status=200 if active else HTMX_STOP_POLLING
        )
    return render(request, "benchmark/cs/datasets.html", context)


@require_GET
@benchmark_reader_required
def dataset_report(request, pk):
    dataset = _get_dataset_for_admin(request, pk)
    figures = report.dataset_report(dataset)
    pictures = {k: mark_safe(v) for k, v in cs_pictures.report_pictures(figures).items()}  # escaped there
    context = {"dataset": dataset, "r": figures, "pictures": pictures}
    return render(request, "benchmark/cs/report.html", context)


@require_GET
@benchmark_reader_required
def dataset_csv(request, pk):
    dataset = _get_dataset_for_admin(request, pk)
    name = f"codeswitch-{slugify(dataset.name) or dataset.pk}.csv"
    return stream_csv(name, report.CSV_COLUMNS, report.csv_rows(dataset))


@require_GET
@benchmark_reader_required
def dataset_json(request, pk):
    dataset = _get_dataset_for_admin(request, pk)
    response = JsonResponse(
        report.report_json(report.dataset_report(dataset)), json_dumps_params={"indent": 2}
    )
    response["Content-Disposition"] = (
        f'attachment; filename="codeswitch-{slugify(dataset.name) or dataset.pk}.json"'
    )
    return response
