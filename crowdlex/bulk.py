"""Bulk inserts with PostgreSQL's COPY: the one way the platform writes tens of thousands of rows.

Rows go through ``csv.writer`` into COPY's CSV format. In that format an empty cell reads as NULL,
so text columns that hold empty strings are listed in ``not_null`` (COPY's FORCE_NOT_NULL).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
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
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow([("true" if value else "false") if isinstance(value, bool) else value for value in row])
    buffer.seek(0)
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(column_name(model, name) for name in fields)
    options = "FORMAT csv"
    if not_null:
        options += f", FORCE_NOT_NULL ({', '.join(column_name(model, name) for name in not_null)})"
    with connection.cursor() as cursor:
        cursor.cursor.copy_expert(f"COPY {table} ({columns}) FROM STDIN WITH ({options})", buffer)  # type: ignore[attr-defined]


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
