"""A benchmark's change key and the figures cached under it (annotation.changes)."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from annotation import changes
from annotation.changes import (
    benchmark_cached,
    benchmark_changed,
    change_key,
    figures_key,
    one_figures_key,
)
from annotation.models import Benchmark


def test_readers_after_a_change_wait_for_the_one_computing_the_figures() -> None:
    calls: list[int] = []
    results: list[int] = []
    key = uuid.uuid4().hex

    def compute() -> int:
        calls.append(1)
        time.sleep(0.3)
        return 42

    def read() -> None:
        results.append(benchmark_cached(benchmark=1, name="figures", compute=compute, key=key))

    readers = [threading.Thread(target=read) for _ in range(5)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()

    assert results == [42] * 5
    assert len(calls) == 1


def test_figures_that_are_none_are_cached_too() -> None:
    calls: list[int] = []
    key = uuid.uuid4().hex

    def compute() -> None:
        calls.append(1)

    for _ in range(3):
        assert benchmark_cached(benchmark=1, name="nothing", compute=compute, key=key) is None
    assert len(calls) == 1


def test_a_reader_computes_the_figures_itself_when_the_one_computing_them_failed() -> None:
    key = uuid.uuid4().hex

    def fails() -> int:
        raise RuntimeError("the database went away")

    with pytest.raises(RuntimeError):
        benchmark_cached(benchmark=1, name="figures", compute=fails, key=key)
    assert benchmark_cached(benchmark=1, name="figures", compute=lambda: 7, key=key) == 7


@pytest.mark.django_db(transaction=True)
def test_a_change_rolled_back_never_gives_its_key_to_the_next_change() -> None:
    benchmark = Benchmark.objects.create(name="changes")
    before = change_key(benchmark_id=benchmark.pk)
    inside = ""
    with pytest.raises(RuntimeError), transaction.atomic():
        benchmark_changed(benchmark_id=benchmark.pk)
        # The move is held to the commit; the key's read in the transaction makes it then.
        assert change_key(benchmark_id=benchmark.pk) != before
        raise RuntimeError("the change fails")
    assert change_key(benchmark_id=benchmark.pk) == before
    with pytest.raises(RuntimeError), transaction.atomic():
        # A move made, as just before a commit, by a transaction that then fails ...
        changes._move(benchmark_id=benchmark.pk, target_ids=None)
        inside = change_key(benchmark_id=benchmark.pk)
        # ... and a reader inside it that cached figures of data that will not be.
        benchmark_cached(benchmark=benchmark, name="figures", compute=lambda: "rolled back", key=inside)
        raise RuntimeError("the change fails")
    assert change_key(benchmark_id=benchmark.pk) == before

    benchmark_changed(benchmark_id=benchmark.pk)
    after = change_key(benchmark_id=benchmark.pk)
    assert after not in {before, inside}
    assert benchmark_cached(benchmark=benchmark, name="figures", compute=lambda: "current", key=after) == "current"


@pytest.mark.django_db
def test_a_page_reads_the_figures_key_once_and_the_next_request_sees_a_change() -> None:
    benchmark = Benchmark.objects.create(name="once")
    seen: list[tuple[str, str, int]] = []

    @one_figures_key
    def page(request: HttpRequest) -> HttpResponse:
        with CaptureQueriesContext(connection) as read:
            first = figures_key(benchmark_id=benchmark.pk)
            benchmark_changed(benchmark_id=benchmark.pk)  # another request's change, meanwhile
            second = figures_key(benchmark_id=benchmark.pk)
        reads = [query for query in read.captured_queries if "SUM(touches), MAX(id)" in query["sql"]]
        seen.append((first, second, len(reads)))
        return HttpResponse()

    factory = RequestFactory()
    page(factory.get("/"))
    page(factory.get("/"))
    page(factory.post("/"))
    (first, second, reads), (after, _, _), (posted, posted_again, posted_reads) = seen
    assert (first == second, reads) == (True, 1), "one state of the benchmark a page"
    assert after != first, "the next request reads the key again"
    assert (posted != posted_again, posted_reads) == (True, 2), "a request that writes reads after its write"
