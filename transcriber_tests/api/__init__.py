"""The transcriber testing API: its routers, mounted under /api/v1/ on oncore.api's instance (which holds the
authentication and the error shape), and its error codes (errors.py). Every write goes through an action
(transcriber_tests/actions/: flags, banks, candidates, full-call runs) or oncore.calls.importer (call import); every
read through the queries the dashboard reads too (transcriber_tests/queries/; the benchmark's figures through
benchmark.selectors); every payload is built in transcriber_tests/shapes/, as the webhook events' and the CSV files'
are. The routers keep their request bodies, filters, list envelopes and error details."""

from ninja import NinjaAPI

from . import banks, calls, flags, runs, screens, trust, vocabularies

TAGS = {
    "Catalogue and organization": "The transcribers a bank can compare (read-only: operators add them with "
    "`manage.py add_transcriber`), the key's organization with its tenants, and the assistants.",
    "Calls": "Calls with their lines (which can be flagged, and why not), the call import and a line's audio.",
    "Flags": "Caller lines flagged with what was actually said: create, list, edit, move between banks, delete, "
    "and a flag's results per candidate.",
    "Banks": "Banks of flags that candidates are compared on, and the banks' leaderboard.",
    "Candidates": "A bank's candidate transcribers: the cost estimate, adding after confirming it (a catalogue "
    "transcriber, or one with a vocabulary), order, removal.",
    "Vocabularies": "The organization's vocabularies (names, menu items, street names, product codes), each for an "
    "assistant or every one, with who changed what: a bank's candidate can send one in its vendor's own option.",
    "Results": "A bank's results: the candidates' cards, the weekly trend, accuracy per error tag and per language, "
    "the turn-by-turn table and the CSV downloads.",
    "Full-call runs": "Replaying whole calls with a candidate: estimate, start, progress, labelled lines, the "
    "review sample and the CSV.",
    "Queue": "The organization's waiting and running transcriptions.",
}

ROUTERS = [
    ("", calls.catalogue),
    ("", calls.calls),
    ("", flags.router),
    ("", screens.flags),
    ("", banks.banks),
    ("", screens.board),
    ("", banks.candidates),
    ("", vocabularies.router),
    ("", banks.results),
    ("", screens.router),
    ("", trust.router),
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
        for name, description in TAGS.items():
            api.describe_tag(name, description)
        _mounted = True
