from django.apps import AppConfig


class CallsConfig(AppConfig):
    name = "oncore.calls"
    label = "calls"
