"""Every shared fixture lives in one plugin module, tests/fixtures.py; a folder's conftest.py holds only what
that folder alone uses."""

pytest_plugins = ["tests.fixtures"]
