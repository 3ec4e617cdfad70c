"""A gate in front of every live test server: between a test's end and its database's flush, no
request is being served and none starts.

A browser page does not stop talking when its test ends: the HIT page saves its draft when it is
hidden or left (a ``keepalive`` request that outlives the page), a live page polls, a submit's
redirect claims the next HIT. Such a request reaching the server while the test database is flushed
holds row locks the flush's ``TRUNCATE`` waits for, or finds the database closed to it halfway
through. Closing the browser's contexts first narrows that window but cannot shut it (a request
the browser sent before it closed may not have reached the server yet). The gate shuts it on the
server's side: at a test's teardown it refuses new requests (503, no database touched) and waits
until those already inside have finished, their response's body included; the next test opens it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.test.testcases import LiveServerThread

# How long a teardown waits for requests already being served (a slow page under a loaded machine).
DRAIN_SECONDS = 60.0


class LiveServerGate:
    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._open = True
        self._inside: set[object] = set()

    def enter(self) -> object | None:
        """Let a request in and return its ticket, or None when the gate is shut."""
        with self._condition:
            if not self._open:
                return None
            ticket = object()
            self._inside.add(ticket)
            return ticket

    def leave(self, ticket: object) -> None:
        with self._condition:
            self._inside.discard(ticket)
            self._condition.notify_all()

    def open(self) -> None:
        with self._condition:
            self._open = True

    def shut(self, *, wait: float = DRAIN_SECONDS) -> int:
        """Refuse new requests and wait for those inside; returns how many were still inside when
        the wait ran out (0 when all finished). Those are forgotten once reported, so that one stuck
        request fails one test, not every test after it."""
        deadline = time.monotonic() + wait
        with self._condition:
            self._open = False
            while self._inside and (remaining := deadline - time.monotonic()) > 0:
                self._condition.wait(remaining)
            stuck = len(self._inside)
            self._inside.clear()
            return stuck


GATE = LiveServerGate()


class _Body:
    """A response's body that leaves the gate when the server closes it (a streamed export reads
    the database while it is iterated, after the handler has returned; the server closes the body
    whether the client read it all or went away)."""

    def __init__(self, body: Iterable[bytes], ticket: object) -> None:
        self._body = body
        self._ticket = ticket

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._body)

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            GATE.leave(self._ticket)


class _Gated:
    """A live server's application behind the gate."""

    def __init__(self, application: Callable[..., Any]) -> None:
        self.application = application

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        ticket = GATE.enter()
        if ticket is None:
            start_response("503 Service Unavailable", [("Content-Type", "text/plain"), ("Retry-After", "1")])
            return [b"The test that used this server has ended.\n"]
        try:
            body = self.application(environ, start_response)
        except BaseException:
            GATE.leave(ticket)
            raise
        return _Body(body, ticket)


def install() -> None:
    """Put the gate in front of every live test server's application (pytest-django's fixture and
    the tests that start their own both run Django's ``LiveServerThread``). Nothing else is gated:
    the test client and in-process WSGI calls have no server thread that outlives a test."""
    if getattr(LiveServerThread.__init__, "gated", False):
        return
    started = LiveServerThread.__init__

    def gated_init(self: LiveServerThread, *args: Any, **kwargs: Any) -> None:
        started(self, *args, **kwargs)
        handler = self.static_handler
        self.static_handler = lambda application: _Gated(handler(application))  # type: ignore[assignment]

    gated_init.gated = True  # type: ignore[attr-defined]
    LiveServerThread.__init__ = gated_init  # type: ignore[method-assign]
