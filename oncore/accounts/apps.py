from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "oncore.accounts"
    label = "accounts"
