"""A page's floor replays what the page ran, the statements the platform prepared included: their
``EXECUTE`` runs on the floor's own connection, prepared there once (bench.floor.replayable, run_read)."""

from __future__ import annotations

from typing import Any

import psycopg2
import pytest
from django.db import connection

from bench.floor import replayable, run_read
from crowdlex.sql import execute

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="statements are prepared on PostgreSQL"),
]


def _own_connection() -> Any:
    database = connection.settings_dict
    return psycopg2.connect(
        host=database["HOST"],
        port=database["PORT"] or 5432,
        user=database["USER"],
        password=database["PASSWORD"],
        dbname=database["NAME"],
    )


def _recorded(sql: str, params: list[Any]) -> list[tuple[str, Any]]:
    recorded: list[tuple[str, Any]] = []

    def capture(run: Any, statement: str, values: Any, many: bool, context: Any) -> Any:
        recorded.append((statement, values))
        return run(statement, values, many, context)

    with connection.execute_wrapper(capture), connection.cursor() as cursor:
        execute(cursor, sql, params)
        assert cursor.fetchone() == (42,)
    return recorded


def test_a_prepared_statement_is_replayed_on_the_floors_own_connection(settings: Any) -> None:
    settings.DATABASE_PREPARED_STATEMENTS = True
    recorded = _recorded("SELECT CAST(%s AS integer) + 41", [1])
    assert recorded[0][0].startswith("EXECUTE")

    replay = replayable(recorded)
    assert replay == recorded, "the EXECUTE is part of the floor"
    raw = _own_connection()
    try:
        for _ in range(2):  # prepared once on the connection, executed each time
            run_read(raw, replay)
        with raw.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            prepared = [statement for (statement,) in cursor.fetchall()]
        assert len(prepared) == 1
        assert "CAST($1 AS integer) + 41" in prepared[0]
    finally:
        raw.close()


def test_an_execute_whose_statement_django_does_not_hold_is_left_out() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")  # a connection open, holding no statement of that name
    gone = ("EXECUTE crowdlex_00000000000000000000 (%s)", [2])
    assert replayable([gone, ("SELECT 1", None)]) == [("SELECT 1", None)]
