"""The transcriber testing API: its routers, mounted under /api/v1/ on oncore.api's instance (which holds the
authentication and the error shape), and its error codes (errors.py). Every write goes through an action:
transcriber_tests.actions (flags, banks, candidates), transcriber_tests.runs.actions (full-call runs) or
oncore.calls.importer (call import). Every read the dashboard also shows goes through the same queries
(transcriber_tests.queries, transcriber_tests.runs.queries; the benchmark's figures through benchmark.selectors),
and every payload is built by transcriber_tests.shapes, as the webhook events' and the CSV files' are."""

from ninja import NinjaAPI

from . import banks, calls, flags, runs

ROUTERS = [
    ("", calls.catalogue),
    ("", calls.calls),
    ("", flags.router),
    ("", banks.banks),
    ("", banks.candidates),
    ("", banks.results),
    ("", runs.router),
    ("", banks.queue),
]


_mounted = False


def mount(api: NinjaAPI) -> None:
    """Add the routers to the API, once: oncore/urls.py calls this before it includes the API's URLs."""
    global _mounted
    if not _mounted:
        for prefix, router in ROUTERS:
            api.add_router(prefix, router)
        _mounted = True
