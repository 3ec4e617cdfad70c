"""A page's floor replays what the page ran, the statements the platform prepared included: their
``EXECUTE`` runs on the floor's own connection, prepared there once (bench.floor.replayable, run_read);
and its round trips to the shared cache (Redis), the session's read included, sent again in their
place by a redis-py client of the floor's own, its writes on keys of the floor's own
(bench.floor.cache_calls_recorded, replay_cache_call)."""

from __future__ import annotations

from typing import Any

import psycopg2
import pytest
import redis
from django.core.cache import cache
from django.core.signals import request_started
from django.db import connection
from django.test import Client

from bench.floor import (
    SHADOW_PREFIX,
    CacheCall,
    cache_calls_recorded,
    replay_cache_call,
    replayable,
    run_read,
    shadow_keys_delete,
    shadowed,
)
from crowdlex.sql import execute
from tests.base import Cast
from tests.routes import benchmark_ids, researcher_urls
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_benchmark

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.production_database("statements are prepared on PostgreSQL"),
]


def _own_connection() -> Any:
    database = connection.settings_dict
    return psycopg2.connect(
        host=database["HOST"],
        port=database["PORT"] or 5432,
        user=database["USER"],
        password=database["PASSWORD"],
        dbname=database["NAME"],
    )


def _recorded(sql: str, params: list[Any]) -> list[tuple[str, Any]]:
    recorded: list[tuple[str, Any]] = []

    def capture(run: Any, statement: str, values: Any, many: bool, context: Any) -> Any:
        recorded.append((statement, values))
        return run(statement, values, many, context)

    with connection.execute_wrapper(capture), connection.cursor() as cursor:
        execute(cursor, sql, params)
        assert cursor.fetchone() == (42,)
    return recorded


def test_a_prepared_statement_is_replayed_on_the_floors_own_connection(settings: Any) -> None:
    settings.DATABASE_PREPARED_STATEMENTS = True
    recorded = _recorded("SELECT CAST(%s AS integer) + 41", [1])
    assert recorded[0][0].startswith("EXECUTE")

    replay = replayable(recorded)
    assert replay == recorded, "the EXECUTE is part of the floor"
    raw = _own_connection()
    try:
        for _ in range(2):  # prepared once on the connection, executed each time
            run_read(raw, replay)
        with raw.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            prepared = [statement for (statement,) in cursor.fetchall()]
        assert len(prepared) == 1
        assert "CAST($1 AS integer) + 41" in prepared[0]
    finally:
        raw.close()


def test_an_execute_whose_statement_django_does_not_hold_is_left_out() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")  # a connection open, holding no statement of that name
    gone = ("EXECUTE crowdlex_00000000000000000000 (%s)", [2])
    assert replayable([gone, ("SELECT 1", None)]) == [("SELECT 1", None)]


# The shared cache ------------------------------------------------------------------------------


def _page_work(client: Client, url: str) -> list[Any]:
    """The statements and the round trips to the cache of one request of ``url``, in their order."""
    work: list[Any] = []

    def capture(run: Any, statement: str, values: Any, many: bool, context: Any) -> Any:
        work.append((statement, values))
        return run(statement, values, many, context)

    with connection.execute_wrapper(capture), cache_calls_recorded(work):
        response = client.get(url)
    assert response.status_code == 200
    return work


def _steady(client: Client, url: str) -> list[CacheCall]:
    """The round trips to the cache of a request of ``url`` once its figures are kept: the first
    requests compute them (and the task they queue, run eagerly here, keeps more)."""
    calls = _calls(_page_work(client, url))
    for _ in range(3):
        again = _calls(_page_work(client, url))
        if [call.names for call in again] == [call.names for call in calls]:
            return again
        calls = again
    raise AssertionError("the page's reads of the cache never settled")


def _calls(work: list[Any]) -> list[CacheCall]:
    return [step for step in work if isinstance(step, CacheCall)]


def _keys(calls: list[CacheCall], name: str) -> list[str]:
    return [
        (key.decode() if isinstance(key, bytes) else key)
        for call in calls
        for args, _ in call.commands
        if call.names[0] == name
        for key in args[1:]
    ]


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_a_pages_cache_reads_are_recorded_and_replayed_by_the_floor(
    scheme_name: str, cast: Cast, shared_cache: redis.Redis
) -> None:
    benchmark, batch = scheme_benchmark(scheme_name, cast)
    url = researcher_urls(benchmark_ids(benchmark, batch=batch))["analysis-statistics"]
    client = Client()
    client.force_login(cast.researcher)
    client.get(url)  # the figures computed and kept: the next reader reads them
    work = _page_work(client, url)
    calls = _calls(work)

    session = client.cookies["sessionid"].value
    # The session is read with the signed-in account kept beside it, in one script (crowdlex.sessions).
    session_reads = _keys(calls, "EVALSHA")
    assert any(str(key).endswith(session) for key in session_reads), "the session's read is the cache's"
    figures = [key for key in _keys(calls, "GET") + _keys(calls, "MGET") if not key.endswith(session)]
    assert figures, "the page reads its kept figures from the cache"

    replayed: list[Any] = []
    raw = _own_connection()
    try:
        with cache_calls_recorded(replayed):
            split = run_read(raw, replayable(work), shared_cache)
    finally:
        raw.close()
    assert split.cache_calls == len(calls)
    assert split.sql > 0 and split.cache > 0
    assert [call.commands for call in replayed] == [
        tuple((shadowed(args), options) for args, options in call.commands) for call in calls
    ], "the floor sends what the page sent, in its order"


def test_a_planted_extra_read_shows_up_in_the_floor(cast: Cast, shared_cache: redis.Redis) -> None:
    benchmark, batch = scheme_benchmark("swords", cast)
    url = researcher_urls(benchmark_ids(benchmark, batch=batch))["analysis-statistics"]
    client = Client()
    client.force_login(cast.researcher)
    before = _steady(client, url)

    def planted(**_: Any) -> None:
        cache.get("planted-read")

    request_started.connect(planted)
    try:
        after = _calls(_page_work(client, url))
    finally:
        request_started.disconnect(planted)
    assert len(after) == len(before) + 1
    assert [key for key in _keys(after, "GET") if key.endswith(":planted-read")]
    replayed: list[Any] = []
    with cache_calls_recorded(replayed):
        for call in after:
            replay_cache_call(shared_cache, call)
    assert len(replayed) == len(before) + 1


def test_the_floors_writes_go_to_keys_of_its_own(shared_cache: redis.Redis) -> None:
    work: list[Any] = []
    with cache_calls_recorded(work):
        cache.set("fragment", "rendered", timeout=60)
        cache.set_many({"first": 1, "second": 2}, timeout=60)
        cache.incr("first")
        assert cache.get("fragment") == "rendered"
    assert [call.pipeline for call in work] == [False, True, False, False, False]  # incr: EXISTS, INCRBY
    stored = {key: shared_cache.get(key) for key in shared_cache.scan_iter(match=cache.make_key("*"))}

    for call in work:
        replay_cache_call(shared_cache, call)
    after = {key: shared_cache.get(key) for key in shared_cache.scan_iter(match=cache.make_key("*"))}
    assert after == stored, "the page's keys hold what the page left"
    shadows = list(shared_cache.scan_iter(match=f"{SHADOW_PREFIX}*"))
    assert {key.removeprefix(SHADOW_PREFIX.encode()) for key in shadows} >= set(stored)
    assert shadow_keys_delete(shared_cache) >= len(stored)
    assert not list(shared_cache.scan_iter(match=f"{SHADOW_PREFIX}*"))
