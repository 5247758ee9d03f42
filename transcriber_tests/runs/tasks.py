"""The full-call runs' queue tasks by their old dotted path (before work/tasks.py), for tasks queued before
migration 0020: delete once no queued task names this path."""

from ..work.tasks import advance, advance_all, transcription_finished

__all__ = ["advance", "advance_all", "transcription_finished"]
