"""How many queries a claim and a submit through the REST API cost: the hot path of the queue.

The bounds are upper limits, so a change that adds a query per request shows here first.
"""

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.base import Cast
from tests.hits.factories import make_benchmark, make_hits
from tests.hits.test_work_api import honest

pytestmark = pytest.mark.django_db

# Token with roles and worker, savepoint, worker lock, held claims, next HIT, counter, insert,
# release, the HIT's page.
CLAIM_QUERIES = 9
# Token with roles and worker, savepoint, this worker's assignment locked, items, answers, labels,
# the labels' tallies (docs/design.md §7, "Tallies"), the refresh request (one statement instead of a
# Celery message), status, release. (The savepoints are the test's transaction; in production they
# are BEGIN/COMMIT.)
SUBMIT_QUERIES = 10


def _claim_and_submit(cast: Cast) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    make_hits(make_benchmark(), 2)
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=cast.alice)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    with CaptureQueriesContext(connection) as claim:
        response = client.post("/api/work/claim", {}, format="json")
    assert response.status_code == 200
    claimed = response.json()
    payload = {"answers": honest(claimed), "seconds_on_page": 9.0}
    with CaptureQueriesContext(connection) as submit:
        response = client.post(f"/api/work/assignments/{claimed['id']}/submit", payload, format="json")
    assert response.status_code == 200
    return claim.captured_queries, submit.captured_queries


@pytest.mark.production_database("pins the statements as PostgreSQL runs them (prepared, writes chained in one)")
def test_a_claim_through_the_api_takes_a_bounded_number_of_queries(cast: Cast) -> None:
    claim, _ = _claim_and_submit(cast)
    assert len(claim) <= CLAIM_QUERIES


@pytest.mark.production_database("pins the statements as PostgreSQL runs them (prepared, writes chained in one)")
def test_a_submit_through_the_api_takes_a_bounded_number_of_queries(cast: Cast) -> None:
    _, submit = _claim_and_submit(cast)
    assert len(submit) <= SUBMIT_QUERIES
