from django.apps import AppConfig


class TranscriberTestsConfig(AppConfig):
    name = "transcriber_tests"
