"""The shared cache in Redis (crowdlex.cache): Django's behaviour, with one client per pool."""

from __future__ import annotations

import threading
import uuid

from crowdlex.cache import RedisCache


def _cache(redis_url: str) -> RedisCache:
    return RedisCache(redis_url, {"KEY_PREFIX": f"test-cache-{uuid.uuid4().hex}"})


def test_it_stores_reads_counts_and_deletes_as_djangos_redis_cache(redis_url: str) -> None:
    cache = _cache(redis_url)
    try:
        assert cache.get("missing", "default") == "default"
        cache.set("session", {"user": 7, "items": [1, 2]}, timeout=60)
        assert cache.get("session") == {"user": 7, "items": [1, 2]}
        assert cache.add("session", "other") is False
        cache.set("hits", 1, timeout=60)
        assert cache.incr("hits") == 2
        assert cache.get_many(["session", "hits", "missing"]) == {"session": {"user": 7, "items": [1, 2]}, "hits": 2}
        assert cache.delete("session") is True
        assert cache.get("session") is None
    finally:
        cache.delete_many(["session", "hits"])


def test_it_builds_one_client_for_every_operation_and_thread(redis_url: str) -> None:
    cache = _cache(redis_url)
    first = cache._cache.get_client(write=True)
    assert cache._cache.get_client() is first
    assert cache._cache.get_client(write=True) is first
    seen = []
    counts = []

    def work(index: int) -> None:
        seen.append(cache._cache.get_client())
        cache.set(f"key-{index}", index, timeout=60)
        counts.append(cache.get(f"key-{index}"))

    threads = [threading.Thread(target=work, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert all(client is first for client in seen)
        assert sorted(counts) == list(range(8))
    finally:
        cache.delete_many([f"key-{index}" for index in range(8)])


def test_a_value_set_on_a_pipeline_is_what_set_stores_and_get_reads(redis_url: str) -> None:
    cache = _cache(redis_url)
    client = cache.redis_client()
    try:
        cache.set("doomed", "old", timeout=60)
        pipeline = client.pipeline(transaction=False)
        cache.pipeline_set(pipeline, "figures", {"accepts": [1, 2], "share": 0.5}, timeout=60)
        cache.pipeline_set(pipeline, "forever", ("kept",), timeout=None)
        cache.pipeline_set(pipeline, "default", 7)
        cache.pipeline_set(pipeline, "doomed", "new", timeout=0)
        pipeline.execute()
        assert cache.get("figures") == {"accepts": [1, 2], "share": 0.5}
        assert 55 <= client.ttl(cache.make_key("figures")) <= 60
        assert cache.get("forever") == ("kept",) and client.ttl(cache.make_key("forever")) == -1
        assert cache.get("default") == 7 and 0 < client.ttl(cache.make_key("default")) <= cache.default_timeout
        # A timeout of 0 deletes, as ``set`` does.
        assert cache.get("doomed", "gone") == "gone"
        # What ``set`` stored reads back through ``loads`` (the sessions' script hands raw values).
        assert cache.loads(client.get(cache.make_key("figures"))) == {"accepts": [1, 2], "share": 0.5}
        assert cache.redis_client() is client
    finally:
        cache.delete_many(["figures", "forever", "default", "doomed"])
