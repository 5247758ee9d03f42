"""Entity benchmark pages. Included from oncore/urls.py with path("benchmark/", include("benchmark.urls"))."""

from django.urls import include, path

from . import views

# The entity benchmark under the `bench:` namespace, the code-switching pages under `cs:`.
bench_patterns = [
    path("", views.run_list, name="runs"),
    path("runs/start/", views.run_start, name="run_start"),
    path("runs/<int:pk>/", views.run_page, name="run"),
    path("runs/<int:pk>/score/", views.run_score, name="run_score"),
    path("runs/<int:pk>/hits.csv", views.run_hits_csv, name="run_hits"),
    path("runs/<int:pk>/summary.json", views.run_summary_json, name="run_summary"),
    path("runs/<int:pk>/manifest.json", views.run_manifest_json, name="run_manifest"),
    path("compare/", views.compare, name="compare"),
    path("compare/diff.csv", views.compare_csv, name="compare_csv"),
]

urlpatterns = [
    path("codeswitch/", include("benchmark.cs_urls")),
    path("", include((bench_patterns, "bench"))),
]
