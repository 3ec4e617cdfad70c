"""Keys of the shared cache are the installation's own (crowdlex.cache.database_key): two databases
sharing one Redis database, a test run and a benchmark for instance, never read each other's
sessions, counts or cached figures."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings

from annotation.changes import benchmark_cached
from crowdlex.cache import RedisCache, database_key


@pytest.fixture
def shared(redis_url: str) -> Iterator[RedisCache]:
    """A Redis cache as the settings configure it, without a fixed prefix."""
    cache = RedisCache(redis_url, {"KEY_FUNCTION": database_key})
    yield cache


@pytest.fixture
def database(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Switch the installation's database by name, as a second installation would have it."""

    def use(name: str, host: str = "db.example") -> None:
        monkeypatch.setitem(
            settings.DATABASES, "default", {**settings.DATABASES["default"], "NAME": name, "HOST": host}
        )

    return use


def test_two_databases_sharing_one_redis_do_not_read_each_others_keys(shared: RedisCache, database: Any) -> None:
    key = f"figures-{uuid.uuid4().hex}"
    database("crowdlex")
    shared.set(key, "of crowdlex", timeout=60)
    database("crowdlex_bench")
    assert shared.get(key) is None
    shared.set(key, "of the bench", timeout=60)
    database("crowdlex", host="other.example")
    assert shared.get(key) is None
    database("crowdlex")
    assert shared.get(key) == "of crowdlex"
    database("crowdlex_bench")
    assert shared.get(key) == "of the bench"
    for name in ("crowdlex", "crowdlex_bench"):
        database(name)
        shared.delete(key)


def test_a_prefix_set_in_the_settings_is_used_as_given(redis_url: str, database: Any) -> None:
    key = f"figures-{uuid.uuid4().hex}"
    first = RedisCache(redis_url, {"KEY_FUNCTION": database_key, "KEY_PREFIX": "site-a"})
    second = RedisCache(redis_url, {"KEY_FUNCTION": database_key, "KEY_PREFIX": "site-b"})
    database("crowdlex")
    first.set(key, 1, timeout=60)
    assert second.get(key) is None
    database("another")
    assert first.get(key) == 1  # the prefix given, not the database, names the keys
    assert first.make_key(key).startswith("site-a:")
    first.delete(key)


def test_cached_figures_of_one_benchmark_id_are_computed_for_each_database(database: Any) -> None:
    # The figures are cached under the benchmark's id and change key: equal in two installations.
    key = uuid.uuid4().hex
    database("crowdlex")
    assert benchmark_cached(benchmark=1, name="counts", compute=lambda: "crowdlex's", key=key) == "crowdlex's"
    database("crowdlex_test")
    assert benchmark_cached(benchmark=1, name="counts", compute=lambda: "the test's", key=key) == "the test's"
    database("crowdlex")
    assert benchmark_cached(benchmark=1, name="counts", compute=lambda: "computed again", key=key) == "crowdlex's"
