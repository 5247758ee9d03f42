"""The settings the test suite runs with: the project's own, with a SECRET_KEY for tests.

With DEBUG off (as in production, and as the tests run) the project refuses to start without a SECRET_KEY.
pytest-django imports the settings before any conftest code runs, so the key is provided here, in the module
pytest.ini names (DJANGO_SETTINGS_MODULE in pyproject.toml). A key already in the environment wins, and
processes the tests start inherit this one."""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-never-used-outside-the-test-suite")

from oncore.settings import *  # noqa: E402, F403

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    import tempfile

    # A file, as `make run` has, not Django's shared in-memory database: there, SQLite locks tables between
    # connections without waiting (the browser walk's page polls failed while the queue wrote), where a file
    # database waits for the other connection's transaction, as the web process and the worker do.
    DATABASES["default"]["TEST"] = {"NAME": f"{tempfile.gettempdir()}/oncore-tests-{os.getpid()}.sqlite3"}  # noqa: F405
