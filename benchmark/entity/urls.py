"""Entity benchmark pages, under the `bench:` namespace; included from benchmark/urls.py."""

from django.urls import path

from . import views

app_name = "bench"

urlpatterns = [
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
