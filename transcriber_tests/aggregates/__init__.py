"""The per-day totals of every bank's scores, written here and nowhere else: kept in the transaction of every write
of actions/ that changes a bank's scores (maintain.py; detail.py for the confusion pairs and the calls), and
recomputed from the scores when a bank's candidates change, a timezone changes or on demand (rebuild.py; the
rebuild_results command, the recount migration). With them it writes two marks the totals count: each item's
"candidates disagree" on its live Score (maintain.py) and each flag's and control line's check_expected
(detail.py). Their reads are queries/totals.py and the other queries."""

from .maintain import (
    batch,
    contributions,
    day_of,
    disagrees,
    flag_entered,
    flag_leaving,
    item_change,
    lock_call,
)
from .rebuild import Drift, candidates_changed, rebuild

__all__ = [
    "Drift",
    "batch",
    "candidates_changed",
    "contributions",
    "day_of",
    "disagrees",
    "flag_entered",
    "flag_leaving",
    "item_change",
    "lock_call",
    "rebuild",
]
