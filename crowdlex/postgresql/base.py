"""Django's PostgreSQL backend, with a health check that costs no round trip while the server is up.

A kept connection is checked before a request reuses it (``conn_health_checks``). Django checks by
running ``SELECT 1``, a transaction of its own on the server for every request. A server that ends
a connection (a restart, a failover, ``pg_terminate_backend``) says so on the socket first: an
error message, then the end of the stream. An idle connection has nothing to read, so a socket with
nothing waiting is taken as usable at once; only one with something waiting is tested with
``SELECT 1`` (and closed when that fails), as before.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        if self.connection is None or self.connection.closed:
            return False
        try:
            # poll, not select: select refuses descriptors past 1023, which a busy worker may hold.
            watch = select.poll()
            watch.register(self.connection.fileno(), select.POLLIN)
            waiting = watch.poll(0)
        except (OSError, ValueError):
            return False  # the socket itself is gone
        return not waiting or super().is_usable()
