"""Every log line is one record: a value a client sent (a path with an encoded newline, a header) cannot write a
forged second line. The formatter escapes control characters (CR, LF, ESC and the rest of C0 and C1, and the
Unicode line and paragraph separators) in the message as \\n, \\r, \\x1b, \\u2028; a traceback keeps its lines,
each marked as the record's continuation ("    | ") and escaped too."""

import logging
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape(text: str) -> str:
    def one(match):
        c = match.group()
        return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")

    return _CONTROL.sub(one, text)


class OneRecordPerLine(logging.Formatter):
    def formatMessage(self, record):
        return escape(super().formatMessage(record))

    def formatException(self, ei):
        return "\n".join("    | " + escape(line) for line in super().formatException(ei).splitlines())

    def formatStack(self, stack_info):
        return "\n".join("    | " + escape(line) for line in super().formatStack(stack_info).splitlines())
