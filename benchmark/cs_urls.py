"""Code-switching pages, included under benchmark/codeswitch/."""

from django.urls import path

from . import cs_views

app_name = "cs"

urlpatterns = [
    path("", cs_views.dataset_list, name="datasets"),
    path("<int:pk>/", cs_views.dataset_report, name="report"),
    path("<int:pk>/report.csv", cs_views.dataset_csv, name="report_csv"),
    path("<int:pk>/report.json", cs_views.dataset_json, name="report_json"),
]
