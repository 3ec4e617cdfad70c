"""The cycle's prepared statements take Django's layers in one step when those would do nothing else
(``crowdlex.dialect``), and the claim prepares its constant defaults once (``hits.services.queue``):
each answers, fails and is seen exactly as through the general path."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import DataError, IntegrityError, connection, transaction
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from crowdlex.sql import execute
from hits.models import Assignment, AssignmentStatus
from hits.services import queue

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.production_database("statements run prepared on PostgreSQL"),
]

NUMBERS = "SELECT CAST(%s AS integer) + CAST(%s AS integer), CAST(%s AS text)"


@pytest.fixture(autouse=True)
def _prepared(settings: Any) -> None:
    settings.DATABASE_PREPARED_STATEMENTS = True


def test_a_statement_answers_through_either_path() -> None:
    with connection.cursor() as cursor:
        execute(cursor, NUMBERS, [2, 3, "x"])
        plain = cursor.fetchone()
    with CaptureQueriesContext(connection), connection.cursor() as cursor:
        execute(cursor, NUMBERS, [2, 3, "x"])
        logged = cursor.fetchone()
    assert plain == logged == (5, "x")


def test_an_execute_wrapper_sees_each_execute() -> None:
    seen: list[tuple[str, Any]] = []

    def wrapper(run: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        seen.append((sql, params))
        return run(sql, params, many, context)

    with connection.execute_wrapper(wrapper), connection.cursor() as cursor:
        execute(cursor, NUMBERS, [1, 1, "y"])
        assert cursor.fetchone() == (2, "y")
    assert len(seen) == 1
    assert seen[0][0].startswith("EXECUTE crowdlex_") and seen[0][0].endswith("(%s, %s, %s)")
    assert seen[0][1] == [1, 1, "y"]


def test_a_logging_cursor_logs_each_execute() -> None:
    with CaptureQueriesContext(connection) as captured, connection.cursor() as cursor:
        execute(cursor, NUMBERS, [1, 2, "z"])
    assert [query["sql"].split(" (")[0].startswith("EXECUTE crowdlex_") for query in captured] == [True]


def test_a_failing_statement_raises_djangos_error(cast: Any) -> None:
    worker = cast.alice.worker.pk
    hit = _a_hit()
    insert = (
        'INSERT INTO "hits_assignment" (hit_id, worker_id, status, filtered, external_id, claimed_at, deadline,'
        " controls_correct, controls_total, feedback, external_status, external_unknown)"
        " VALUES (%s, %s, 'claimed', false, '', now(), now(), 0, 0, '', '', false)"
    )
    with transaction.atomic():
        with connection.cursor() as cursor:
            execute(cursor, insert, [hit, worker])
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            execute(cursor, insert, [hit, worker])


def test_a_statement_after_an_error_in_the_transaction_is_refused() -> None:
    with pytest.raises(TransactionManagementError), transaction.atomic():
        with pytest.raises(DataError), transaction.atomic(savepoint=False), connection.cursor() as cursor:
            execute(cursor, "SELECT CAST(%s AS integer) / 0", [1])
        # The transaction is broken: Django refuses the next statement before the server sees it.
        with connection.cursor() as cursor:
            execute(cursor, NUMBERS, [1, 2, "z"])


def _a_hit() -> int:
    from tests.hits.factories import make_benchmark, make_hits

    return make_hits(make_benchmark(), 1)[0].pk


def _general_values(fields: tuple[Any, ...], worker_id: int, now: Any) -> list[Any]:
    """Every field's value prepared on each claim, as the claim did before its constants were kept."""
    given = {"worker_id": worker_id, "status": AssignmentStatus.CLAIMED, "claimed_at": now, "deadline": now}
    return [
        field.get_db_prep_save(given[field.attname] if field.attname in given else field.get_default(), connection)
        for field in fields
    ]


@pytest.mark.parametrize("offset", [timedelta(0), timedelta(days=400, microseconds=7)])
def test_the_claims_values_are_those_of_every_field_prepared_on_each_claim(offset: timedelta) -> None:
    now = timezone.now() + offset
    sql, params = "SELECT 1 AS id, interval '1 hour' AS assignment_duration", [11, 12]
    _, values = queue._claim_statement(sql, list(params), worker_id=987, now=now)
    fields, constants = queue._claim_shape(sql)[1:]
    assert values[:2] == params
    assert values[2:] == _general_values(fields, 987, now)
    # Every field the claim gives is prepared on each claim, never kept.
    for field, constant in zip(fields, constants, strict=True):
        if field.attname in {"worker_id", "status", "claimed_at", "deadline"}:
            assert constant is None
    assert {field.attname for field in fields} == {field.attname for field in Assignment._meta.concrete_fields} - {
        "id",
        "hit_id",
    }


def test_a_default_computed_per_call_is_computed_on_each_claim() -> None:
    field: Any = Assignment._meta.get_field("feedback")
    calls = iter(["first", "second"])
    kept = field.default
    # Django keeps how it computes a field's default (``_get_default``): forgotten on both sides.
    field.__dict__.pop("_get_default", None)
    field.default = lambda: next(calls)
    queue._claim_shape.cache_clear()
    try:
        sql = "SELECT 2 AS id, interval '1 hour' AS assignment_duration"
        fields = queue._claim_shape(sql)[1]
        index = list(fields).index(field)
        now = timezone.now()
        first = queue._claim_statement(sql, [], worker_id=1, now=now)[1]
        second = queue._claim_statement(sql, [], worker_id=1, now=now)[1]
        assert (first[index], second[index]) == ("first", "second")
    finally:
        field.default = kept
        field.__dict__.pop("_get_default", None)
        queue._claim_shape.cache_clear()
