"""What ``bench.pages`` times of a request: not the tasks it queues, which run after it as a worker
runs them, once each and in the order queued; a task queued elsewhere runs as the settings say."""

from __future__ import annotations

from typing import Any

import pytest
from celery.app.task import Task

from bench.pages import _tasks_after
from crowdlex.celery import app

ran: list[Any] = []


@app.task(name="tests.test_bench_pages.note")
def note(value: Any, *, twice: bool = False) -> None:
    ran.append(value)
    if twice:
        ran.append(value)


@pytest.fixture(autouse=True)
def _nothing_ran() -> None:
    ran.clear()


def test_tasks_queued_inside_run_once_the_block_ends_in_their_order() -> None:
    queue = Task.apply_async
    with _tasks_after():
        result = note.delay(1)
        note.apply_async((2,), {"twice": True})
        assert ran == [], "nothing runs inside the block"
        assert result.id
    assert ran == [1, 2, 2]
    assert Task.apply_async is queue
    note.delay(3)
    assert ran == [1, 2, 2, 3], "outside the block a task runs as before (eagerly in the tests)"


def test_a_failing_request_leaves_its_tasks_unrun_and_queueing_restored() -> None:
    queue = Task.apply_async
    with pytest.raises(RuntimeError), _tasks_after():
        note.delay(1)
        raise RuntimeError("the request failed")
    assert ran == []
    assert Task.apply_async is queue
