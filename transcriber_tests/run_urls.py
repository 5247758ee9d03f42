"""Full-call run pages. Included from transcriber_tests/urls.py with path("", include("transcriber_tests.run_urls"))."""

from django.urls import path

from . import run_views

urlpatterns = [
    path("banks/<int:pk>/runs/", run_views.bank_runs, name="bank_runs"),
    path("banks/<int:pk>/runs/new/", run_views.run_new, name="run_new"),
    path("calls/<int:pk>/run/", run_views.run_from_call, name="run_from_call"),
    path("runs/<int:pk>/", run_views.run_page, name="run"),
    path("runs/<int:pk>/cancel/", run_views.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/retry-judge/", run_views.run_retry_judge, name="run_retry_judge"),
    path("runs/<int:pk>/review/", run_views.run_review, name="run_review"),
    path("runs/<int:pk>/review/<int:line_pk>/", run_views.run_review_line, name="run_review_line"),
    path("runs/<int:pk>/lines.csv", run_views.run_export, name="run_export"),
]
