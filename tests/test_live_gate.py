"""The live servers' gate: a test's teardown waits for the requests being served and refuses new
ones, so nothing reaches the database while it is flushed (tests/live_gate.py)."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.live_gate import GATE, LiveServerGate


def test_shutting_waits_for_the_requests_inside_and_refuses_new_ones() -> None:
    gate = LiveServerGate()
    assert gate.enter()
    finished = threading.Event()

    def shut() -> None:
        assert gate.shut(wait=30) == 0
        finished.set()

    waiter = threading.Thread(target=shut)
    waiter.start()
    assert not finished.wait(0.2)  # a request is still inside
    gate.leave()
    waiter.join(30)
    assert finished.is_set()
    assert not gate.enter()
    gate.open()
    assert gate.enter()


def test_a_request_that_outlasts_the_wait_is_reported() -> None:
    gate = LiveServerGate()
    assert gate.enter()
    assert gate.shut(wait=0.05) == 1


@pytest.mark.django_db(transaction=True)
def test_a_shut_gate_answers_503_without_serving(live_server: Any) -> None:
    with urllib.request.urlopen(f"{live_server.url}/accounts/login/") as response:
        assert response.status == 200
    assert GATE.shut(wait=5) == 0
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{live_server.url}/accounts/login/")
        assert refused.value.code == 503
    finally:
        GATE.open()
    with urllib.request.urlopen(f"{live_server.url}/accounts/login/") as response:
        assert response.status == 200
