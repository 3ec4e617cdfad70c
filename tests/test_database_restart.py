"""Requests survive the database dropping their connection (PostgreSQL restarting ends every server
process): a kept connection is checked before a request reuses it, and the idempotent work views
(claim, submit, return, the work pages) run again on a new connection when it drops under them.

Each test ends a real server process with ``pg_terminate_backend`` from a second connection."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg2
import pytest
from django.contrib.auth.models import User
from django.db import OperationalError, close_old_connections, connection, transaction
from django.test import Client, RequestFactory
from pytest_django.fixtures import Settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Label
from crowdlex.reconnect import retry_on_lost_connection
from hits.models import HIT, Answer, Assignment, AssignmentStatus
from tests.base import Cast, logged_in
from tests.hits.factories import claim, honest_answers, make_benchmark, make_hits

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("ends a PostgreSQL server process")


def backend_pid() -> int:
    connection.ensure_connection()
    return int(connection.connection.info.backend_pid)  # type: ignore[union-attr]


def terminate(pid: int) -> None:
    """End the server process ``pid`` from another connection, and wait until it is gone."""
    admin = psycopg2.connect(**connection.get_connection_params())
    try:
        admin.autocommit = True
        with admin.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s, 10000)", [pid])
            assert cursor.fetchone() == (True,)
    finally:
        admin.close()


@contextmanager
def dropped_before(statement_start: str) -> Iterator[list[str]]:
    """End this connection's server process just before the first statement that starts with
    ``statement_start`` (once), run as it is or as a prepared statement (``crowdlex.sql``): the
    statement, and the transaction it is part of, fail."""
    seen: list[str] = []

    def text(sql: str, context: dict[str, Any]) -> str:
        if not sql.startswith("EXECUTE crowdlex_"):
            return sql
        with context["connection"].connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements WHERE name = %s", [sql.split()[1]])
            row = cursor.fetchone()
        return row[0].split(" AS ", 1)[1] if row else sql

    def wrapper(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if not seen and text(sql, context).lstrip().upper().startswith(statement_start.upper()):
            seen.append(sql)
            terminate(int(context["connection"].connection.info.backend_pid))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield seen


def api(user: User) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def test_a_request_after_the_database_dropped_the_connection_succeeds() -> None:
    assert Client().get("/healthz").status_code == 200
    backend = backend_pid()
    terminate(backend)

    close_old_connections()  # what every request starts with (Django's test client leaves it out)
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert backend_pid() != backend


def test_a_claim_whose_connection_was_dropped_runs_again_on_a_new_one(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    client = api(cast.alice)
    backend = backend_pid()
    terminate(backend)  # no check before this request: the view itself meets the dead connection

    response = client.post("/api/work/claim", {}, format="json")

    assert response.status_code == 200
    assert response.json()["hit"] == hit.pk
    assert backend_pid() != backend
    assert Assignment.objects.filter(hit=hit, status=AssignmentStatus.CLAIMED).count() == 1
    assert HIT.objects.get(pk=hit.pk).assignments_active == 1


def test_a_submit_whose_connection_drops_mid_transaction_is_stored_once(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    client = api(cast.alice)
    claimed = client.post("/api/work/claim", {}, format="json").json()
    answers = {str(pk): value for pk, value in honest_answers(hit).items()}

    with dropped_before('INSERT INTO "hits_answer"') as dropped:
        response = client.post(f"/api/work/assignments/{claimed['id']}/submit", {"answers": answers}, format="json")

    assert dropped, "the submit never wrote its answers"
    assert response.status_code == 200
    assert response.json()["status"] == AssignmentStatus.SUBMITTED
    assert Answer.objects.filter(assignment_id=claimed["id"]).count() == len(answers)
    assert Label.objects.filter(assignment_id=claimed["id"]).count() == len(answers) - 2  # the two controls
    assert HIT.objects.get(pk=hit.pk).assignments_active == 1


def test_a_page_submit_whose_connection_drops_mid_transaction_is_stored_once(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    client = logged_in(cast.alice)
    form = {f"item-{pk}": value for pk, value in honest_answers(hit).items()}

    with dropped_before('INSERT INTO "annotation_label"') as dropped:
        response = client.post(f"/work/assignments/{assignment.pk}/", form)

    assert dropped, "the submit never wrote its labels"
    assert response.status_code == 302
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.SUBMITTED
    assert Label.objects.filter(assignment=assignment).count() == len(form) - 2


def test_a_return_whose_connection_was_dropped_runs_again(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    client = api(cast.alice)
    claimed = client.post("/api/work/claim", {}, format="json").json()
    terminate(backend_pid())

    response = client.post(f"/api/work/assignments/{claimed['id']}/return", {}, format="json")

    assert response.status_code == 200
    assert Assignment.objects.get(pk=claimed["id"]).status == AssignmentStatus.RETURNED
    assert HIT.objects.get(pk=hit.pk).assignments_active == 0


def test_a_dropped_connection_is_not_retried_inside_a_transaction() -> None:
    runs: list[int] = []

    @retry_on_lost_connection
    def view(request: Any) -> None:
        runs.append(backend_pid())
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    with pytest.raises(OperationalError), transaction.atomic():
        terminate(backend_pid())
        view(RequestFactory().get("/"))

    assert len(runs) == 1


def test_a_database_error_of_the_request_itself_is_not_retried() -> None:
    runs: list[int] = []

    @retry_on_lost_connection
    def view(request: Any) -> None:
        runs.append(1)
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = 10")
            try:
                cursor.execute("SELECT pg_sleep(1)")  # cancelled: an OperationalError, the connection lives
            finally:
                cursor.execute("RESET statement_timeout")

    with pytest.raises(OperationalError, match="statement timeout"):
        view(RequestFactory().get("/"))

    assert len(runs) == 1


def test_a_dropped_connection_is_raised_once_the_retry_time_is_spent(settings: Settings) -> None:
    settings.DATABASE_RETRY_SECONDS = 0
    runs: list[int] = []

    @retry_on_lost_connection
    def view(request: Any) -> None:
        runs.append(1)
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    terminate(backend_pid())
    with pytest.raises(OperationalError):
        view(RequestFactory().get("/"))
    connection.close()  # what the end of a request does with a broken connection

    assert len(runs) == 1


def test_the_health_check_of_a_kept_connection_runs_select_1_only_when_the_server_said_something(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.db.backends.postgresql import base

    checked: list[bool] = []
    select_1 = base.DatabaseWrapper.is_usable

    def counted(self: Any) -> bool:
        checked.append(usable := select_1(self))
        return usable

    monkeypatch.setattr(base.DatabaseWrapper, "is_usable", counted)
    backend = backend_pid()

    assert connection.is_usable()
    assert checked == []  # an idle, healthy connection: no round trip

    terminate(backend)
    assert not connection.is_usable()
    assert checked == [False]  # the server's farewell waits on the socket: tested, and failed
    connection.close()  # as the request's start would, having found it unusable
