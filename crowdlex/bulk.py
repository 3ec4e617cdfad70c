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


def copy_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]], *, not_null: Sequence[str] = ()
) -> None:
    """COPY ``rows`` (values in the order of ``fields``) into ``model``'s table; PostgreSQL only.

    None becomes NULL; booleans are written as ``true``/``false``; other values as ``str`` does.
    """
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(column_name(model, name) for name in fields)
    options = "FORMAT csv"
    if not_null:
        options += f", FORCE_NOT_NULL ({', '.join(column_name(model, name) for name in not_null)})"
    with connection.cursor() as cursor:
        cursor.cursor.copy_expert(f"COPY {table} ({columns}) FROM STDIN WITH ({options})", _CsvRows(rows))  # type: ignore[attr-defined]


class _CsvRows:
    """A file that COPY reads: each read writes the next rows as CSV."""

    ROWS_PER_READ = 500

    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        self._rows = iter(rows)
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer)

    def read(self, size: int = -1) -> str:
        buffer = self._buffer
        buffer.seek(0)
        buffer.truncate()
        self._writer.writerows(
            [("true" if value else "false") if isinstance(value, bool) else value for value in row]
            for row in islice(self._rows, self.ROWS_PER_READ)
        )
        return buffer.getvalue()

    readline = read


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
