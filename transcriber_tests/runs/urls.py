"""Full-call run pages. Included from transcriber_tests/urls.py, namespace `runs:`."""

from django.urls import path

from ..views import runs as views

app_name = "runs"

urlpatterns = [
    path("banks/<int:pk>/runs/", views.bank_runs, name="bank_runs"),
    path("banks/<int:pk>/runs/new/", views.run_new, name="new"),
    path("calls/<int:pk>/run/", views.run_from_call, name="from_call"),
    path("runs/<int:pk>/", views.run_page, name="detail"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="cancel"),
    path("runs/<int:pk>/retry-judge/", views.run_retry_judge, name="retry_judge"),
    path("runs/<int:pk>/review/", views.run_review, name="review"),
    path("runs/<int:pk>/review/<int:line_pk>/", views.run_review_line, name="review_line"),
    path("runs/<int:pk>/lines.csv", views.run_export, name="export"),
]
