"""The operations API: pausing and resuming a batch (idempotent, 409 on a closed batch, editors only),
a benchmark's budget with its burn-down, and the budget cap through the settings API (owners only)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from annotation.access import Role, access_grant
from hits.models import Batch, CrowdLimits
from hits.services import batch_close
from tests.base import make_cast, make_user
from tests.hits.factories import make_benchmark, make_hits

pytestmark = pytest.mark.django_db


def _client(user: object) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)  # type: ignore[arg-type]
    return client


def test_a_batch_is_paused_and_resumed_through_the_api_once_each() -> None:
    cast = make_cast()
    benchmark = make_benchmark()
    batch = make_hits(benchmark, 2)[0].batch
    client = _client(cast.researcher)

    first = client.post(f"/api/batches/{batch.pk}/pause/")
    again = client.post(f"/api/batches/{batch.pk}/pause/")
    assert first.status_code == 200, first.content
    assert (first.json()["paused"], first.json()["changed"], again.json()["changed"]) == (True, True, False)
    assert "hands out none of its HITs" in first.json()["meaning"]
    assert client.get(f"/api/batches/{batch.pk}/").json()["paused_at"] == first.json()["paused_at"]

    resumed = client.post(f"/api/batches/{batch.pk}/resume/")
    assert (resumed.json()["paused"], resumed.json()["changed"]) == (False, True)
    assert Batch.objects.get(pk=batch.pk).paused_at is None

    batch_close(batch=batch)
    refused = client.post(f"/api/batches/{batch.pk}/pause/")
    assert refused.status_code == 409
    assert refused.json()["detail"] == f"batch {batch.pk} is closed: there is nothing to pause"


def test_the_budget_api_gives_cap_spent_committed_remaining_and_the_burn_down() -> None:
    cast = make_cast()
    benchmark = make_benchmark()
    make_hits(benchmark, 2, reward=Decimal("0.25"))  # 2 HITs x 3 assignments open on the local queue
    CrowdLimits.objects.create(benchmark=benchmark, budget_cap=Decimal("10.00"))
    answer = _client(cast.researcher).get(f"/api/benchmarks/{benchmark.name}/budget/").json()
    assert (answer["cap"], answer["spent"], answer["committed"], answer["remaining"]) == (
        "10.00",
        "0.00",
        "1.50",
        "8.50",
    )
    assert len(answer["burn"]) == 14 and answer["burn"][-1]["remaining"] == "10.00"


def test_the_cap_is_set_through_the_settings_api_by_owners_only_and_checked() -> None:
    cast = make_cast()
    benchmark = make_benchmark()
    access_grant(benchmark=benchmark, user=cast.researcher, role=Role.OWNER, by=None)
    editor = make_user("eddie", researcher=True)
    access_grant(benchmark=benchmark, user=editor, role=Role.EDITOR, by=cast.researcher)
    url = f"/api/benchmarks/{benchmark.name}/settings/"

    assert _client(editor).patch(url, {"budget_cap": "50.00"}, format="json").status_code == 403
    bad = _client(cast.researcher).patch(url, {"budget_cap": "12.345"}, format="json")
    assert bad.status_code == 400
    assert bad.json()["budget_cap"] == ["must be whole cents (two decimals at most)"]
    done = _client(cast.researcher).patch(url, {"budget_cap": "50.00"}, format="json")
    assert done.status_code == 200 and done.json()["budget_cap"] == "50.00"
    assert CrowdLimits.objects.get(benchmark=benchmark).budget_cap == Decimal("50.00")
    # The same value is an editor's to give; removing the cap is the owners'.
    assert _client(editor).patch(url, {"budget_cap": "50.00"}, format="json").status_code == 200
    assert _client(editor).patch(url, {"budget_cap": ""}, format="json").status_code == 403
    cleared = _client(cast.researcher).patch(url, {"budget_cap": ""}, format="json")
    assert cleared.json()["budget_cap"] is None
