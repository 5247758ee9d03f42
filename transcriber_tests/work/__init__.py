"""The queue's work and its task entry points (the functions django-q2 runs, in tasks.py)."""
