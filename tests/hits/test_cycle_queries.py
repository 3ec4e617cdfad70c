"""What each request of the annotator's cycle costs in statements, pinned exactly: the HTML page, the
HTML submit (which claims the next HIT and redirects to it), the API claim and the API submit.

Exact counts, not bounds: a change that adds a statement shows here, and so does one that saves
some (update the pin and docs/benchmarks.md together). The savepoints are the test's transaction;
in production they are BEGIN and COMMIT. On PostgreSQL the cycle's own statements run prepared
(``crowdlex.sql``): EXECUTE here, with the PREPARE once per connection, not counted.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from hits.models import Assignment, HITItem
from schemes.swords.items import ItemKind
from tests.base import Cast
from tests.hits.factories import make_benchmark, make_hits
from tests.hits.test_work_api import honest

pytestmark = pytest.mark.django_db

# Session (read from the cache instead where CACHE_URL names one); the account with its roles and
# worker; the assignment with the worker's progress and the HIT's rows (one statement).
HTML_PAGE = 3
# One transaction for the request (savepoint ... release; crowdlex.transactions): session and
# account, then the submit (the worker's assignment locked with its HIT, batch and benchmark, and the
# HIT's part and word for the "saved" line, items, answers, labels, the tallies of its candidates
# and worker (one statement), the refresh request, status), and the claim of the next HIT (locked
# worker, held claims, the next HIT locked with its slot taken and the claim inserted in one
# statement). No session write.
HTML_SUBMIT = 14
# One transaction for the request (savepoint ... release): token with roles and worker, worker lock,
# held claims, the next HIT locked with its slot taken and the claim inserted (one statement), the
# HIT's page: the account and the page are read in the claim's transaction.
API_CLAIM = 7
# One transaction for the request (savepoint ... release): token with roles and worker, the worker's
# assignment locked, items, answers, labels, the tallies (one statement), the refresh request (one
# statement where a Celery message went before), status.
API_SUBMIT = 10


def statements(captured: CaptureQueriesContext) -> str:
    return "\n".join(f"{i:2d}. {query['sql'][:160]}" for i, query in enumerate(captured.captured_queries, 1))


def in_one_transaction(captured: CaptureQueriesContext) -> bool:
    """Whether every statement ran in one transaction: the request's (a savepoint in the test's)."""
    sql = [query["sql"] for query in captured.captured_queries]
    return (
        sql[0].startswith("SAVEPOINT")
        and sql[-1].startswith("RELEASE SAVEPOINT")
        and not any(s.startswith(("SAVEPOINT", "RELEASE SAVEPOINT")) for s in sql[1:-1])
    )


def page_answers(assignment: Assignment) -> dict[str, str]:
    answers = {}
    for item in HITItem.objects.filter(hit_id=assignment.hit_id):
        value = "reject" if item.kind == ItemKind.CONTROL_DISTRACTOR else "accept"
        answers[f"item-{item.pk}"] = value
    return answers


@pytest.fixture
def html(cast: Cast) -> tuple[Client, Assignment]:
    make_hits(make_benchmark(), 3)
    client = Client()
    client.force_login(cast.alice)
    response = client.post("/work/next")
    assert response.status_code == 302
    assignment = Assignment.objects.get(worker__user=cast.alice)
    return client, assignment


def test_the_html_page_of_a_claimed_hit(html: tuple[Client, Assignment]) -> None:
    client, assignment = html
    with CaptureQueriesContext(connection) as page:
        response = client.get(f"/work/assignments/{assignment.pk}/")
    assert response.status_code == 200
    assert len(page) == HTML_PAGE, statements(page)


@pytest.mark.production_database("pins the statements as PostgreSQL runs them (prepared, writes chained in one)")
def test_the_html_submit_that_opens_the_next_hit(html: tuple[Client, Assignment]) -> None:
    client, assignment = html
    answers = {**page_answers(assignment), "seconds_on_page": "12"}
    with CaptureQueriesContext(connection) as submit:
        response = client.post(f"/work/assignments/{assignment.pk}/", answers)
    assert response.status_code == 302 and "/work/assignments/" in response["Location"]
    assert len(submit) == HTML_SUBMIT, statements(submit)
    assert in_one_transaction(submit), statements(submit)


def _api(cast: Cast) -> APIClient:
    make_hits(make_benchmark(), 3)
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=cast.alice)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.mark.production_database("pins the statements as PostgreSQL runs them (prepared, writes chained in one)")
def test_the_api_claim(cast: Cast) -> None:
    client = _api(cast)
    with CaptureQueriesContext(connection) as claim:
        response = client.post("/api/work/claim", {}, format="json")
    assert response.status_code == 200
    assert len(claim) == API_CLAIM, statements(claim)
    assert in_one_transaction(claim), statements(claim)


@pytest.mark.production_database("pins the statements as PostgreSQL runs them (prepared, writes chained in one)")
def test_the_api_submit(cast: Cast) -> None:
    client = _api(cast)
    claimed: dict[str, Any] = client.post("/api/work/claim", {}, format="json").json()
    payload = {"answers": honest(claimed), "seconds_on_page": 9.0}
    with CaptureQueriesContext(connection) as submit:
        response = client.post(f"/api/work/assignments/{claimed['id']}/submit", payload, format="json")
    assert response.status_code == 200
    assert len(submit) == API_SUBMIT, statements(submit)
    assert in_one_transaction(submit), statements(submit)


# With the shared cache (CACHE_URL): the session and the signed-in account are read from it in one
# round trip (crowdlex.accounts), so the page is its own statement and the submit's transaction
# loses the session and the account.
HTML_PAGE_SHARED_CACHE = 1
HTML_SUBMIT_SHARED_CACHE = HTML_SUBMIT - 2


@pytest.mark.production_database("pins the statements as PostgreSQL runs them (prepared, writes chained in one)")
def test_the_html_cycle_with_the_shared_cache(kept: Any, html: tuple[Client, Assignment]) -> None:
    client, assignment = html
    client.get(f"/work/assignments/{assignment.pk}/")  # the account is kept from here on
    with CaptureQueriesContext(connection) as page:
        response = client.get(f"/work/assignments/{assignment.pk}/")
    assert response.status_code == 200
    assert len(page) == HTML_PAGE_SHARED_CACHE, statements(page)
    answers = {**page_answers(assignment), "seconds_on_page": "12"}
    with CaptureQueriesContext(connection) as submit:
        response = client.post(f"/work/assignments/{assignment.pk}/", answers)
    assert response.status_code == 302 and "/work/assignments/" in response["Location"]
    assert len(submit) == HTML_SUBMIT_SHARED_CACHE, statements(submit)
    assert in_one_transaction(submit), statements(submit)
