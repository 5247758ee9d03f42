from django.apps import AppConfig


class TranscriberTestsConfig(AppConfig):
    name = "transcriber_tests"

    def ready(self):
        from . import events  # noqa: F401  (registers the webhook events)
