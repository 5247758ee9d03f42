"""Code-switching pages, included under benchmark/codeswitch/."""

from django.urls import path

from . import views

app_name = "cs"

urlpatterns = [
    path("", views.dataset_list, name="datasets"),
    path("<int:pk>/", views.dataset_report, name="report"),
    path("<int:pk>/report.csv", views.dataset_csv, name="report_csv"),
    path("<int:pk>/report.json", views.dataset_json, name="report_json"),
]
