import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oncore.settings")
application = get_wsgi_application()

from oncore.warmup import warm_up_if_enabled  # noqa: E402 (needs the app set up)

warm_up_if_enabled()
