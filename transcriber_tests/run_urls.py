"""Full-call run pages. Included from transcriber_tests/urls.py, namespace `runs:`."""

from django.urls import path

from . import run_views

app_name = "runs"

urlpatterns = [
    path("banks/<int:pk>/runs/", run_views.bank_runs, name="bank_runs"),
    path("banks/<int:pk>/runs/new/", run_views.run_new, name="new"),
    path("calls/<int:pk>/run/", run_views.run_from_call, name="from_call"),
    path("runs/<int:pk>/", run_views.run_page, name="detail"),
    path("runs/<int:pk>/cancel/", run_views.run_cancel, name="cancel"),
    path("runs/<int:pk>/retry-judge/", run_views.run_retry_judge, name="retry_judge"),
    path("runs/<int:pk>/review/", run_views.run_review, name="review"),
    path("runs/<int:pk>/review/<int:line_pk>/", run_views.run_review_line, name="review_line"),
    path("runs/<int:pk>/lines.csv", run_views.run_export, name="export"),
]
