"""The served process's warm-up (oncore.wsgi runs it): the URLconf imported, every template compiled before the
first request, each app's warm_up run; ONCORE_WARM_UP turns it off with any false value, and a value that is not a
boolean stops the start."""

import runpy
from pathlib import Path

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.template import engines
from django.template.loaders.cached import Loader as CachedLoader

from oncore import warmup

SETTINGS_FILE = Path(warmup.__file__).with_name("settings.py")


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


def settings_with(monkeypatch, **env) -> dict:
    """settings.py as a process with these variables would read it."""
    for name, value in {"DEBUG": "1", **env}.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS_FILE))


@pytest.mark.parametrize(
    ("value", "warms"), [("0", False), ("false", False), ("off", False), ("1", True), ("yes", True)]
)
def test_it_turns_the_warm_up_off_with_any_false_value_and_on_with_any_true_one(
    monkeypatch, settings, value, warms
):
    read = settings_with(monkeypatch, ONCORE_WARM_UP=value)["ONCORE"]["WARM_UP"]
    assert read is warms
    settings.ONCORE = {**settings.ONCORE, "WARM_UP": read}
    warmed = []
    monkeypatch.setattr(warmup, "warm_up", lambda: warmed.append(1))
    monkeypatch.setattr(warmup.gc, "freeze", lambda: None)  # the test process keeps collecting as before
    warmup.warm_up_if_enabled()
    assert warmed == ([1] if warms else [])


def test_it_warms_up_unless_told_otherwise_and_refuses_to_start_on_a_value_that_is_not_a_boolean(monkeypatch):
    monkeypatch.delenv("ONCORE_WARM_UP", raising=False)
    assert settings_with(monkeypatch)["ONCORE"]["WARM_UP"] is True
    with pytest.raises(
        ImproperlyConfigured, match="ONCORE_WARM_UP='maybe' is not a boolean; use one of 1/0, true/false"
    ):
        settings_with(monkeypatch, ONCORE_WARM_UP="maybe")
