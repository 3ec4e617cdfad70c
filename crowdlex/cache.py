"""The shared cache in Redis (``CACHE_URL``), keeping one Redis client per connection pool, and its
keys, prefixed with the installation's database.

Django's Redis backend builds a new ``redis.Redis`` client around its connection pool for every
operation, and building one (its response callbacks, its event dispatcher) costs about as much CPU
as the operation itself. Every page reads its session from this cache and every throttled request
reads and writes its count, so the annotator's cycle paid for several clients per HIT. A client
shares its pool's connections and is safe to use from several threads, so one per pool serves them
all; the pools, the keys and what is stored are Django's.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from django.core.cache.backends import redis as django_redis
from django.core.cache.backends.base import DEFAULT_TIMEOUT


class RedisCacheClient(django_redis.RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # By the id of the pool (pools live as long as this client does).
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        # Django's own pool and client class (not in its type stubs).
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))
        if client is None:
            # Two threads may both build one here; either is as good as the other.
            client = self._clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class RedisCache(django_redis.RedisCache):
    """Django's ``RedisCache`` with ``RedisCacheClient`` above, and what the platform's own scripts
    and pipelines need of it (the sessions read with their accounts, the kept pages, the figures'
    writes sent together): its Redis client, and its values written and read as its own ``set`` and
    ``get`` write and read them. Django's backend keeps these on private attributes; they are read
    here alone, so a Django that renames them fails here, and every test of the shared cache with it."""

    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient

    def redis_client(self) -> Any:
        """The Redis client of the cache's writing pool (one per pool, ``RedisCacheClient``)."""
        return self._cache.get_client(write=True)

    def loads(self, raw: bytes) -> Any:
        """A value as the cache's ``get`` reads what its ``set`` wrote."""
        return self._cache._serializer.loads(raw)  # type: ignore[attr-defined]

    def pipeline_set(self, pipeline: Any, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT) -> None:
        """The cache's ``set(key, value, timeout)``, queued on a Redis ``pipeline`` of ``redis_client``:
        the key made and checked, the value serialized, a timeout of 0 deleting the key and None
        keeping it with no expiry, as ``set`` does."""
        name = self.make_and_validate_key(key)
        seconds = self.get_backend_timeout(timeout)
        if seconds == 0:
            pipeline.delete(name)
        else:
            pipeline.set(name, self._cache._serializer.dumps(value), ex=seconds)  # type: ignore[attr-defined]


# The prefix of each database an installation used, by what names it (see ``database_prefix``).
_prefixes: dict[tuple[Any, ...], str] = {}


def database_prefix() -> str:
    """A prefix naming the database of ``DATABASES["default"]`` (engine, host, port and name, hashed):
    two installations, or a test run and a benchmark, that share one Redis database read and write
    keys of their own. Read at each call, so a test database (whose name the test runner sets after
    start-up) has its own too."""
    database = settings.DATABASES["default"]
    get = database.get
    # Looked up by the values as they are (every key the pages' layer reads is made here); spelled
    # as text only to name a database not seen before.
    found = (get("ENGINE"), get("HOST"), get("PORT"), get("NAME"))
    prefix = _prefixes.get(found)
    if prefix is None:
        identity = tuple(str(part or "") for part in found)
        prefix = _prefixes[found] = "db-" + hashlib.sha256("\0".join(identity).encode()).hexdigest()[:16]
    return prefix


def database_key(key: str, key_prefix: str, version: int) -> str:
    """The cache's ``KEY_FUNCTION``: Django's key under ``CACHE_KEY_PREFIX`` when it is set, else under
    the installation's database (``database_prefix``; docs/design.md §7, "Researcher pages")."""
    return f"{key_prefix or database_prefix()}:{version}:{key}"
