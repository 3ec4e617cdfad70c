"""A refresh whose Celery worker is killed is not lost: the work it was looking at stays recorded
(``RefreshTouched``), and the sweep Celery beat runs every minute queues a refresh of it, long
before Redis would hand the killed task's message out again (CELERY_VISIBILITY_TIMEOUT). A worker
that starts queues it at once, even while the refresh still counts as queued (docs/design.md §6)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psycopg2
import pytest
import redis
from django.db import connection, transaction

from annotation.models import Benchmark, RefreshQueued, RefreshTouched, Target, TargetStage
from annotation.refresh_requests import LOCK_SPACE, refresh_sweep
from tests.celery_worker import running_worker, tasks_sent_to
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

WAIT_SECONDS = 90


def _wait(what: str, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if done():
            return
        time.sleep(0.1)
    pytest.fail(f"{what} did not happen within {WAIT_SECONDS} s")


def _someone_waits_for_a_lock() -> bool:
    """Whether a connection to the test database (the worker's: nothing else runs) waits for a lock."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
        return cursor.fetchone() is not None


def _queued(benchmark: Benchmark) -> bool:
    # Read outside the test's transaction: the refresh commits its start on its own connection.
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {RefreshQueued._meta.db_table} WHERE benchmark_id = %s", [benchmark.pk])
        return cursor.fetchone() is not None


def test_the_sweep_recovers_a_refresh_whose_worker_was_killed_mid_task(redis_url: str, tmp_path: Path) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    target = Target.objects.get(benchmark=benchmark)
    queue = f"test-refresh-killed-{uuid.uuid4().hex[:12]}"

    with tasks_sent_to(redis_url, queue):
        # Three honest submissions: the target has its labels, and one refresh is queued for them.
        for annotator in ("ann", "ben", "cat"):
            assert work_once(simulated(annotator), benchmark, honest({"perched": "accept"})) is not None
        assert RefreshQueued.objects.filter(benchmark=benchmark).exists()

        # The refresh is stopped after it took the work to look at, inside its transaction. A refresh
        # that finds the benchmark's row locked when it starts is sent again rather than waiting, so
        # it is first held at its start (the submits' shared lock on the benchmark, from a second
        # connection); the row is locked meanwhile, and releasing the start lets it take the work and
        # wait for the row.
        gate = psycopg2.connect(**connection.get_connection_params())
        try:
            with gate.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock_shared(%s, %s)", [LOCK_SPACE, benchmark.pk])
            with running_worker(redis_url=redis_url, queue=queue, log_path=tmp_path / "first.log") as first:
                _wait("the refresh starting", _someone_waits_for_a_lock)
                with transaction.atomic():
                    Benchmark.objects.select_for_update().get(pk=benchmark.pk)
                    gate.commit()
                    _wait("the refresh taking its work", lambda: not _queued(benchmark))
                    _wait("the refresh waiting for the benchmark", _someone_waits_for_a_lock)
                    first.kill()
                    first.wait()
        finally:
            gate.close()

        # The killed refresh changed nothing; its work is still owed, and no refresh is queued.
        target.refresh_from_db()
        assert target.stage == TargetStage.REDUCE
        assert RefreshTouched.objects.filter(benchmark=benchmark).count() == 3
        assert not RefreshQueued.objects.filter(benchmark=benchmark).exists()

        # What Celery beat runs every minute.
        assert refresh_sweep() == [benchmark.pk]

        with running_worker(redis_url=redis_url, queue=queue, log_path=tmp_path / "second.log"):
            _wait("the swept refresh", lambda: not RefreshTouched.objects.filter(benchmark=benchmark).exists())

    target.refresh_from_db()
    assert target.stage == TargetStage.SCORE
    assert not RefreshQueued.objects.filter(benchmark=benchmark).exists()


def test_a_refresh_whose_message_a_killed_worker_took_runs_as_soon_as_a_worker_starts(
    redis_url: str, tmp_path: Path
) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    target = Target.objects.get(benchmark=benchmark)
    queue = f"test-refresh-taken-{uuid.uuid4().hex[:12]}"

    with tasks_sent_to(redis_url, queue):
        for annotator in ("ann", "ben", "cat"):
            assert work_once(simulated(annotator), benchmark, honest({"perched": "accept"})) is not None
        # A worker took the refresh's message from the queue and was killed before it started the
        # refresh: the message is gone from the queue (Redis keeps it unacknowledged for
        # CELERY_VISIBILITY_TIMEOUT), and the refresh, queued a moment ago, still counts as queued.
        broker = redis.Redis.from_url(redis_url)
        taken = [key for key in broker.scan_iter(match=f"{queue}*") if broker.type(key) == b"list"]
        assert taken
        broker.delete(*taken)
        assert RefreshQueued.objects.filter(benchmark=benchmark).exists()
        assert RefreshTouched.objects.filter(benchmark=benchmark).count() == 3
        # The sweep on Celery beat takes a queued refresh for lost only once it is two minutes old.
        assert refresh_sweep() == []

        with running_worker(redis_url=redis_url, queue=queue, log_path=tmp_path / "restarted.log"):
            _wait("the refresh, with no submit or sweep to queue it", lambda: not _queued(benchmark))
            _wait("the refresh's work", lambda: not RefreshTouched.objects.filter(benchmark=benchmark).exists())

    target.refresh_from_db()
    assert target.stage == TargetStage.SCORE
