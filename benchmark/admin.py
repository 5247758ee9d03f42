from django.contrib import admin

from .models import BenchmarkRun, Dataset, ImportProblem


class ImportProblemInline(admin.TabularInline):
    model = ImportProblem
    extra = 0
    can_delete = False
    readonly_fields = ["clip_id", "source_file", "source_row", "reason"]


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "version",
        "revision",
        "clip_count",
        "span_count",
        "excluded_count",
        "imported_at",
    ]
    readonly_fields = ["source_files", "clip_count", "span_count", "excluded_count", "imported_at"]
    inlines = [ImportProblemInline]


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "system_name",
        "model",
        "dataset",
        "status",
        "clips_done",
        "clips_failed",
        "clips_total",
        "scored_at",
    ]
    list_filter = ["status", "source"]
    list_select_related = ["dataset"]
    readonly_fields = [
        "summary",
        "manifest",
        "clips_total",
        "clips_done",
        "clips_failed",
        "cost",
        "scored_at",
        "matcher_version",
    ]
