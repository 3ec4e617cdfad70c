"""The advancement task runs in a real Celery worker, queued on commit by a real submit."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

from annotation.models import Target, TargetStage
from crowdlex.celery import app
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

WORKER_START_SECONDS = 60
ADVANCE_SECONDS = 90


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


@pytest.fixture
def celery_queue(redis_url: str, tmp_path: Path) -> Iterator[str]:
    """A real worker on a queue of its own (other test runs may share this Redis), always terminated."""
    if connection.vendor != "postgresql":
        pytest.skip("the worker process needs a database it can share with the test: run on PostgreSQL")
    queue = f"test-pipeline-{uuid.uuid4().hex[:12]}"
    node = f"{queue}@localhost"
    env = {
        **os.environ,
        "CELERY_BROKER_URL": redis_url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "DATABASE_URL": _database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
    }
    celery = Path(sys.executable).with_name("celery")
    log_path = tmp_path / "worker.log"
    log = log_path.open("w")
    command = [str(celery), "-A", "crowdlex", "worker", "--pool=solo", "-c", "1", "-Q", queue, "-n", node]
    command += ["--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=INFO"]
    worker = subprocess.Popen(
        command,
        cwd=settings.BASE_DIR,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    saved = {key: app.conf[key] for key in ("broker_url", "task_always_eager", "task_default_queue")}
    app.conf.update(broker_url=redis_url, task_always_eager=False, task_default_queue=queue)
    _forget_broker_state()
    try:
        started = time.monotonic() + WORKER_START_SECONDS
        while f"{node} ready." not in log_path.read_text():
            if worker.poll() is not None:
                pytest.fail(f"the Celery worker exited at start-up:\n{log_path.read_text()[-3000:]}")
            if time.monotonic() > started:
                pytest.fail(f"the Celery worker was not ready within {WORKER_START_SECONDS} s")
            time.sleep(0.2)
        yield queue
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=15)
        log.close()
        app.conf.update(saved)
        _forget_broker_state()
        sys.stdout.write(log_path.read_text()[-4000:])


def test_a_real_worker_advances_the_target_once_the_last_label_is_committed(celery_queue: str) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    target = Target.objects.get(benchmark=benchmark)

    # Three honest submissions; each queues the refresh on commit, in the worker process.
    for name in ("ann", "ben", "cat"):
        assert work_once(simulated(name), benchmark, honest({"perched": "accept"})) is not None

    deadline = time.monotonic() + ADVANCE_SECONDS
    while time.monotonic() < deadline:
        target.refresh_from_db()
        if target.stage != TargetStage.REDUCE:
            break
        time.sleep(0.5)
    assert target.stage == TargetStage.SCORE, "the worker did not advance the target in time"
    assert benchmark.batches.filter(step=3).count() == 1
