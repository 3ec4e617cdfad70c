"""Real Celery workers for integration tests: a process on a queue of its own, against Redis and the
test database (which must be PostgreSQL, for the worker to share it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

from crowdlex.celery import app

WORKER_START_SECONDS = 60


def _database_url() -> str:
    db = connection.settings_dict
    user = quote(db.get("USER") or "")
    password = f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


def _forget_broker_state() -> None:
    """Drop what the app cached from its configuration: eager .delay() calls earlier in this
    process built connection pools for the default broker and routes to the default queue."""
    app.close()
    app.__dict__.pop("amqp", None)


@contextmanager
def tasks_sent_to(redis_url: str, queue: str) -> Iterator[None]:
    """This process queues tasks on ``queue`` in Redis instead of running them inline."""
    if connection.vendor != "postgresql":
        pytest.skip("the worker process needs a database it can share with the test: run on PostgreSQL")
    saved = {key: app.conf[key] for key in ("broker_url", "task_always_eager", "task_default_queue")}
    app.conf.update(broker_url=redis_url, task_always_eager=False, task_default_queue=queue)
    _forget_broker_state()
    try:
        yield
    finally:
        app.conf.update(saved)
        _forget_broker_state()


@contextmanager
def running_worker(
    *, redis_url: str, queue: str, log_path: Path, environment: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A worker consuming ``queue``, ready when entered and always ended on exit (unless already killed)."""
    node = f"{queue}-{log_path.stem}@localhost"
    env = {
        **os.environ,
        "CELERY_BROKER_URL": redis_url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "DATABASE_URL": _database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
        "TEST_CELERY_DEFAULT_QUEUE": queue,
        **(environment or {}),
    }
    celery = Path(sys.executable).with_name("celery")
    command = [str(celery), "-A", "crowdlex", "worker", "--pool=solo", "-c", "1", "-Q", queue, "-n", node]
    command += ["--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=INFO"]
    with log_path.open("w") as log:
        worker = subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            started = time.monotonic() + WORKER_START_SECONDS
            while f"{node} ready." not in log_path.read_text():
                if worker.poll() is not None:
                    pytest.fail(f"the Celery worker exited at start-up:\n{log_path.read_text()[-3000:]}")
                if time.monotonic() > started:
                    pytest.fail(f"the Celery worker was not ready within {WORKER_START_SECONDS} s")
                time.sleep(0.2)
            yield worker
        finally:
            worker.terminate()
            try:
                worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait(timeout=15)
            sys.stdout.write(log_path.read_text()[-4000:])
