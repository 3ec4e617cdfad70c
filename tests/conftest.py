"""Suite-wide set-up: fast password hashing, the fixed cast, and checks that services are up."""

import os
import socket
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest
import redis
from django.conf import settings
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from crowdlex import accounts
from crowdlex.dialect import dialect
from tests import live_gate
from tests.base import Cast, make_cast
from tests.browser import launch_chromium


def pytest_configure(config: pytest.Config) -> None:
    # MD5 hashing takes account set-up from seconds to milliseconds (docs/conventions.md, "Tests").
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    live_gate.install()


# Properties are checked on the examples, not timed: a shared or loaded machine (CI's is both) must
# not fail a property because drawing or running an example took long.
hypothesis_settings.register_profile(
    "crowdlex", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
hypothesis_settings.load_profile("crowdlex")


def _reachable(url: str) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 6379), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The Redis that Celery integration tests use. A missing one fails the test rather than skipping
    it, so that a green run always includes a real worker (the README says how to start Redis)."""
    url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    if not _reachable(url):
        pytest.fail(f"Redis is not reachable at {url}")
    return url


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("CI") == "true" and settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        raise pytest.UsageError("CI runs the suite on PostgreSQL: set DATABASE_URL")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``production_database(reason)`` pins what production's database alone does (how
    it runs statements, its planner, its catalog, the keys only it declares: ``crowdlex.dialect``'s
    ``production``): elsewhere (SQLite, the embedded default) it is skipped, with its reason."""
    marker = item.get_closest_marker("production_database")
    if marker is None:
        return
    reason = marker.args[0] if marker.args else marker.kwargs.get("reason", "")
    if not reason:
        raise pytest.UsageError(f"{item.nodeid}: production_database needs a reason")
    if not dialect().production:
        pytest.skip(f"production's database only ({dialect().name} here): {reason}")


@pytest.fixture(autouse=True)
def _local_cache_empty() -> None:
    """Each test starts with the process's own cache empty (the local-memory cache the suite runs
    with; a shared one, ``shared_cache``'s Redis, is never emptied). Its entries are keyed by
    benchmark ids and change counters, which on SQLite come again in the next test: a test's rows
    roll back, and each table's counter with them, where PostgreSQL's sequences never give a number
    twice. An entry an earlier test left (a warm queued and never run, figures kept per target of
    another benchmark under the same id) would otherwise be read as this test's."""
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    for each in caches.all(initialized_only=True):
        if isinstance(each, LocMemCache):
            each.clear()


@pytest.fixture
def shared_cache(settings: Any, redis_url: str) -> Iterator[Any]:
    """The cache and the sessions (with the signed-in account beside them) in Redis, as in production
    (``CACHE_URL``), under a prefix of this test's own; a redis-py client of its own on the same
    Redis (what a benchmark's floor reads with), whose keys under that prefix, the floor's copies
    included, are deleted after."""
    prefix = f"test-floor-{uuid.uuid4().hex}"
    settings.CACHES = {
        "default": {
            "BACKEND": "crowdlex.cache.RedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": prefix,
            "KEY_FUNCTION": "crowdlex.cache.database_key",
        }
    }
    settings.SESSION_ENGINE = "crowdlex.sessions"
    own = redis.Redis.from_url(redis_url)
    try:
        yield own
    finally:
        keys = list(own.scan_iter(match=f"*{prefix}:*"))
        if keys:
            own.delete(*keys)
        own.close()


@pytest.fixture
def kept(shared_cache: Any) -> accounts.Keeper:
    """The shared cache as above, with the signed-in account kept beside the session (crowdlex.accounts)."""
    found = accounts.keeper()
    assert found is not None
    return found


@pytest.fixture
def cast(db: None) -> Cast:
    return make_cast()


@pytest.fixture(autouse=True)
def _browser_contexts_closed(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test, before its database is flushed: every browser context it opened is closed
    (``tests.browser.close_quietly``), then the live servers' gate shuts and waits for the requests
    already inside (``tests.live_gate``); the next test opens it again."""
    live_gate.GATE.open()
    yield
    # The value the test had: a module's own browser fixture may be torn down already (then it
    # closed its contexts itself, and a closed browser lists none).
    browser = request.node.funcargs.get("browser")
    if browser is not None:
        from tests.browser import close_quietly

        for context in list(browser.contexts):
            close_quietly(context)
    still_inside = live_gate.GATE.shut()
    if still_inside:
        pytest.fail(f"{still_inside} request(s) to the live server were still being served when the test ended")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium, shared by the tests of a module (each opens its own context)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


@pytest.fixture
def served() -> Iterator[None]:
    """The test's database connection left open across requests, as Django's test client leaves it:
    the WSGI handler would otherwise close it when a request starts and ends."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
