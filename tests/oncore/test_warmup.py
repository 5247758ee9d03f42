"""The served process's warm-up (oncore.wsgi runs it): the URLconf imported, every template compiled before the
first request, each app's warm_up run."""

from django.apps import apps
from django.template import engines
from django.template.loaders.cached import Loader as CachedLoader

from oncore import warmup


def test_it_compiles_every_template_before_the_first_request(monkeypatch, settings):
    loader = engines["django"].engine.template_loaders[0]
    assert isinstance(loader, CachedLoader)  # with DEBUG off, as served
    loader.reset()
    warmed = []
    monkeypatch.setattr(apps.get_app_config("benchmark"), "warm_up", lambda: warmed.append("benchmark"))

    warmup.warm_up()

    compiled = {key.split("-")[0] for key in loader.get_template_cache}
    names = set(warmup.template_names(settings.BASE_DIR / "templates"))
    assert "transcriber_tests/results.html" in names and names <= compiled
    assert warmed == ["benchmark"]
