"""A real Celery worker keeps its database connection across tasks (docs/design.md §16, "A worker's
database connection"): the webhook deliveries of several notifications run on one PostgreSQL
backend, and a backend the database ended between two tasks is replaced before the next task's
first statement, which then succeeds without a retry."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from hits.models import Notification, NotificationKind, WebhookDelivery
from hits.notifications import notification_record, notification_settings_update
from tests.celery_worker import running_worker, tasks_sent_to
from tests.hits.factories import make_benchmark
from tests.hits.receiver import Receiver

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

DELIVERY_SECONDS = 30
# The deliveries that must share one backend.
TASKS = 6


@pytest.fixture
def receiver(settings: Any) -> Iterator[str]:
    """A local webhook receiver answering 200 to every post; its URL."""
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    with Receiver([200]) as found:
        yield found.url


@pytest.fixture
def worker(redis_url: str, tmp_path: Path) -> Iterator[None]:
    queue = f"test-connection-{uuid.uuid4().hex[:12]}"
    # Connections kept as in production (the workers of other tests close theirs after each task).
    environment = {"DATABASE_CONN_MAX_AGE": "600", "WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "1"}
    with (
        tasks_sent_to(redis_url, queue),
        running_worker(redis_url=redis_url, queue=queue, log_path=tmp_path / "w.log", environment=environment),
    ):
        yield


def _worker_backends() -> set[int]:
    """The backends of the test database other than this test's own: the worker's."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        )
        return {pid for (pid,) in cursor.fetchall()}


def _delivered(benchmark: Any, key: str) -> Notification:
    """Record a notification and wait until the worker delivered it."""
    notification = notification_record(
        benchmark=benchmark, kind=NotificationKind.BATCH_DONE, key=key, summary=f"{key} is done", data={}
    )
    assert notification is not None
    deadline = time.monotonic() + DELIVERY_SECONDS
    while time.monotonic() < deadline:
        notification.refresh_from_db()
        if notification.delivered_at is not None:
            return notification
        time.sleep(0.1)
    pytest.fail(f"{key} was not delivered within {DELIVERY_SECONDS} s")


def _settled_backends() -> set[int]:
    """The worker's backends once its task has ended (the task's end runs after the row it wrote)."""
    time.sleep(0.5)
    return _worker_backends()


def test_a_worker_keeps_its_connection_across_tasks_and_replaces_one_the_database_ended(
    worker: None, receiver: str
) -> None:
    benchmark = make_benchmark()
    researcher = User.objects.create_user("rita", is_staff=True)
    notification_settings_update(benchmark=benchmark, webhook_url=receiver, email_me=False, user=researcher)

    seen = []
    for n in range(TASKS):
        _delivered(benchmark, f"batch:{n}")
        seen.append(_settled_backends())
    # One backend, open after every task and the same throughout.
    assert all(len(backends) == 1 for backends in seen), seen
    assert len(set.union(*seen)) == 1, seen
    (kept,) = seen[0]

    # The database ends the kept backend between two tasks: the next task checks the connection on
    # its first use and runs on a new one, delivered at its first attempt.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [kept])
    deadline = time.monotonic() + DELIVERY_SECONDS
    while kept in _worker_backends() and time.monotonic() < deadline:
        time.sleep(0.05)
    notification = _delivered(benchmark, "batch:after-the-kill")
    assert notification.webhook_error == ""
    assert list(WebhookDelivery.objects.filter(notification=notification).values_list("attempt", "status_code")) == [
        (1, 200)
    ]
    replaced = _settled_backends()
    assert len(replaced) == 1 and kept not in replaced, replaced
    # And the new connection is kept in its turn.
    _delivered(benchmark, "batch:after-that")
    assert _settled_backends() == replaced
