from django.apps import AppConfig


class TranscribersConfig(AppConfig):
    name = "oncore.transcribers"
    label = "transcribers"
