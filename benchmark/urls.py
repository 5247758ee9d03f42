"""Entity benchmark pages. Included from oncore/urls.py with path("benchmark/", include("benchmark.urls"))."""

from django.urls import include, path

from . import views

urlpatterns = [
    path("", views.run_list, name="benchmark_runs"),
    path("runs/start/", views.run_start, name="benchmark_run_start"),
    path("runs/<int:pk>/", views.run_page, name="benchmark_run"),
    path("runs/<int:pk>/score/", views.run_score, name="benchmark_run_score"),
    path("runs/<int:pk>/hits.csv", views.run_hits_csv, name="benchmark_run_hits"),
    path("runs/<int:pk>/summary.json", views.run_summary_json, name="benchmark_run_summary"),
    path("runs/<int:pk>/manifest.json", views.run_manifest_json, name="benchmark_run_manifest"),
    path("compare/", views.compare, name="benchmark_compare"),
    path("compare/diff.csv", views.compare_csv, name="benchmark_compare_csv"),
    path("codeswitch/", include("benchmark.cs_urls")),
]
