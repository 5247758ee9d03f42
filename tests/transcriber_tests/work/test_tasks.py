"""django-q2 finds a task by its dotted path: the schedules the migrations made name today's entry points
(transcriber_tests/work/tasks.py, migration 0020), and a task queued under an old path still finds its function."""

import importlib

import pytest
from django_q.models import Schedule

from transcriber_tests.queries import snapshots
from transcriber_tests.work import tasks


def _function(path: str):
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


@pytest.mark.django_db
def test_it_points_the_schedules_at_the_entry_points():
    funcs = dict(Schedule.objects.filter(name__in=["oncore-pump", "oncore-runs"]).values_list("name", "func"))
    assert _function(funcs["oncore-pump"]) is tasks.pump_all
    assert _function(funcs["oncore-runs"]) is tasks.advance_all


@pytest.mark.parametrize(
    "old, function",
    [
        ("transcriber_tests.tasks.transcribe", tasks.transcribe),
        ("transcriber_tests.tasks.pick_line", tasks.pick_line),
        ("transcriber_tests.tasks.fill_picks", tasks.fill_picks),
        ("transcriber_tests.tasks.pump_all", tasks.pump_all),
        ("transcriber_tests.tasks.announce_scores", tasks.announce_scores),
        ("transcriber_tests.tasks.check_leaders", tasks.check_leaders),
        ("transcriber_tests.tasks.catch_up_picks", tasks.catch_up_picks),
        ("transcriber_tests.runs.tasks.advance", tasks.advance),
        ("transcriber_tests.runs.tasks.advance_all", tasks.advance_all),
        ("transcriber_tests.runs.tasks.transcription_finished", tasks.transcription_finished),
        ("transcriber_tests.snapshots.rebuild", snapshots.rebuild),
    ],
)
def test_it_still_runs_a_task_queued_under_its_old_path(old, function):
    assert _function(old) is function
