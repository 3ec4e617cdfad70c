"""The cyclic garbage collector paused around a batch's generation (crowdlex.collector)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from crowdlex.collector import collector_paused


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_it_turns_the_collector_off_inside_and_on_again_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_it_turns_the_collector_on_again_when_the_block_raises() -> None:
    gc.enable()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("planning failed")
    assert gc.isenabled()


def test_it_leaves_the_collector_off_when_it_was_off_before() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
