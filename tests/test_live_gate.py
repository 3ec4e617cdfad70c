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
    ticket = gate.enter()
    assert ticket is not None
    finished = threading.Event()

    def shut() -> None:
        assert gate.shut(wait=30) == 0
        finished.set()

    waiter = threading.Thread(target=shut)
    waiter.start()
    assert not finished.wait(0.2)  # a request is still inside
    gate.leave(ticket)
    waiter.join(30)
    assert finished.is_set()
    assert gate.enter() is None
    gate.open()
    assert gate.enter() is not None


def test_a_request_that_outlasts_the_wait_is_reported_once() -> None:
    gate = LiveServerGate()
    ticket = gate.enter()
    assert gate.shut(wait=0.05) == 1
    gate.open()
    assert gate.shut(wait=0.05) == 0  # the next test is not failed by it
    gate.leave(ticket)  # its late end is harmless


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


def test_in_process_wsgi_calls_are_not_gated(client: Any) -> None:
    """The test client (and in-process WSGI calls, as the API fuzzing makes) never pass the gate:
    only a live server's thread can outlive its test."""
    assert GATE.shut(wait=1) == 0
    try:
        assert client.get("/accounts/login/").status_code == 200
    finally:
        GATE.open()
