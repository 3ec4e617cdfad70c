"""Every API input has its bounds in the serializer, and the schema states them: values past
them answer 400, never a server error (each case below once answered 500)."""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from crowdlex.pagination import MAX_PAGE_SIZE, LimitOffsetPagination
from hits.models import Assignment
from tests.base import Cast
from tests.crowds.crowd_helpers import make_batch
from tests.hits.factories import make_batch as make_local_batch
from tests.hits.factories import make_hit, make_target

pytestmark = pytest.mark.django_db

HUGE = 10**30


@pytest.fixture
def researcher(cast: Cast) -> APIClient:
    client = APIClient()
    client.force_authenticate(cast.researcher)
    return client


@pytest.mark.parametrize(
    ("method", "path", "data", "field"),
    [
        ("get", "/api/batches/{batch}/publish-plan/", {"median_seconds": "1e300"}, "median_seconds"),
        ("get", "/api/batches/{batch}/publish-plan/", {"median_seconds": "0.0001"}, "median_seconds"),
        ("post", "/api/batches/{batch}/sync/", {"hold_seconds": HUGE}, "hold_seconds"),
        ("post", "/api/batches/", {"benchmark": "{benchmark}", "step": 2, "seed": 2**32}, "seed"),
        (
            "post",
            "/api/batches/",
            {"benchmark": "{benchmark}", "step": 2, "seed": 1, "assignment_minutes": HUGE},
            "assignment_minutes",
        ),
        ("get", "/api/benchmarks/{benchmark}/agreement", {"seed": -1}, "seed"),
        ("get", "/api/benchmarks/{benchmark}/filter-audit", {"min_labels": HUGE}, "min_labels"),
    ],
)
def test_an_input_past_its_bounds_is_refused_with_400(
    researcher: APIClient, method: str, path: str, data: dict[str, Any], field: str
) -> None:
    batch = make_batch(name="bounds")
    names = {"batch": batch.pk, "benchmark": batch.benchmark.name}
    data = {key: value.format(**names) if isinstance(value, str) else value for key, value in data.items()}
    if method == "get":
        response = researcher.get(path.format(**names), data)
    else:
        response = researcher.post(path.format(**names), data, format="json")

    assert response.status_code == 400, response.content
    # Every error carries a detail sentence; the field refused is the only other key.
    assert list(response.json()) == ["detail", field]


def test_a_page_is_never_longer_than_the_maximum_whatever_the_limit(researcher: APIClient, cast: Cast) -> None:
    benchmark = make_batch(name="pages", hits=1).benchmark
    batch = make_local_batch(benchmark)
    make_hit(batch, make_target(benchmark))

    response = researcher.get("/api/batches/", {"limit": 2**70})

    assert response.status_code == 200
    assert len(response.json()["results"]) == 2
    query = Request(APIRequestFactory().get("/api/batches/", {"limit": 2**70}))
    assert LimitOffsetPagination().get_limit(query) == MAX_PAGE_SIZE


def test_an_unknown_batch_id_past_64_bits_is_not_found(cast: Cast) -> None:
    annotator = APIClient()
    annotator.force_authenticate(cast.alice)

    response = annotator.post("/api/work/claim", {"batch": 2**70}, format="json")

    assert response.status_code == 404
    assert not Assignment.objects.exists()


def _parameter(schema: dict[str, Any], path: str, name: str) -> dict[str, Any]:
    parameters = schema["paths"][path]["get"]["parameters"]
    return next(p["schema"] for p in parameters if p["name"] == name)


def test_the_schema_states_the_bounds() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]

    assert _parameter(schema, "/api/batches/", "limit")["maximum"] == MAX_PAGE_SIZE
    assert _parameter(schema, "/api/batches/{id}/publish-plan/", "median_seconds") == {
        "type": "number",
        "format": "double",
        "maximum": 86400,
        "minimum": 1,
    }
    assert _parameter(schema, "/api/benchmarks/{name}/agreement", "seed")["minimum"] == 0
    assert components["BatchCreate"]["properties"]["seed"]["maximum"] == 2**31 - 1
    assert components["BatchCreate"]["properties"]["assignment_minutes"]["maximum"] == 7 * 24 * 60
    assert components["SyncIn"]["properties"]["hold_seconds"]["maximum"] == 30 * 24 * 3600


@pytest.mark.parametrize("time", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00", "yesterday"])
def test_a_time_filter_postgres_cannot_hold_is_refused_with_400(researcher: APIClient, time: str) -> None:
    response = researcher.get("/api/assignments/", {"submitted_after": time})

    assert response.status_code == 400
    assert list(response.json()) == ["detail", "submitted_after"]


@pytest.mark.parametrize("time", ["2001-01-01T00:00:00-19:22", "0100-10-13T02:40:30-19:22"])
def test_a_time_filter_with_an_offset_postgres_refuses_is_read_as_utc(researcher: APIClient, time: str) -> None:
    response = researcher.get("/api/assignments/", {"submitted_after": time})

    assert response.status_code == 200
