"""The activity log: written by the services themselves, shown on the benchmark page, its own page and the API."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from analysis.services import export_job_create
from annotation.models import Activity, ActivityKind, Benchmark, Candidate
from annotation.services import benchmark_create, benchmark_import, import_delete
from hits.services import batch_close, batch_reopen, candidate_exclude, hits_generate, worker_block
from review.services import worker_unblock
from tests.base import Cast
from tests.hits.assignment_data import make_assignment
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "swords_small.json"


def _kinds(benchmark: Benchmark) -> list[str]:
    return list(Activity.objects.filter(benchmark=benchmark).order_by("id").values_list("kind", flat=True))


def test_each_operation_writes_one_entry_with_who_and_what_came_of_it(cast: Cast) -> None:
    imported = benchmark_create(name="logged", created_by=cast.researcher)
    report = benchmark_import(path_or_file=FIXTURE, benchmark_name="logged", created_by=cast.researcher)
    assert _kinds(imported) == [ActivityKind.BENCHMARK_CREATED, ActivityKind.IMPORTED]
    entry = Activity.objects.get(benchmark=imported, kind=ActivityKind.IMPORTED)
    assert entry.result["labels"] == report.labels.created > 0 and entry.actor == cast.researcher

    benchmark = build_benchmark("collected")
    batch = hits_generate(benchmark=benchmark, step=2, seed=1, created_by=cast.researcher)
    assert batch_close(batch=batch, by=cast.researcher)
    assert not batch_close(batch=batch, by=cast.researcher)  # closed already: nothing happened, nothing logged
    assert batch_reopen(batch=batch, by=cast.researcher)
    candidate = Candidate.objects.filter(target__benchmark=benchmark).first()
    assert candidate is not None
    assert candidate_exclude(candidate=candidate, by=cast.researcher)
    export_job_create(benchmark=benchmark, format="candidates-csv", created_by=cast.researcher)

    assert _kinds(benchmark) == [
        ActivityKind.BATCH_CREATED,
        ActivityKind.BATCH_CLOSED,
        ActivityKind.BATCH_REOPENED,
        ActivityKind.CANDIDATE_EXCLUDED,
        ActivityKind.EXPORTED,
    ]
    entries = Activity.objects.filter(benchmark=benchmark)
    assert {entry.actor_name for entry in entries} == {"rita"}
    created = entries.get(kind=ActivityKind.BATCH_CREATED)
    assert created.result["hits"] == batch.hits.count()
    assert f"batch {batch.pk} created" in created.summary


def test_an_operation_that_fails_leaves_no_entry(cast: Cast) -> None:
    benchmark = build_benchmark("failing")
    hits_generate(benchmark=benchmark, step=2, seed=1)
    before = Activity.objects.count()
    with pytest.raises(ValueError):
        hits_generate(benchmark=benchmark, step=2, seed=1)
    dry = benchmark_import(path_or_file=FIXTURE, benchmark_name="dry")
    import_delete(benchmark=Benchmark.objects.get(name="dry"), origin=dry.origin, dry_run=True)
    assert Activity.objects.count() == before + 1  # the import of "dry" only
    removed = import_delete(benchmark=Benchmark.objects.get(name="dry"), origin=dry.origin, by=cast.researcher)
    entry = Activity.objects.get(kind=ActivityKind.IMPORT_REMOVED)
    assert entry.result["labels"] == removed.labels and entry.actor == cast.researcher


def test_a_block_is_logged_in_every_benchmark_the_worker_worked_in(cast: Cast) -> None:
    first, second = build_benchmark("first"), build_benchmark("second")
    for benchmark in (first, second):
        make_assignment(hits_generate(benchmark=benchmark, step=2, seed=1).hits.first(), "mallory")  # type: ignore[arg-type]
    from annotation.models import Worker

    mallory = Worker.objects.get(external_id="mallory")
    worker_block(worker=mallory, reason="copies answers", by=cast.researcher)
    worker_block(worker=mallory, reason="again", by=cast.researcher)  # blocked already: no second entry
    worker_unblock(worker=mallory, by=cast.researcher)
    for benchmark in (first, second):
        assert _kinds(benchmark)[-2:] == [ActivityKind.BLOCKED, ActivityKind.UNBLOCKED]
        blocked = Activity.objects.get(benchmark=benchmark, kind=ActivityKind.BLOCKED)
        assert "copies answers" in blocked.summary


def test_the_benchmark_page_shows_the_latest_and_the_activity_page_all_of_it(client: Client, cast: Cast) -> None:
    benchmark = build_benchmark("busy")
    batch = hits_generate(benchmark=benchmark, step=2, seed=1, created_by=cast.researcher)
    for _ in range(30):
        batch_close(batch=batch, by=cast.researcher)
        batch_reopen(batch=batch, by=cast.researcher)
    client.force_login(cast.researcher)
    page = client.get(reverse("benchmark-detail", args=["busy"])).content.decode()
    assert page.count("reopened a batch") + page.count("closed a batch") == 8
    assert reverse("benchmark-activity", args=["busy"]) in page

    everything = client.get(reverse("benchmark-activity", args=["busy"]))
    assert everything.context["page"].paginator.count == 61
    assert "?page=2" in everything.content.decode()
    closed = client.get(reverse("benchmark-activity", args=["busy"]), {"kind": "batch_closed"})
    assert closed.context["page"].paginator.count == 30
    unknown = client.get(reverse("benchmark-activity", args=["busy"]), {"kind": "nonsense"}, follow=True)
    assert unknown.context["page"].paginator.count == 61
    assert "Unknown kind of activity" in unknown.content.decode()


def test_the_api_pages_and_filters_the_log(cast: Cast) -> None:
    benchmark = build_benchmark("api-log")
    batch = hits_generate(benchmark=benchmark, step=2, seed=1, created_by=cast.researcher)
    batch_close(batch=batch, by=cast.researcher)
    api = APIClient()
    api.force_authenticate(cast.researcher)
    url = reverse("api-benchmark-activity", args=["api-log"])
    page = api.get(url, {"limit": 1}).json()
    assert page["count"] == 2 and len(page["results"]) == 1
    assert page["results"][0]["kind"] == "batch_closed" and page["results"][0]["actor"] == "rita"
    created = api.get(url, {"kind": "batch_created"}).json()
    assert [entry["result"]["batch"] for entry in created["results"]] == [batch.pk]
    assert api.get(url, {"kind": "nonsense"}).status_code == 400
    assert api.get(reverse("api-benchmark-activity", args=["missing"])).status_code == 404


def test_annotators_and_visitors_may_not_read_the_log(client: Client, cast: Cast) -> None:
    build_benchmark("secret")
    assert client.get(reverse("benchmark-activity", args=["secret"])).status_code == 302
    client.force_login(cast.alice)
    assert client.get(reverse("benchmark-activity", args=["secret"])).status_code == 403
    api = APIClient()
    assert api.get(reverse("api-benchmark-activity", args=["secret"])).status_code in (401, 403)
    api.force_authenticate(cast.alice)
    assert api.get(reverse("api-benchmark-activity", args=["secret"])).status_code == 403


def test_a_direct_download_is_logged_with_who_asked(client: Client, cast: Cast) -> None:
    benchmark = build_benchmark("downloaded")
    client.force_login(cast.researcher)
    response = client.get(reverse("analysis-export-direct", args=["downloaded", "candidates-csv"]))
    assert response.status_code == 200
    b"".join(response.streaming_content)  # type: ignore[attr-defined]
    entry = Activity.objects.get(benchmark=benchmark, kind=ActivityKind.EXPORTED)
    assert entry.actor == cast.researcher and entry.result == {"format": "candidates-csv", "direct": True}
