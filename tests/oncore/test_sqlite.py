"""SQLite (make run's database): the web process and the queue worker share one file, and a transaction that
read before it writes must wait for the other's write instead of failing with "database is locked"."""

import sqlite3
import threading

import pytest
from django.db import connection
from django.db.backends.sqlite3.base import DatabaseWrapper


def test_a_transaction_that_reads_then_writes_waits_for_the_other_process(tmp_path, django_db_blocker):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's locking (this suite runs on SQLite with make test)")
    path = tmp_path / "shared.sqlite3"
    with sqlite3.connect(path) as setup:
        setup.execute("CREATE TABLE counter (n integer)")
        setup.execute("INSERT INTO counter VALUES (0)")
    other_holds_the_lock = threading.Event()

    def other_process():  # the worker: a write transaction that takes half a second
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE counter SET n = n + 1")
        other_holds_the_lock.set()
        threading.Event().wait(0.5)
        other.execute("COMMIT")
        other.close()

    web = DatabaseWrapper({**connection.settings_dict, "NAME": str(path)}, alias="web")
    thread = threading.Thread(target=other_process)
    thread.start()
    other_holds_the_lock.wait()
    with django_db_blocker.unblock():  # its own file, not the test database
        web.set_autocommit(
            False, force_begin_transaction_with_broken_autocommit=True
        )  # as transaction.atomic
        with web.cursor() as cursor:
            cursor.execute("SELECT n FROM counter")
            (seen,) = cursor.fetchone()
            cursor.execute("UPDATE counter SET n = %s", [seen + 1])
        web.commit()
        web.close()
    thread.join()
    with sqlite3.connect(path) as check:
        assert check.execute("SELECT n FROM counter").fetchone() == (2,)  # neither write was lost
