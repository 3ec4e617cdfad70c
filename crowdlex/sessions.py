"""Sessions in the shared cache, written through to the database (Django's ``cached_db``), read
together with the signed-in account kept beside them (``crowdlex.accounts``): one round trip to
Redis for both (docs/design.md §7, "The signed-in account, kept")."""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import Any

from django.contrib.sessions.backends import cached_db

from crowdlex import accounts

logger = logging.getLogger(__name__)

# The session and its account as the kept pages' layer read them before Django ran, for the request
# it hands to Django (``crowdlex.kept_pages``): (session key, raw session, kept account), read once.
preloaded: ContextVar[tuple[str, bytes | None, Any] | None] = ContextVar("crowdlex_session_preloaded", default=None)


class SessionStore(cached_db.SessionStore):
    # The account the session key pointed at when the session was read: (its id, ``accounts.Kept``).
    kept_account: tuple[str, accounts.Kept] | None = None

    def load(self) -> dict[str, Any]:
        cache: Any = self._cache  # type: ignore[attr-defined]
        keeper = accounts.keeper(cache)
        if keeper is None:
            return super().load()  # type: ignore[no-any-return]
        found = preloaded.get()
        try:
            if found is not None and found[0] == self.session_key:
                preloaded.set(None)
                raw, self.kept_account = found[1], found[2]
            else:
                raw, self.kept_account = keeper.load_with_session(cache.make_key(self.cache_key), self.session_key)
        except Exception:
            logger.exception("The session and its account could not be read together")
            return super().load()  # type: ignore[no-any-return]
        if raw is None:
            # Not in the cache: Django's path, from the database and into the cache.
            return super().load()  # type: ignore[no-any-return]
        return cache.loads(raw)  # type: ignore[no-any-return]
