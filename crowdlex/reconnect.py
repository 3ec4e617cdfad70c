"""Idempotent views run again when the database connection was lost under them.

When PostgreSQL restarts (or fails over, or ends a backend), the requests in flight fail with an
``OperationalError`` or ``InterfaceError``, and so do those that reach it while it is starting up.
A kept connection is tested before a request reuses it (``conn_health_checks``), which spares the
requests that come after; the ones in between would answer 500. The views an annotator leans on
are safe to run twice (a claim resumes the live claim, a submit of a submitted assignment changes
nothing, a return of a returned one neither, a page only reads), so they wear this decorator: the
broken connection is closed and the whole view runs again, after a short pause that doubles, for
up to ``DATABASE_RETRY_SECONDS`` in all.

Only a lost connection is retried. Any other database error (a constraint, a deadlock, a locked
SQLite file) is raised at once: the connection still answers, so the error is the request's own.
Nothing is retried inside a transaction (``ATOMIC_REQUESTS``, or a caller's ``atomic``), whose
earlier writes went with the connection. Views that are not idempotent are never wrapped.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import suppress
from functools import wraps
from typing import Any, TypeVar, cast

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, Error, InterfaceError, OperationalError, connections
from django.http import HttpRequest
from django.http.request import RawPostDataException

from crowdlex.dialect import dialect

logger = logging.getLogger(__name__)

View = TypeVar("View", bound=Callable[..., Any])

FIRST_PAUSE_SECONDS = 0.05
LONGEST_PAUSE_SECONDS = 2.0


def connection_lost(error: Error) -> bool:
    """Whether ``error`` says the connection to the database is gone rather than that a statement
    failed (``crowdlex.dialect``: PostgreSQL's SQLSTATE, or none at all for a connection the
    client finds gone; SQLite has no server to lose). The connection itself cannot tell
    afterwards: leaving the failed transaction already opened a new one.
    """
    return dialect().connection_lost(error)


def retry_on_lost_connection(view: View) -> View:
    """Run ``view`` again, on a new connection, when the database connection was lost under it.

    For idempotent views only (see the module's docstring). The request body is read before the
    first run, so that each run parses it afresh. A multipart form may have been parsed already (the
    CSRF check reads the form of every POST, and a multipart parse consumes the stream without
    keeping the body): then every run reads the parsed ``request.POST`` and ``request.FILES``.
    """

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        with suppress(RawPostDataException):
            request.body  # noqa: B018 - kept in memory, every run reads it again
        budget = time.monotonic() + settings.DATABASE_RETRY_SECONDS
        pause = FIRST_PAUSE_SECONDS
        while True:
            try:
                return view(request, *args, **kwargs)
            except (OperationalError, InterfaceError) as error:
                connection = connections[DEFAULT_DB_ALIAS]
                if connection.in_atomic_block or not connection_lost(error):
                    raise
                if time.monotonic() + pause > budget:
                    raise
                logger.warning("database connection lost (%s); %s %s again", error, request.method, request.path)
                connection.close()
                time.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE_SECONDS)

    return cast(View, wrapper)
