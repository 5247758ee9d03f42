"""The queue tasks by their old dotted path (before work/tasks.py), for tasks queued before migration 0020: delete
once no queued task names this path."""

from .work.tasks import (
    announce_scores,
    catch_up_picks,
    check_leaders,
    fill_picks,
    pick_line,
    pump_all,
    transcribe,
)

__all__ = [
    "announce_scores",
    "catch_up_picks",
    "check_leaders",
    "fill_picks",
    "pick_line",
    "pump_all",
    "transcribe",
]
