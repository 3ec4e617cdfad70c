"""The crowd REST API: researchers only, one service per call, refusals as 409 with the message."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.base import Cast
from tests.crowds.crowd_helpers import (
    SITE,
    make_batch,
    mturk_worker,
    publish_locally,
    stubbed_mturk,
    submitted_assignment,
)


@pytest.fixture
def api(cast: Cast, settings: Any) -> APIClient:
    settings.SITE_URL = SITE
    client = APIClient()
    client.force_authenticate(cast.researcher)
    return client


def test_the_publish_plan_is_a_dry_run_with_the_cost(api: APIClient) -> None:
    batch = make_batch(hits=2)
    response = api.get(f"/api/batches/{batch.pk}/publish-plan/", {"environment": "production", "median_seconds": "30"})
    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["environment"], data["hits_to_publish"], data["assignments"]) == ("production", 2, 6)
    assert data["cost"]["total"] == "0.72" and data["cost"]["hourly_wage"] == "12.00"
    assert data["hit_type"]["Reward"] == "0.10"
    assert data["first_url"].startswith(f"{SITE}/mturk/hit/")


def test_publish_and_sync_through_the_api(api: APIClient, monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT1"})
        stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H1"}})
        published = api.post(
            f"/api/batches/{batch.pk}/publish/",
            {"environment": "sandbox", "qualifications": {"approved_hits": None}},
            format="json",
        )
        stub.add_response("list_assignments_for_hit", {"Assignments": []})
        synced = api.post(f"/api/batches/{batch.pk}/sync/", {"hold_seconds": 0}, format="json")
    assert published.status_code == 200 and published.json()["hits_created"] == 1
    assert synced.status_code == 200 and synced.json()["remote_assignments"] == 0
    status = api.get(f"/api/batches/{batch.pk}/crowd-status/").json()
    assert (status["postings"], status["environment"]) == (1, "sandbox")


def test_refusals_come_back_as_409_with_the_reason(api: APIClient) -> None:
    batch = make_batch(hits=1)
    publish_locally(batch)
    assignment = submitted_assignment(batch.hits.get(), mturk_worker("W1"), external_id="A1")
    response = api.post(f"/api/assignments/{assignment.pk}/approve/", {}, format="json")
    assert response.status_code == 409
    assert "sync the batch first" in response.json()["detail"]
    bonus = api.post(f"/api/assignments/{assignment.pk}/bonus/", {"amount": "0.10", "reason": "x"}, format="json")
    assert bonus.status_code == 409


def test_annotators_are_refused(cast: Cast) -> None:
    batch = make_batch(hits=1)
    client = APIClient()
    client.force_authenticate(cast.alice)
    assert client.post(f"/api/batches/{batch.pk}/sync/", {}, format="json").status_code == 403
    assert client.get(f"/api/batches/{batch.pk}/publish-plan/").status_code == 403


def test_the_schema_documents_the_crowd_operations(api: APIClient) -> None:
    schema = api.get("/api/schema/").content.decode()
    for operation in ("batch_publish_plan", "batch_publish", "batch_sync", "assignment_bonus", "worker_block_remote"):
        assert f"operationId: {operation}" in schema
