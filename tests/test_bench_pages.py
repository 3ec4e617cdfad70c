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


def test_each_warm_page_is_printed_against_its_floor_and_one_past_twice_it_misses_the_goal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench.floor import WorkSplit
    from bench.pages import Measured, _report

    def page(url: str, wall_ms: float, floor_ms: float) -> Measured:
        found = Measured(url, url, wall=[wall_ms / 1000], cpu=[wall_ms / 2000])
        found.floor = [WorkSplit(sql=floor_ms / 1000)]
        return found

    assert _report(1.0, [page("/a/", 1.5, 1.0), page("/b/", 1.9, 1.0)])
    printed = capsys.readouterr().out
    assert "FIGURE /a/ at 1x (best wall) against its floor: 1.5 x (goal <= 2 x): met" in printed
    assert "FIGURE /b/ at 1x (best wall) against its floor: 1.9 x (goal <= 2 x): met" in printed
    assert "FIGURE /a/ at 1x (best wall): 1.5 ms (goal <= 150 ms): met" in printed
    assert not _report(1.0, [page("/a/", 1.5, 1.0), page("/c/", 2.1, 1.0)])
    assert "FIGURE /c/ at 1x (best wall) against its floor: 2.1 x (goal <= 2 x): MISSED" in capsys.readouterr().out
