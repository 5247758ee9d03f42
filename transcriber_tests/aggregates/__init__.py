"""The per-day totals of every bank's scores and each item's "candidates disagree" mark, kept in the transaction
of every score write (maintain.py) and recomputed from the scores when a bank's candidates change or on demand
(rebuild.py). Their reads are queries.totals."""

from .maintain import (
    contributions,
    day_of,
    disagrees,
    flag_entered,
    flag_leaving,
    item_change,
)
from .rebuild import Drift, candidates_changed, rebuild

__all__ = [
    "Drift",
    "candidates_changed",
    "contributions",
    "day_of",
    "disagrees",
    "flag_entered",
    "flag_leaving",
    "item_change",
    "rebuild",
]
