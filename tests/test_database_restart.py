"""A kept database connection is checked before a request reuses it: after PostgreSQL restarts (here,
the connection's server process ends), the next request reconnects instead of failing."""

from __future__ import annotations

import psycopg2
import pytest
from django.db import close_old_connections, connection
from django.test import Client

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_request_after_the_database_dropped_the_connection_succeeds() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("ends a PostgreSQL server process")
    assert Client().get("/healthz").status_code == 200
    backend = connection.connection.info.backend_pid  # type: ignore[union-attr]
    params = connection.get_connection_params()
    with psycopg2.connect(**params) as admin, admin.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [backend])
    admin.close()

    close_old_connections()  # what every request starts with (Django's test client leaves it out)
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert connection.connection.info.backend_pid != backend  # type: ignore[union-attr]
