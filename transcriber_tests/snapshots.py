"""The snapshot rebuild by its old dotted path (before queries/snapshots.py and work/tasks.py), for tasks queued before
migration 0020: delete once no queued task names this path."""

from .queries.snapshots import rebuild

__all__ = ["rebuild"]
