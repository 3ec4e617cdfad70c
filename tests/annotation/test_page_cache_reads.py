"""A page built under ``one_figures_key`` reads each entry of the shared cache once, and the entries
it knows it reads together in one round trip (annotation.changes.page_cache_get,
page_cache_read_ahead; the fragments of a template, annotation.templatetags.fragments): for every
scheme, what each kept-figures page sends to Redis once its figures are kept."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from annotation.changes import one_figures_key, page_cache_get, page_cache_read_ahead, page_cache_set
from bench.floor import CacheCall, cache_calls_recorded
from tests.base import Cast
from tests.routes import benchmark_ids, researcher_urls
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_benchmark

pytestmark = pytest.mark.django_db

# The pages that read kept figures and fragments, by route name, and the most round trips to the
# cache each makes once they are kept, the session's read included (lower them, never raise them).
ROUND_TRIPS = {
    # The session; the page's figures (with the interactions and source yield) and those computed in the
    # background; its fragments.
    "analysis-statistics": 3,
    # The session; the label count every format's check reads.
    "analysis-exports": 2,
    # The session; the page's two fragments.
    "pipeline-progress": 2,
}


def _reads(calls: list[CacheCall]) -> Counter[str]:
    """How many times each key was read (GET, MGET) by ``calls``."""
    read: Counter[str] = Counter()
    for call in calls:
        for args, _ in call.commands:
            if str(args[0]).upper() in ("GET", "MGET"):
                read.update(str(key) for key in args[1:])
    return read


def _steady(client: Client, url: str) -> list[CacheCall]:
    """The round trips of a request of ``url`` once what it reads is kept (the first requests keep it)."""
    previous: list[Any] = []
    for _ in range(4):
        calls: list[Any] = []
        with cache_calls_recorded(calls):
            assert client.get(url).status_code == 200
        if [call.names for call in calls] == [call.names for call in previous]:
            return calls
        previous = calls
    raise AssertionError(f"{url}: the reads of the cache never settled")


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_each_kept_figures_page_reads_each_entry_once_in_few_round_trips(
    scheme_name: str, cast: Cast, shared_cache: Any, settings: Any
) -> None:
    settings.BENCHMARK_FIGURES_MAX_AGE_SECONDS = 10**9  # no period ends between the requests compared
    benchmark, batch = scheme_benchmark(scheme_name, cast)
    urls = researcher_urls(benchmark_ids(benchmark, batch=batch))
    client = Client()
    client.force_login(cast.researcher)
    for route, most in ROUND_TRIPS.items():
        calls = _steady(client, urls[route])
        twice = {key: count for key, count in _reads(calls).items() if count > 1}
        assert not twice, f"{route} ({scheme_name}) reads these entries more than once: {twice}"
        assert len(calls) <= most, f"{route} ({scheme_name}): {[call.names for call in calls]}"


def test_a_page_reads_an_entry_once_and_what_it_wrote_back(shared_cache: Any) -> None:
    cache.set("first", "one", timeout=60)
    cache.set("second", "two", timeout=60)

    @one_figures_key
    def page(request: Any) -> list[Any]:
        calls: list[Any] = []
        with cache_calls_recorded(calls):
            page_cache_read_ahead(["first", "second", "missing"])
            seen = [page_cache_get("first"), page_cache_get("second"), page_cache_get("missing")]
            page_cache_set("missing", "written", timeout=60)
            seen += [page_cache_get("missing"), page_cache_get("first")]
        return [seen, [call.names for call in calls]]

    seen, names = page(type("Request", (), {"method": "GET"})())
    assert seen == ["one", "two", None, "written", "one"]
    assert names == [["MGET"], ["SET"]], "one round trip for the three reads, none for a read again"

    calls: list[Any] = []
    with cache_calls_recorded(calls):
        page_cache_read_ahead(["first"])  # outside a page: nothing read ahead, each read goes to the cache
        assert page_cache_get("first") == page_cache_get("first") == "one"
    assert [call.names for call in calls] == [["GET"], ["GET"]]
