"""The pure core of transcriber testing: no Django, no database, no project module that has either
(tests/test_layout.py holds every module here to it). Each returns plain values or frozen dataclasses, and is
tested without a database."""
