"""CSV streaming for every download of the product: UTF-8 with a BOM (spreadsheets then read accents right), a
header row, a few thousand rows per chunk so a large table never sits in memory, and cells that a spreadsheet
would run as a formula neutralized."""

import csv
import io
from itertools import islice

from django.http import StreamingHttpResponse

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CHUNK_ROWS = 2000  # rows written per chunk of the streamed response
CHUNK_BYTES = 256 * 1024  # characters per chunk of a response whose rows come encoded


def safe_cell(value):
    """Prefix a text cell that starts like a formula with an apostrophe, so a spreadsheet shows it as text."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _safe_rows(rows):
    for row in rows:
        yield [safe_cell(v) for v in row]


class _Echo:
    """A file whose write gives back what it was given: a csv.writer on it returns each encoded line."""

    def write(self, text):
        return text


csv_line = csv.writer(
    _Echo()
).writerow  # cells -> one CSV line, with its line ending, as the writer writes it


def stream_csv(
    filename: str, header: list[str], rows, *, cells_safe: bool = False, encoded: bool = False
) -> StreamingHttpResponse:
    """Stream rows (lists of cells) as CSV, a few thousand rows per chunk. Every cell goes through safe_cell
    unless the caller says it already did that to its text cells (cells_safe=True). With `encoded`, the rows are
    CSV lines already (csv_line; a caller that repeats cells across rows encodes them once), any number of lines
    in each piece."""
    if not cells_safe and not encoded:
        rows = _safe_rows(rows)

    def generate():
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        buffer.write("\ufeff")
        writer.writerow(header)
        if encoded:  # lines already written, many at a time: handed on about CHUNK_BYTES at a time
            for text in rows:
                buffer.write(text)
                if buffer.tell() >= CHUNK_BYTES:
                    yield buffer.getvalue()
                    buffer.seek(0)
                    buffer.truncate()
        else:
            for batch in iter(lambda: list(islice(rows, CHUNK_ROWS)), []):
                writer.writerows(batch)
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        if buffer.tell():
            yield buffer.getvalue()

    response = StreamingHttpResponse(generate(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
