"""The figures kept per target that a page reads, brought up to date together after a submit
(docs/design.md §7, "Incremental figures"): one read of the change state, of the counter's moves
and of the kept figures' indexes and changed buckets for all of them, their writes sent together
at the end. After any sequence of submits and refreshes the pages equal what they are when every
figure is computed from the rows (an empty cache), for a benchmark of every scheme, with buckets of
two targets."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import changes
from annotation.models import Benchmark, Label, Target, Worker
from annotation.selectors import _imported_labels, _target_counts
from annotation.services import benchmark_import
from hits.models import Assignment, HITItem
from hits.services import assignment_claim_next, assignment_submit
from review.services import benchmark_refresh
from tests.base import Cast
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db

SENTENCES = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(6))
CANDIDATES = ("perched", "rested", "squatted", "lounged")


@pytest.fixture(autouse=True)
def _one_figures_period(settings: Any) -> None:
    # The comparison is of figures kept and counted afresh, not of their ageing by the clock.
    settings.BENCHMARK_FIGURES_MAX_AGE_SECONDS = 10**9


def _pages(benchmark: Benchmark, batch_id: int) -> list[str]:
    """The pages whose figures every submit moves: the benchmark page (it reads six kept figures),
    the polls, the pipeline, the batches' pages and the evaluation (the statistics page shows
    agreement as last computed in the background, by design older than a fresh count: its kept rows
    are compared in tests/analysis/test_incremental_statistics.py)."""
    live = reverse("benchmark-live", args=[benchmark.name])
    return [
        reverse("benchmark-detail", args=[benchmark.name]),
        live,
        f"{live}?part=batches",
        reverse("pipeline-progress", args=[benchmark.name]),
        reverse("batch-list", args=[benchmark.name]),
        reverse("batch-detail", args=[batch_id]),
        reverse("batch-live", args=[batch_id]),
        reverse("analysis-evaluation", args=[benchmark.name]),
    ]


# What differs between two answers of one page besides its figures: the form's CSRF token.
_TOKEN = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]*"')


def _body(client: Client, url: str) -> bytes:
    response = client.get(url)
    assert response.status_code == 200, url
    return _TOKEN.sub(b"", response.content)


def _submit(benchmark: Benchmark, scheme_name: str, workers: list[Worker]) -> bool:
    """One HIT claimed and submitted by the first of ``workers`` offered one (False: none is)."""
    for worker in workers:
        assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
        if assignment is not None:
            items = HITItem.objects.filter(hit_id=assignment.hit_id)
            answers = {item.pk: scheme_answer(scheme_name, item) for item in items}
            assignment_submit(assignment=assignment, answers=answers)
            return True
    return False


def _index(key: str) -> bool:
    """Whether ``key`` is a kept figure's index (a bucket's ends with its number and token)."""
    return key.startswith("benchmark-kept:") and re.search(r":\d+:[0-9a-f]{12}$", key) is None


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_after_any_sequence_of_submits_the_pages_kept_figures_equal_a_fresh_count(
    cast: Cast, scheme_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes, "BUCKET_TARGETS", 2)
    rng = random.Random(scheme_name)
    benchmark, batch = scheme_benchmark(scheme_name, cast, sentences=SENTENCES, candidates=CANDIDATES)
    workers = [Worker.objects.get(user=user) for user in (cast.alice, cast.bob, cast.carol)]
    workers += [simulated(f"kept-{number}") for number in range(3)]
    client = Client()
    client.force_login(cast.researcher)
    # The pages of the scheme (a scheme that evaluates no system has no evaluation page).
    urls = [url for url in _pages(benchmark, batch.pk) if client.get(url).status_code == 200]

    # Which targets each page's kept figures were brought up to date for (None: every target).
    updated: list[set[int] | None] = []
    real = changes._changed_since

    def recorded(*args: Any) -> set[int] | None:
        found = real(*args)
        updated.append(None if found is None else set(found))
        return found

    monkeypatch.setattr(changes, "_changed_since", recorded)
    submits = 0
    for _ in range(4):
        # A submit read by some pages alone: the kept figures they read move ahead of the others'.
        submits += _submit(benchmark, scheme_name, rng.sample(workers, len(workers)))
        for url in rng.sample(urls, rng.randint(1, 3)):
            _body(client, url)
        for _ in range(rng.randint(1, 2)):
            submits += _submit(benchmark, scheme_name, rng.sample(workers, len(workers)))
        if rng.random() < 0.3:
            benchmark_refresh(benchmark=benchmark, touched_only=True)
        # The first page after the change brings the kept figures up to date; the others read them.
        order = rng.sample(urls, len(urls))
        kept = {url: _body(client, url) for url in order}
        cache.clear()
        fresh = {url: _body(client, url) for url in order}
        assert kept == fresh, f"{scheme_name}: the pages after a submit equal a fresh count"
    assert submits, f"{scheme_name}: the annotators submitted work"
    assert any(found for found in updated), f"{scheme_name}: some kept figures were brought up to date, not recounted"


def test_a_page_reads_the_change_state_and_the_kept_figures_once_for_all_of_them(cast: Cast) -> None:
    """The benchmark page after a submit: one read of the change state and of the counter's moves
    however many kept figures it brings up to date, and each kept figure's index read once."""
    benchmark, _ = scheme_benchmark("swords", cast, sentences=SENTENCES, candidates=CANDIDATES)
    client = Client()
    client.force_login(cast.researcher)
    url = reverse("benchmark-detail", args=[benchmark.name])
    _body(client, url)
    _body(client, url)  # the kept figures it reads are learnt as read together
    assert _submit(benchmark, "swords", [Worker.objects.get(user=cast.bob)])
    sent: list[list[str]] = []
    real_get_many = changes.cache.get_many

    answered: dict[str, Any] = {}

    def get_many(keys: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(list(keys))
        found = real_get_many(keys, *args, **kwargs)
        answered.update(found)
        return found

    updated: list[set[int] | None] = []
    real_changed = changes._changed_since

    def changed_since(*args: Any) -> set[int] | None:
        found = real_changed(*args)
        updated.append(found)
        return found

    with CaptureQueriesContext(connection) as statements, pytest.MonkeyPatch.context() as patch:
        patch.setattr(changes.cache, "get_many", get_many)
        patch.setattr(changes, "_changed_since", changed_since)
        _body(client, url)
    submitted = set(Assignment.objects.filter(worker__user=cast.bob).values_list("hit__target_id", flat=True))
    assert updated and all(found is not None and found <= submitted for found in updated), (
        "the kept figures the previous request wrote are brought up to date for the submitted target alone"
    )
    sql = [query["sql"] for query in statements.captured_queries]
    assert sum("touched.target_ids" in each for each in sql) == 1, "the change state is read once"
    moves = [each for each in sql if changes.BenchmarkChangeTargets._meta.db_table in each]
    assert len(moves) <= 1, "the counter's moves are read once for every kept figure"
    indexes = [key for keys in sent for key in keys if _index(key)]
    assert len(indexes) >= 4, "the page reads several kept figures"
    assert len(indexes) == len(set(indexes)), "each kept figure's index is read once"
    assert set(indexes) <= set(answered), "the kept figures the page reads were written by the requests before"
    index_reads = [
        keys for keys in sent if any(key.startswith("benchmark-kept:") and key.count(":") == 2 for key in keys)
    ]
    assert len(index_reads) == 1, "the indexes read together before are read in one round trip"


def _through_kept_pages(client: Client, url: str) -> None:
    """A GET of ``url`` through the WSGI application production serves (``crowdlex.kept_pages``: its
    layer reads the page's change key before Django runs the view), with ``client``'s cookies."""
    from io import BytesIO
    from wsgiref.util import setup_testing_defaults

    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from crowdlex.api_errors import ResolvingOnceHandler
    from crowdlex.kept_pages import KeptPages

    environ: dict[str, Any] = {"PATH_INFO": url, "HTTP_HOST": "testserver", "wsgi.input": BytesIO()}
    environ["HTTP_COOKIE"] = "; ".join(f"{key}={morsel.value}" for key, morsel in client.cookies.items())
    setup_testing_defaults(environ)
    started: dict[str, str] = {}

    def start(status: str, headers: Any, exc_info: Any = None) -> None:
        started["status"] = status

    # As the test client does: the test's transaction stays open across the request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        answer = KeptPages(ResolvingOnceHandler())(environ, start)
        b"".join(answer)
        getattr(answer, "close", lambda: None)()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    assert started["status"].startswith("200"), started


def test_a_page_the_kept_pages_layer_serves_reads_the_change_state_once(kept: Any, cast: Cast) -> None:
    """As served in production, the layer in front of Django having read the page's change key: its
    kept figures still share one read of the change state after a submit."""
    benchmark, _ = scheme_benchmark("swords", cast, sentences=SENTENCES, candidates=CANDIDATES)
    client = Client()
    client.force_login(cast.researcher)
    url = reverse("benchmark-detail", args=[benchmark.name])
    _through_kept_pages(client, url)
    assert _submit(benchmark, "swords", [Worker.objects.get(user=cast.bob)])
    with CaptureQueriesContext(connection) as statements:
        _through_kept_pages(client, url)
    sql = [query["sql"] for query in statements.captured_queries]
    assert any(changes.every_keys_statement() in each or "refreshtouched t ON" in each for each in sql[:3]), (
        "the layer read the page's change key before the view"
    )
    assert sum("touched.target_ids" in each for each in sql) == 1, "the change state is read once"
    assert sum(changes.BenchmarkChangeTargets._meta.db_table in each for each in sql) <= 1


def test_the_changed_targets_labels_read_once_give_the_counts_and_imported_labels_read_apart(
    cast: Cast, tmp_path: Path
) -> None:
    """The counts and the imported labels by origin of some targets, from their labels read once
    between them (``annotation.selectors._label_rows``), equal each read apart from every target's
    rows: labels of two imports and collected ones on one target."""
    benchmark = make_benchmark(targets=2, candidates=6)
    for number, origin in ((1, "first-import"), (2, "second-import")):
        path = tmp_path / f"more-{number}.jsonl"
        context = "A dog ran along the beach."
        record = {"context": context, "target": "ran", "offset": context.index(" ran ") + 1, "pos": "verb"}
        candidate = {"text": f"sprinted{number}", "sources": ["coinco"], "labels": ["accept", "reject"]}
        path.write_text(json.dumps({**record, "candidates": [candidate, "dashed", "raced"]}) + "\n")
        benchmark_import(path_or_file=str(path), benchmark_name=benchmark.name, origin=origin)
    step2_batch(benchmark)
    for name in ("ann", "ben", "cat"):
        for _ in range(3):
            work_once(simulated(name), benchmark, honest())
    every = sorted(Target.objects.filter(benchmark=benchmark).values_list("pk", flat=True))
    whole_counts, whole_imported = _target_counts(benchmark, None), _imported_labels(benchmark, None)
    imported = next(target_id for target_id, origins in whole_imported.items() if len(origins) == 2)
    assert Label.objects.filter(candidate__target_id=imported, assignment__isnull=False).exists(), (
        "the target with labels of two imports has collected labels too"
    )
    for target_ids in ([imported], every, [every[0]]):
        assert _target_counts(benchmark, target_ids) == {
            target_id: counts for target_id, counts in whole_counts.items() if target_id in target_ids
        }
        assert _imported_labels(benchmark, target_ids) == {
            target_id: origins for target_id, origins in whole_imported.items() if target_id in target_ids
        }
