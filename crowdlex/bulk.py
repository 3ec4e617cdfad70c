"""Bulk inserts with PostgreSQL's COPY: the one way the platform writes tens of thousands of rows.

Rows go through ``csv.writer`` into COPY's CSV format. In that format an empty cell reads as NULL,
so text columns that hold empty strings are listed in ``not_null`` (COPY's FORCE_NOT_NULL).

The rows are written as COPY reads them, a few hundred at a time: the server stores the first rows
while the next are being written, and no copy of them all is held.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from django.db import connection, models


def column_name(model: type[models.Model], name: str) -> str:
    """The quoted column of a model field."""
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field) and field.column
    return connection.ops.quote_name(field.column)


def csv_field(text: str) -> str:
    """``text`` as one field of COPY's CSV format, quoted when it must be (as ``csv.writer`` does)."""
    if any(char in text for char in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def copy_lines(
    model: type[models.Model], fields: Sequence[str], lines: Sequence[str], *, not_null: Sequence[str] = ()
) -> None:
    """COPY rows already written as CSV lines (each ending in a newline, fields escaped with
    :func:`csv_field`) into ``model``'s table; PostgreSQL only. For the many rows of one shape that
    a caller can spell faster than ``csv.writer`` (an import's labels)."""
    if not lines:
        return
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(column_name(model, name) for name in fields)
    options = "FORMAT csv"
    if not_null:
        options += f", FORCE_NOT_NULL ({', '.join(column_name(model, name) for name in not_null)})"
    with connection.cursor() as cursor:
        sql = f"COPY {table} ({columns}) FROM STDIN WITH ({options})"
        cursor.cursor.copy_expert(sql, io.StringIO("".join(lines)))  # type: ignore[attr-defined]


def copy_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]], *, not_null: Sequence[str] = ()
) -> None:
    """COPY ``rows`` (values in the order of ``fields``) into ``model``'s table; PostgreSQL only.

    None becomes NULL; booleans (in the model's boolean columns) are written as ``true``/``false``;
    other values as ``str`` does.
    """
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(column_name(model, name) for name in fields)
    options = "FORMAT csv"
    if not_null:
        options += f", FORCE_NOT_NULL ({', '.join(column_name(model, name) for name in not_null)})"
    with connection.cursor() as cursor:
        booleans = [
            index for index, name in enumerate(fields) if isinstance(model._meta.get_field(name), models.BooleanField)
        ]
        sql = f"COPY {table} ({columns}) FROM STDIN WITH ({options})"
        cursor.cursor.copy_expert(sql, _CsvRows(rows, booleans))  # type: ignore[attr-defined]


class _CsvRows:
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


def reserve_ids(model: type[models.Model], count: int) -> list[int]:
    """``count`` new primary keys of ``model`` from its table's sequence, in increasing order, for
    rows that COPY then writes with their ids (COPY returns none); PostgreSQL only.

    Keys are taken outside any transaction's control, as every insert takes them: a rollback
    leaves a gap, never a key used twice.
    """
    if count <= 0:
        return []
    pk = model._meta.pk
    assert pk is not None and pk.column
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [model._meta.db_table, pk.column, count],
        )
        return sorted(row[0] for row in cursor.fetchall())
