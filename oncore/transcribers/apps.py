import pkgutil
from importlib import import_module

from django.apps import AppConfig


class TranscribersConfig(AppConfig):
    name = "oncore.transcribers"
    label = "transcribers"

    def ready(self):
        # Every module of engines/ is imported once: a provider's module registers it (providers.register), so a
        # new provider is found by being there (docs/transcribers.md, "Adding a provider").
        from . import engines

        for module in pkgutil.iter_modules(engines.__path__, f"{engines.__name__}."):
            if not module.ispkg:
                import_module(module.name)
