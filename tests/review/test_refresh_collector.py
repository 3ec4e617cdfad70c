"""A refresh pauses Python's cycle collector while it runs and leaves it as it found it (docs/design.md §6)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from review.services import benchmark_refresh
from review.services import refresh as refresh_module
from tests.review.builders import make_benchmark


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.django_db
def test_the_collector_is_paused_during_a_refresh_and_resumed_after(
    collector_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    start = refresh_module.refresh_start

    def watched(**kwargs: object) -> object:
        seen.append(gc.isenabled())
        return start(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(refresh_module, "refresh_start", watched)
    benchmark = make_benchmark(targets=1, candidates=2)
    benchmark_refresh(benchmark=benchmark)
    assert seen == [False]
    assert gc.isenabled()

    # A refresh that fails resumes it too.
    def failing(**kwargs: object) -> object:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(refresh_module, "refresh_start", failing)
    with pytest.raises(RuntimeError):
        benchmark_refresh(benchmark=benchmark)
    assert gc.isenabled()


def test_a_collector_paused_before_stays_paused(collector_on: None) -> None:
    gc.disable()
    with refresh_module.collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_collector_resumes_when_the_last_of_overlapping_refreshes_returns(collector_on: None) -> None:
    pause = refresh_module._CollectorPause()
    first_in, second_done = threading.Event(), threading.Event()
    during: list[bool] = []

    def first() -> None:
        with pause.held():
            first_in.set()
            second_done.wait(10)
            during.append(gc.isenabled())

    thread = threading.Thread(target=first)
    thread.start()
    assert first_in.wait(10)
    with pause.held():
        assert not gc.isenabled()
    # The second holder has left, the first has not: still paused.
    assert not gc.isenabled()
    second_done.set()
    thread.join(10)
    assert during == [False]
    assert gc.isenabled()
