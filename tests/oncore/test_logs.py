"""A logged value cannot forge a log line: a path with an encoded newline is written as one record, escaped."""

import logging

import pytest

from oncore.logs import OneRecordPerLine, escape


def test_it_escapes_control_characters_so_a_record_stays_one_line():
    assert (
        escape("GET /x\nINFO oncore.requests GET /admin 200")
        == "GET /x\\nINFO oncore.requests GET /admin 200"
    )
    assert escape("a\r\x1b[31mb\u2028c\x7f") == "a\\r\\x1b[31mb\\u2028c\\x7f"
    assert escape("plain text, unicode é ✓") == "plain text, unicode é ✓"


@pytest.mark.django_db
def test_a_request_for_a_path_with_an_encoded_newline_writes_one_log_line(client):
    formatter = OneRecordPerLine("%(message)s")
    records = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(formatter.format(record))
    logger = logging.getLogger("oncore.requests")
    logger.addHandler(handler)
    try:
        client.get("/calls/%0A200%20forged%20request_id=x")
    finally:
        logger.removeHandler(handler)
    (line,) = records
    assert "\n" not in line and "\\n200 forged" in line


def test_a_traceback_keeps_its_lines_each_marked_as_the_records():
    formatter = OneRecordPerLine("%(message)s")
    try:
        raise ValueError("bad\nFORGED")
    except ValueError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    lines = formatter.format(record).splitlines()
    assert lines[0] == "failed" and all(line.startswith("    | ") for line in lines[1:])
    assert any("bad\\nFORGED" in line for line in lines)


def test_every_log_line_the_site_writes_goes_through_the_formatter(settings):
    console = settings.LOGGING["handlers"]["console"]
    assert settings.LOGGING["formatters"][console["formatter"]]["()"] == "oncore.logs.OneRecordPerLine"
