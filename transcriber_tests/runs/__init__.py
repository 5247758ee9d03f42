"""Left from the package full-call runs had before issue 35: only the old dotted path of their queue tasks
(tasks.py). The runs themselves: actions/runs.py, queries/runs.py, work/runs.py, views/runs.py, shapes/runs.py."""
