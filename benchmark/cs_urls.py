"""Code-switching pages, included under benchmark/codeswitch/."""

from django.urls import path

from . import cs_views

urlpatterns = [
    path("", cs_views.dataset_list, name="cs_datasets"),
    path("<int:pk>/", cs_views.dataset_report, name="cs_report"),
    path("<int:pk>/report.csv", cs_views.dataset_csv, name="cs_report_csv"),
    path("<int:pk>/report.json", cs_views.dataset_json, name="cs_report_json"),
]
