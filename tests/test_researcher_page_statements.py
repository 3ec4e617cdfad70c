"""Every researcher page runs as many statements on a larger benchmark as on a small one, for a
benchmark of every scheme: the first reader after a change (figures computed) and the next ones
(figures read from the cache, annotation.changes) alike. A page whose count grew with the data would
run a statement per row somewhere.

The pages are read from the URL resolver (every page of the rooms that is not an API, an annotator's
page or a crowd's public page), so a page added later is pinned without a change here.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from analysis.evaluation import EvaluationOptions, scheme_evaluator
from analysis.exports import export_formats
from analysis.models import ExportJob
from annotation.models import Benchmark, ImportJob, Worker
from hits.models import Batch, HITItem
from hits.services import assignment_claim_next, assignment_submit
from tests.base import Cast
from tests.review.builders import simulated
from tests.routes import benchmark_ids, researcher_urls
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _one_figures_period(settings: Any) -> None:
    """Cached figures also age by the clock (``annotation.changes.figures_key``): a period's end
    falling between the two requests compared would recount. The comparison is of statements, not
    of ageing, so the period outlasts the test."""
    settings.BENCHMARK_FIGURES_MAX_AGE_SECONDS = 10**9


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
    "adjudication-queue",
    "adjudication-item",
}


def _benchmark(scheme_name: str, cast: Cast, *, size: int) -> tuple[Benchmark, dict[str, Any]]:
    """A benchmark of ``size`` sentences with four candidates each, its main step's batch and the
    work of every annotator the queue offers it to, an import job and an export job; the ids its
    pages take, each from its own rows (tests.routes.benchmark_ids)."""
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
    ImportJob.objects.create(
        benchmark_name=benchmark.name, benchmark=benchmark, file_name="file.csv", created_by=cast.researcher
    )
    ExportJob.objects.create(benchmark=benchmark, format=export_formats(benchmark)[0].name, created_by=cast.researcher)
    return benchmark, benchmark_ids(benchmark, batch=batch)


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
    small_hits, larger_hits = (Batch.objects.get(pk=ids["batch_id"]).hits.count() for _, ids in (small, larger))
    assert larger_hits > small_hits
    for benchmark, _ in (small, larger):
        # The first evaluation ever of a text stores its lemma (docs/design.md §10, "Stored lemmas"):
        # once per text, not per change, so both benchmarks' are stored before the pages are compared.
        evaluator = scheme_evaluator(benchmark)
        if evaluator is not None:
            evaluator.oracle(benchmark, EvaluationOptions())

    pinned: dict[str, tuple[int, int]] = {}
    grew: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {}
    larger_urls = researcher_urls(larger[1])
    for name, url in researcher_urls(small[1]).items():
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


# The pages whose figures every submit moves (docs/design.md §7, "Incremental figures"): their first
# request after a submit brings the figures kept per target up to date for the submitted target.
AFTER_SUBMIT = (
    "benchmark-detail",
    "benchmark-live",
    "benchmark-live?part=batches",
    "pipeline-progress",
    "analysis-statistics",
    "analysis-evaluation",
    "batch-list",
    "batch-detail",
    "batch-live",
)


def _after_submit(client: Client, benchmark: Benchmark, scheme_name: str, url: str, workers: list[Worker]) -> int:
    """The statements of ``url``'s first request after one HIT submitted (its figures read before it)."""
    client.get(url)
    for worker in workers:
        assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
        if assignment is not None:
            items = HITItem.objects.filter(hit_id=assignment.hit_id)
            assignment_submit(
                assignment=assignment, answers={item.pk: scheme_answer(scheme_name, item) for item in items}
            )
            break
    else:
        raise AssertionError(f"{scheme_name}: a HIT is left to submit before {url}")
    with CaptureQueriesContext(connection) as after:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(after.captured_queries)


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_the_first_request_after_a_submit_runs_as_many_statements_on_more_data(cast: Cast, scheme_name: str) -> None:
    client = Client()
    client.force_login(cast.researcher)
    workers = [Worker.objects.get(user=user) for user in (cast.alice, cast.bob, cast.carol)]
    workers += [simulated(f"after-submit-{number}") for number in range(6)]
    counts: dict[str, list[int]] = {}
    for size in (10, 30):
        sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(size))
        benchmark, batch = scheme_benchmark(
            scheme_name, cast, sentences=sentences, candidates=("perched", "rested", "squatted", "lounged")
        )
        urls = researcher_urls(benchmark_ids(benchmark, batch=batch))
        for name in AFTER_SUBMIT:
            if client.get(urls[name]).status_code != 200:
                continue  # a page the scheme does not offer (an evaluation)
            counts.setdefault(name, []).append(_after_submit(client, benchmark, scheme_name, urls[name], workers))
    assert {"benchmark-detail", "benchmark-live", "pipeline-progress", "batch-detail"} <= set(counts)
    grew = {name: found for name, found in counts.items() if len(set(found)) != 1 or len(found) != 2}
    assert grew == {}, "statements after a submit (small, larger benchmark)"
