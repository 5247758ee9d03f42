"""What a served process builds before its first request, so no admin waits for it after a restart (the first
load of a page cost 200-500 ms more than the next before this, and a bank's results page 3.5 s more): the URLconf
and the views it imports, every template compiled (the cached template loader keeps them for the life of the
process), the API's schema, and what each app says its pages need loaded (an AppConfig's `warm_up()`: the benchmark's language
detector models, about 3.5 s and 200 MB, which every results page with flags needs). Called by oncore.wsgi
once the app is made, so `manage.py` commands and the tests do not pay for it; a deployment's readiness probe
(GET /healthz) answers once it is done. `ONCORE_WARM_UP=0` (or false, no, off) turns it off: read at start-up
through oncore.config, where a value that is not a boolean stops the start."""

import gc
import logging
import time
from pathlib import Path

from oncore.api import api
from oncore.config import config

log = logging.getLogger(__name__)


def template_names(directory: Path, suffix: str = ".html") -> list[str]:
    """The names of the templates under a template folder, as a view asks for them."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob(f"*{suffix}") if p.is_file())


def warm_up() -> float:
    """Import the URLconf, compile every template of every engine and run each app's warm_up(); returns the
    seconds it took."""
    from django.apps import apps
    from django.template import engines
    from django.template.utils import get_app_template_dirs
    from django.urls import get_resolver

    started = time.perf_counter()
    get_resolver().url_patterns  # noqa: B018 (imports every urls module and the views they name)
    for engine in engines.all():
        folders = [Path(d) for d in engine.dirs]
        if getattr(engine, "app_dirs", False):
            folders += [Path(d) for d in get_app_template_dirs("templates")]
        suffix = ".jinja" if engine.name == "jinja2" else ".html"  # oncore/jinja.py: the row templates
        for folder in folders:
            for name in template_names(folder, suffix):
                try:
                    engine.get_template(name)
                except Exception as exc:  # a template that fails here fails its own request the same way
                    log.warning("warm-up: template %s did not compile: %s", name, exc)
    api.get_openapi_schema()  # built once per process: the reference page and openapi.json copy it
    for app in apps.get_app_configs():
        if hasattr(app, "warm_up"):
            app.warm_up()
    seconds = time.perf_counter() - started
    log.info("warm-up: URLconf, templates and the apps' warm-ups done in %.2f s", seconds)
    return seconds


def warm_up_if_enabled() -> None:
    if config().warm_up:
        warm_up()
    # What the process built so far lives as long as it does: the garbage collector no longer walks it at each
    # collection (hundreds of thousands of objects of the speech and statistics libraries), which spared a
    # request's share of those pauses.
    gc.collect()
    gc.freeze()
