"""The one recipe for a figure a read keeps in the cache for a while (a bank's results, trust, trade-off, trends,
tags, groups and languages; an organization's call volume): its key is its kind and what it depends on, a bank's
results version among them (Bank.results_changed_at, moved by every write that changes them), so a change never
serves the figure from before it; the time it is kept bounds how long a window's moving start is ignored."""

from django.core.cache import cache

# Moved when the classes of a kept value move or change (the cache pickles them, and a pickle names a class by its
# module): a value kept by the code before is then never read by the code after.
VERSION = 4


def key(kind: str, *parts) -> str:
    """ "bank-results:12:30:None:None::2026-11-28T12:00:00+00:00" """
    return ":".join([kind, *map(str, parts)])


def cached(kind: str, parts, seconds: int, compute):
    """The value kept under (kind, parts), or compute() kept for `seconds`."""
    name = key(kind, *parts)
    found = cache.get(name, version=VERSION)
    if found is None:
        found = compute()
        cache.set(name, found, seconds, version=VERSION)
    return found
