"""The advancement task and the bot signals run in a real Celery worker, queued on commit by real submits."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotation.models import Target, TargetStage
from review.models import FlagReason, SignalsState, WorkerFlag
from tests.celery_worker import running_worker, tasks_sent_to
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

ADVANCE_SECONDS = 90


@pytest.fixture
def celery_queue(redis_url: str, tmp_path: Path) -> Iterator[str]:
    """A real worker on a queue of its own (other test runs may share this Redis), always terminated."""
    queue = f"test-pipeline-{uuid.uuid4().hex[:12]}"
    with tasks_sent_to(redis_url, queue), running_worker(redis_url=redis_url, queue=queue, log_path=tmp_path / "w.log"):
        yield queue


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


def test_a_real_worker_runs_the_bot_signals_the_refresh_requests(celery_queue: str) -> None:
    benchmark = make_benchmark(targets=3, candidates=8)
    step2_batch(benchmark)
    quick, careful = simulated("quick"), [simulated("ann"), simulated("ben")]
    for _ in range(3):
        assert work_once(quick, benchmark, honest(), seconds=1.0) is not None
        for worker in careful:
            assert work_once(worker, benchmark, honest(), seconds=90.0) is not None

    # Current: a run began after the last refresh's request and committed (the throttle may hold it seconds).
    deadline = time.monotonic() + ADVANCE_SECONDS
    while time.monotonic() < deadline:
        state = SignalsState.objects.filter(benchmark=benchmark).first()
        if state is not None and not state.pending and state.assignments == 9:
            break
        time.sleep(0.5)
    else:
        pytest.fail("the worker did not bring the bot signals up to date in time")
    flag = WorkerFlag.objects.get(benchmark=benchmark, reason=FlagReason.FAST)
    assert flag.worker == quick and flag.active
