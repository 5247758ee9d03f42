from django.apps import AppConfig


class TranscriberTestsConfig(AppConfig):
    name = "transcriber_tests"

    def ready(self):
        # The webhook events are registered with oncore.webhooks; the work handles (handles.py: what a write or a
        # read enqueues without importing work/) are bound to their entry points in work/.
        from oncore.webhooks import actions as webhooks

        from . import handles
        from .shapes import events
        from .work import tasks

        webhooks.register_events(*events.EVENTS)
        handles.TRANSCRIBE.bind(tasks.transcribe)
        handles.PICK_LINE.bind(tasks.pick_line)
        handles.ANNOUNCE_SCORES.bind(tasks.announce_scores)
        handles.TRANSCRIPTION_FINISHED.bind(tasks.transcription_finished)
        handles.ADVANCE_RUN.bind(tasks.advance)
        handles.REBUILD_SNAPSHOTS.bind(tasks.rebuild_snapshots)
        handles.SETTLE_FLAG.bind(tasks.settle_flag)
        handles.BUILD_BOXES.bind(tasks.build_boxes)
