from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "oncore.webhooks"
    label = "webhooks"
