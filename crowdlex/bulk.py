"""Rows spelled as COPY's CSV, for bulk inserts (``crowdlex.dialect``: ``copy_rows``, ``copy_lines``),
the one way the platform writes tens of thousands of rows.

Rows go through ``csv.writer`` into COPY's CSV format. In that format an empty cell reads as NULL,
so text columns that hold empty strings are listed in ``not_null`` (COPY's FORCE_NOT_NULL).

The rows are written as COPY reads them, a few hundred at a time: the server stores the first rows
while the next are being written, and no copy of them all is held.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from django.db import connection, models


def column_name(model: type[models.Model], name: str) -> str:
    """The quoted column of a model field."""
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field) and field.column
    return connection.ops.quote_name(field.column)


_MUST_QUOTE = re.compile('[,"\r\n]')


def csv_field(text: str) -> str:
    """``text`` as one field of COPY's CSV format, quoted when it must be (as ``csv.writer`` does)."""
    if _MUST_QUOTE.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text


class CsvRows:
    """A file that COPY reads: each read writes the next rows as CSV."""

    ROWS_PER_READ = 500

    def __init__(self, rows: Iterable[Sequence[Any]], booleans: Sequence[int] = ()) -> None:
        # Only the boolean columns are looked at value by value (csv would write True as "True"):
        # the rest go to csv as they are, which halves the client's time for a quarter-million
        # labels.
        self._rows = iter(rows) if not booleans else (_spelled(row, booleans) for row in rows)
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer)

    def read(self, size: int = -1) -> str:
        buffer = self._buffer
        buffer.seek(0)
        buffer.truncate()
        self._writer.writerows(islice(self._rows, self.ROWS_PER_READ))
        return buffer.getvalue()

    readline = read


def _spelled(row: Sequence[Any], booleans: Sequence[int]) -> list[Any]:
    values = list(row)
    for index in booleans:
        value = values[index]
        if isinstance(value, bool):
            values[index] = "true" if value else "false"
    return values
