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

from django.core.handlers.wsgi import WSGIHandler

# How long a teardown waits for requests already being served (a slow page under a loaded machine).
DRAIN_SECONDS = 60.0


class LiveServerGate:
    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._open = True
        self._inside = 0

    def enter(self) -> bool:
        """Let a request in, unless the gate is shut."""
        with self._condition:
            if not self._open:
                return False
            self._inside += 1
            return True

    def leave(self) -> None:
        with self._condition:
            self._inside -= 1
            self._condition.notify_all()

    def open(self) -> None:
        with self._condition:
            self._open = True

    def shut(self, *, wait: float = DRAIN_SECONDS) -> int:
        """Refuse new requests and wait for those inside; returns how many were still inside when
        the wait ran out (0 when all finished)."""
        deadline = time.monotonic() + wait
        with self._condition:
            self._open = False
            while self._inside and (remaining := deadline - time.monotonic()) > 0:
                self._condition.wait(remaining)
            return self._inside


GATE = LiveServerGate()


class _Body:
    """A response's body that leaves the gate when the server closes it (a streamed export reads
    the database while it is iterated, after the handler has returned)."""

    def __init__(self, body: Iterable[bytes], done: Callable[[], None]) -> None:
        self._body = body
        self._done: Callable[[], None] | None = done

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._body)

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            if self._done is not None:
                self._done()
                self._done = None


def install() -> None:
    """Put the gate in front of Django's WSGI handler, the one every live test server runs (the test
    client has its own handler and is not gated)."""
    if getattr(WSGIHandler.__call__, "gated", False):
        return
    served = WSGIHandler.__call__

    def gated(self: WSGIHandler, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if not GATE.enter():
            start_response("503 Service Unavailable", [("Content-Type", "text/plain"), ("Retry-After", "1")])
            return [b"The test that used this server has ended.\n"]
        try:
            body = served(self, environ, start_response)
        except BaseException:
            GATE.leave()
            raise
        return _Body(body, GATE.leave)

    gated.gated = True  # type: ignore[attr-defined]
    WSGIHandler.__call__ = gated  # type: ignore[method-assign]
