from django.apps import AppConfig


class BenchmarkConfig(AppConfig):
    name = "benchmark"

    def ready(self):
        # Each benchmark's Work names its queue task (oncore.queue.Task); the task's module imports the Work's,
        # so the task function is handed to it here.
        from .codeswitch import langtag
        from .codeswitch import runs as codeswitch_runs
        from .codeswitch import tasks as codeswitch_tasks
        from .entity import runs as entity_runs
        from .entity import tasks as entity_tasks

        entity_runs.WORK.task.bind(entity_tasks.run_benchmark)
        codeswitch_runs.WORK.task.bind(codeswitch_tasks.run_codeswitch)

        # Before a served process's first request (oncore.warmup): the language detector's models, which the
        # results page of any bank with flags needs.
        self.warm_up = langtag.load_models
