"""The transcriber testing API's routers, mounted under /api/v1/ by oncore.api (which holds the instance, the
authentication and the error shape). Every write goes through transcriber_tests.actions, every read through the
same queries as the dashboard."""

from . import banks, calls, flags, runs

routers = [
    ("", calls.catalogue),
    ("", calls.calls),
    ("", flags.router),
    ("", banks.banks),
    ("", banks.candidates),
    ("", banks.results),
    ("", runs.router),
    ("", banks.queue),
]
