"""The researchers' REST API for batches, HITs and assignments, and its OpenAPI schema."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from annotation.models import Benchmark, Target
from hits.models import AssignmentStatus, Batch, BatchStatus
from hits.services import hits_generate
from schemes.swords.items import ItemKind
from tests.base import Cast
from tests.hits.assignment_data import make_assignment
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark() -> Benchmark:
    return build_benchmark("api")


@pytest.fixture
def api(cast: Cast) -> APIClient:
    client = APIClient()
    client.force_authenticate(cast.researcher)
    return client


@pytest.fixture
def batch(benchmark: Benchmark) -> Batch:
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    first, second = batch.hits.order_by("id")[:2]
    make_assignment(first, "w1", seconds=10.0)
    make_assignment(first, "w2", seconds=20.0, filtered=True)
    make_assignment(second, "w1", status=AssignmentStatus.CLAIMED)
    return batch


def test_a_researcher_creates_a_batch(api: APIClient, benchmark: Benchmark, cast: Cast) -> None:
    bright = Target.objects.get(word="bright")
    response = api.post(
        reverse("api-batch-list"),
        {"benchmark": "api", "step": 2, "seed": 3, "targets": [bright.pk], "reward": "0.20", "assignment_minutes": 15},
        format="json",
    )
    assert response.status_code == 201, response.data
    body = response.json()
    assert body["benchmark"] == "api"
    assert (body["step"], body["seed"], body["reward"], body["assignment_duration"]) == (2, 3, "0.20", "00:15:00")
    assert body["created_by"] == cast.researcher.username
    assert body["progress"]["hits_total"] == 1
    assert body["progress"]["cost_projected"] == "0.60"


def test_creation_errors_come_back_as_400_with_the_reason(api: APIClient, benchmark: Benchmark) -> None:
    url = reverse("api-batch-list")
    response = api.post(url, {"benchmark": "nope", "step": 2, "seed": 1}, format="json")
    assert response.status_code == 400
    assert "benchmark" in response.json()
    assert api.post(url, {"benchmark": "api", "step": 5, "seed": 1}, format="json").status_code == 400
    assert api.post(url, {"benchmark": "api", "step": 2, "seed": 1}, format="json").status_code == 201
    response = api.post(url, {"benchmark": "api", "step": 2, "seed": 1}, format="json")
    assert response.status_code == 400
    assert "nothing needs collecting" in response.json()["non_field_errors"][0]


def test_the_batch_list_filters_and_carries_progress(api: APIClient, batch: Batch) -> None:
    other = hits_generate(benchmark=build_benchmark("other"), step=2, seed=1)
    body = api.get(reverse("api-batch-list"), {"benchmark": "api"}).json()
    assert [row["id"] for row in body["results"]] == [batch.pk]
    progress = body["results"][0]["progress"]
    assert (progress["hits_total"], progress["assignments_valid"], progress["assignments_filtered"]) == (5, 1, 1)
    assert (progress["assignments_in_flight"], progress["median_seconds"], progress["cost_so_far"]) == (1, 10.0, "0.10")
    assert api.get(reverse("api-batch-list")).json()["count"] == 2
    assert api.get(reverse("api-batch-list"), {"status": "closed"}).json()["count"] == 0
    assert other.pk in [
        row["id"] for row in api.get(reverse("api-batch-list"), {"benchmark": "other"}).json()["results"]
    ]


def test_batch_detail_close_and_hits(api: APIClient, batch: Batch) -> None:
    assert api.get(reverse("api-batch-detail", args=[batch.pk])).json()["progress"]["hits_total"] == 5
    assert api.get(reverse("api-batch-detail", args=[999_999])).status_code == 404
    hits = api.get(reverse("api-batch-hits", args=[batch.pk])).json()
    assert hits["count"] == 5
    first = hits["results"][0]
    assert (first["assignments_valid"], first["assignments_required"], first["target"]["word"]) == (1, 3, "sat")
    assert hits["results"][1]["assignments_in_flight"] == 1
    closed = api.post(reverse("api-batch-close", args=[batch.pk])).json()
    assert closed["status"] == BatchStatus.CLOSED


def test_hit_detail_has_items_in_order_and_answers_per_assignment(api: APIClient, batch: Batch) -> None:
    hit = batch.hits.order_by("id").first()
    assert hit is not None
    body = api.get(reverse("api-hit-detail", args=[hit.pk])).json()
    assert body["target"]["word"] == "sat"
    assert body["target"]["context_text"] == "The cat sat on the mat."
    assert [item["position"] for item in body["items"]] == list(range(1, len(body["items"]) + 1))
    kinds = [item["kind"] for item in body["items"]]
    assert kinds.count(ItemKind.CONTROL_TARGET) == kinds.count(ItemKind.CONTROL_DISTRACTOR) == 1
    assert [a["worker"]["external_id"] for a in body["assignments"]] == ["w1", "w2"]
    assert len(body["assignments"][0]["answers"]) == len(body["items"])
    assert api.get(reverse("api-hit-detail", args=[999_999])).status_code == 404


def assignment_ids(api: APIClient, **filters: Any) -> list[int]:
    return [row["id"] for row in api.get(reverse("api-assignment-list"), filters).json()["results"]]


def test_assignments_filter_by_batch_hit_worker_status_and_spam_filter(api: APIClient, batch: Batch) -> None:
    everything = assignment_ids(api)
    assert len(everything) == 3
    assert assignment_ids(api, batch=batch.pk) == everything
    assert assignment_ids(api, benchmark="api") == everything
    assert len(assignment_ids(api, filtered="true")) == 1
    assert len(assignment_ids(api, status="claimed")) == 1
    assert len(assignment_ids(api, status=["claimed", "submitted"])) == 3
    assert len(assignment_ids(api, worker_external_id="w1")) == 2
    assert len(assignment_ids(api, hit=batch.hits.order_by("id").first().pk)) == 2  # type: ignore[union-attr]
    assert api.get(reverse("api-assignment-list"), {"status": "bogus"}).status_code == 400


def test_annotators_and_visitors_are_refused_the_researcher_api(cast: Cast, batch: Batch) -> None:
    hit = batch.hits.first()
    assert hit is not None
    calls = [
        ("get", reverse("api-batch-list")),
        ("post", reverse("api-batch-list")),
        ("get", reverse("api-batch-detail", args=[batch.pk])),
        ("post", reverse("api-batch-close", args=[batch.pk])),
        ("get", reverse("api-batch-hits", args=[batch.pk])),
        ("get", reverse("api-hit-detail", args=[hit.pk])),
        ("get", reverse("api-assignment-list")),
        ("post", reverse("api-batch-preview")),
        ("post", reverse("api-batch-clone", args=[batch.pk])),
        ("get", reverse("api-benchmark-settings", args=[batch.benchmark.name])),
        ("patch", reverse("api-benchmark-settings", args=[batch.benchmark.name])),
        ("get", reverse("api-benchmark-activity", args=[batch.benchmark.name])),
    ]
    annotator = APIClient()
    annotator.force_authenticate(cast.alice)
    visitor = APIClient()
    for method, url in calls:
        assert getattr(annotator, method)(url, {"benchmark": "api", "step": 2, "seed": 1}).status_code == 403, url
        assert getattr(visitor, method)(url).status_code in (401, 403), url
    batch.refresh_from_db()
    assert batch.status == BatchStatus.OPEN
    assert Batch.objects.count() == 1


def test_the_schema_describes_these_endpoints_without_warnings_or_errors() -> None:
    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    # Warnings located in other apps' modules are theirs; everything else (our views, and
    # project-wide ones such as enum name collisions) must be clean.
    elsewhere = ("annotation/", "analysis/")
    problems = [
        message
        for message in [*GENERATOR_STATS._warn_cache, *GENERATOR_STATS._error_cache]
        if not any(place in message for place in elsewhere)
    ]
    assert problems == []
    paths = schema["paths"]
    for path in ["/api/batches/", "/api/batches/{id}/", "/api/batches/{id}/close/", "/api/batches/{id}/hits/",
                 "/api/hits/{id}/", "/api/assignments/", "/api/batches/preview/", "/api/batches/{id}/clone/",
                 "/api/benchmarks/{name}/settings/", "/api/benchmarks/{name}/activity/"]:  # fmt: skip
        assert path in paths, path
    assert "post" in paths["/api/batches/"]
    parameters = {parameter["name"] for parameter in paths["/api/assignments/"]["get"]["parameters"]}
    assert {"batch", "hit", "worker", "status", "filtered", "benchmark"} <= parameters
