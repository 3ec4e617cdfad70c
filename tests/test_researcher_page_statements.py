"""Every researcher page runs as many statements on a larger benchmark as on a small one, for a
benchmark of every scheme: the first reader after a change (figures computed) and the next ones
(figures read from the cache, annotation.changes) alike. A page whose count grew with the data would
run a statement per row somewhere.

The pages are read from the URL resolver (every page of the rooms that is not an API, an annotator's
page or a crowd's public page), so a page added later is pinned without a change here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import URLPattern, URLResolver, get_resolver

from analysis.exports import export_formats
from analysis.models import ExportJob
from annotation.models import Benchmark, ImportJob, Worker
from hits.models import HIT, Batch, HITItem
from hits.services import assignment_claim_next, assignment_submit
from tests.base import Cast
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db

ROOMS = {"annotation", "hits", "crowds", "review", "analysis", "schemes"}
NOT_RESEARCHER = ("api/", "work/", "mturk/", "prolific/", "^mturk/", "^prolific/", "accounts/", "admin/", "docs/")
# Pages a researcher reads daily: the walk must pin them, so it cannot pass by reaching none.
DAILY = {
    "benchmark-detail",
    "benchmark-live",
    "analysis-statistics",
    "pipeline-progress",
    "pipeline-workers",
    "analysis-exports",
    "batch-list",
    "batch-detail",
    "target-detail",
}


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


def _routes() -> list[tuple[str, str]]:
    found = []
    for route, pattern in _walk(get_resolver().url_patterns):
        view = getattr(pattern.callback, "view_class", pattern.callback)
        if view.__module__.split(".")[0] in ROOMS and not route.startswith(NOT_RESEARCHER) and pattern.name:
            found.append((pattern.name, route))
    return sorted(found)


def _benchmark(scheme_name: str, cast: Cast, *, size: int) -> tuple[Benchmark, dict[str, int]]:
    """A benchmark of ``size`` sentences with four candidates each, its main step's batch and the
    work of every annotator the queue offers it to; the ids its pages take."""
    sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(size))
    benchmark, batch = scheme_benchmark(
        scheme_name, cast, sentences=sentences, candidates=("perched", "rested", "squatted", "lounged")
    )
    for user in (cast.alice, cast.bob, cast.carol)[: 1 + size // 4]:
        worker = Worker.objects.get(user=user)
        for _ in range(size // 2):
            assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
            if assignment is None:
                break
            items = HITItem.objects.filter(hit_id=assignment.hit_id)
            answers = {item.pk: scheme_answer(scheme_name, item) for item in items}
            assignment_submit(assignment=assignment, answers=answers)
    job = ImportJob.objects.create(
        benchmark_name=benchmark.name, benchmark=benchmark, file_name="file.csv", created_by=cast.researcher
    )
    export = ExportJob.objects.create(
        benchmark=benchmark, format=export_formats(benchmark)[0].name, created_by=cast.researcher
    )
    hit = HIT.objects.filter(batch=batch).order_by("pk").first()
    target = benchmark.targets.order_by("pk").first()  # type: ignore[attr-defined]
    assert hit is not None and target is not None
    return benchmark, {
        "pk": batch.pk,
        "batch_id": batch.pk,
        "job_id": job.pk,
        "export": export.pk,
        "hit": hit.pk,
        "target": target.pk,
    }


def _urls(benchmark: Benchmark, ids: dict[str, int]) -> dict[str, str]:
    def value(route: str, key: str) -> str:
        if key == "name":
            return benchmark.name
        if route.startswith("hits/"):
            return str(ids["hit"])
        if route.startswith("targets/"):
            return str(ids["target"])
        if route.startswith("exports/"):
            return str(ids["export"])
        return str(ids.get(key, 1))

    def filled(route: str) -> str:
        return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", lambda match: value(route, match.group(2)), route)

    urls = {name: filled(route) for name, route in _routes()}
    urls["benchmark-live?part=batches"] = f"/benchmarks/{benchmark.name}/live/?part=batches"
    return urls


def _statements(client: Client, url: str) -> tuple[int, int, int]:
    """The answer's status, and the statements of the first request after a change (empty cache)
    and of the next one."""
    cache.clear()
    with CaptureQueriesContext(connection) as cold:
        response = client.get(url)
    with CaptureQueriesContext(connection) as warm:
        client.get(url)
    return response.status_code, len(cold.captured_queries), len(warm.captured_queries)


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_every_researcher_page_runs_as_many_statements_on_more_data(cast: Cast, scheme_name: str) -> None:
    client = Client()
    client.force_login(cast.researcher)
    small = _benchmark(scheme_name, cast, size=2)
    larger = _benchmark(scheme_name, cast, size=8)
    assert Batch.objects.get(pk=larger[1]["pk"]).hits.count() > Batch.objects.get(pk=small[1]["pk"]).hits.count()

    pinned: dict[str, tuple[int, int]] = {}
    grew: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {}
    larger_urls = _urls(*larger)
    for name, url in _urls(*small).items():
        status, cold, warm = _statements(client, url)
        if status != 200:
            continue  # an action (POST only), a download, or a page the scheme does not offer
        larger_status, larger_cold, larger_warm = _statements(client, larger_urls[name])
        assert larger_status == 200, f"{larger_urls[name]} answers on the larger benchmark too"
        pinned[name] = (cold, warm)
        if (cold, warm) != (larger_cold, larger_warm):
            grew[name] = ((cold, warm), (larger_cold, larger_warm))

    assert DAILY - set(pinned) == set(), "the walk reached the daily pages"
    assert grew == {}, "statements (first request, next request) on the small and the larger benchmark"
