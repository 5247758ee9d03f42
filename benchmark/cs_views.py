"""Code-switching evaluation pages: the imported datasets, and one report per dataset with its CSV and JSON.
Datasets and runs are global like the entity benchmark's; admins only (members get 403).

Included from benchmark/urls.py with path("codeswitch/", include("benchmark.cs_urls"))."""

from django.http import JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.safestring import mark_safe
from django.utils.text import slugify
from django.views.decorators.http import require_GET

from oncore.accounts.access import admin_required
from oncore.csv import stream_csv

from . import cs_report
from .models import CsDataset


def _pct(value) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _points(value) -> str:
    return "–" if value is None else f"{value * 100:+.1f}"


def _judged(judged) -> str:
    if judged is None or not judged.clips:
        return "not judged"
    return f"{_pct(judged.rate)} ({judged.clips} clips)"


def display_rows(report) -> list[dict]:
    """The report's rows with their figures formatted for the page."""
    rows = []
    for row in report.rows:
        loc = row.location
        rows.append(
            {
                "row": row,
                "wer": [(_pct(row.wer[c]), row.clips[c]) for c in cs_report.CONDITIONS],
                "cost_matrix": (_points(row.cost_vs_matrix.mean_delta), row.cost_vs_matrix.paired),
                "cost_english": (_points(row.cost_vs_english.mean_delta), row.cost_vs_english.paired),
                "languages": [_pct(row.per_language.get(lang)) for lang in report.languages],
                "embedded": f"{_pct(loc.embedded_share)} ({loc.embedded_errors} of "
                f"{loc.embedded_errors + loc.matrix_errors})",
                "semantic": _judged(row.semantic),
                "zero_share": _pct(row.semantic.zero_share) if row.semantic else "–",
                "answers": _judged(row.answers),
                "judge_failed": (row.semantic.failed if row.semantic else 0)
                + (row.answers.failed if row.answers else 0),
                "parts": [row.model.any_error, row.model.error_size] if row.model else [],
            }
        )
    return rows


def _get_dataset_for_admin(request, pk) -> CsDataset:
    """A code-switched dataset by id; datasets are global, so any organization admin may open one."""
    return get_object_or_404(CsDataset, pk=pk)


@require_GET
@admin_required
def dataset_list(request):
    datasets = CsDataset.objects.order_by("name")
    return render(request, "benchmark/cs/datasets.html", {"datasets": datasets})


@require_GET
@admin_required
def dataset_report(request, pk):
    dataset = _get_dataset_for_admin(request, pk)
    report = cs_report.dataset_report(dataset)
    pictures = {k: mark_safe(v) for k, v in cs_report.report_pictures(report).items()}  # escaped in cs_report
    context = {"dataset": dataset, "r": report, "rows": display_rows(report), "pictures": pictures}
    return render(request, "benchmark/cs/report.html", context)


@require_GET
@admin_required
def dataset_csv(request, pk):
    dataset = _get_dataset_for_admin(request, pk)
    name = f"codeswitch-{slugify(dataset.name) or dataset.pk}.csv"
    return stream_csv(name, cs_report.CSV_COLUMNS, cs_report.csv_rows(dataset))


@require_GET
@admin_required
def dataset_json(request, pk):
    dataset = _get_dataset_for_admin(request, pk)
    response = JsonResponse(
        cs_report.report_json(cs_report.dataset_report(dataset)), json_dumps_params={"indent": 2}
    )
    response["Content-Disposition"] = (
        f'attachment; filename="codeswitch-{slugify(dataset.name) or dataset.pk}.json"'
    )
    return response
