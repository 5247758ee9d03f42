"""Benchmark pages. Included from oncore/urls.py with path("benchmark/", include("benchmark.urls")): the
entity benchmark under the `bench:` namespace, the code-switching pages under `cs:`."""

from django.urls import include, path

urlpatterns = [
    path("codeswitch/", include("benchmark.codeswitch.urls")),
    path("", include("benchmark.entity.urls")),
]
