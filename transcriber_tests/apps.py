from django.apps import AppConfig


class TranscriberTestsConfig(AppConfig):
    name = "transcriber_tests"

    def ready(self):
        # Importing events registers the webhook events. Tasks are enqueued by function reference; where a module
        # enqueues a task of a module that imports it, it declares an oncore.queue.Task, bound here.
        from .work import events, jobs, picks, replay, tasks
        from .work import runs as pipeline
        from .work import tasks as run_tasks

        jobs.TRANSCRIBE.bind(tasks.transcribe)
        picks.PICK_LINE_TASK.bind(tasks.pick_line)
        events.SCORES_TASK.bind(tasks.announce_scores)
        replay.TRANSCRIPTION_FINISHED.bind(run_tasks.transcription_finished)
        pipeline.ADVANCE_TASK.bind(run_tasks.advance)
