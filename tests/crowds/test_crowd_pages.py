"""The researcher's crowd pages: the cost preview, publish, sync, review and worker actions."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from annotation.models import Activity, ActivityKind
from hits.models import Bonus, FilteredPolicy, RemoteHIT
from tests.base import PASSWORD, Cast
from tests.crowds.crowd_helpers import (
    SITE,
    make_batch,
    mturk_worker,
    publish_locally,
    stubbed_mturk,
    submitted_assignment,
)


@pytest.fixture
def researcher(cast: Cast, settings: Any) -> Client:
    settings.SITE_URL = SITE
    client = Client()
    assert client.login(username="rita", password=PASSWORD)
    return client


def test_the_crowd_page_previews_what_publishing_would_send_and_cost(researcher: Client) -> None:
    batch = make_batch(hits=3)
    html = researcher.get(f"/batches/{batch.pk}/crowd/").content.decode()
    assert "HITs: 3 to publish (0 already published), 3 assignments each, 9 assignments in all" in html
    assert "Cost: rewards $0.90 + fee $0.18 = $1.08" in html
    assert "Publish 3 HITs for $1.08" in html
    assert f"{SITE}/mturk/hit/" in html
    assert "Qualifications: approval rate &gt; 98 %; locale = US; HITs approved &gt; 10,000" in html


def test_annotators_cannot_see_or_use_the_crowd_pages(cast: Cast) -> None:
    batch = make_batch(hits=1)
    client = Client()
    client.login(username="alice", password=PASSWORD)
    assert client.get(f"/batches/{batch.pk}/crowd/").status_code == 403
    assert client.post(f"/batches/{batch.pk}/crowd/sync/").status_code == 403


def test_publishing_from_the_page_stores_the_chosen_qualifications(researcher: Client, monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT1"})
        stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H1", "HITGroupId": "G1"}})
        response = researcher.post(
            f"/batches/{batch.pk}/crowd/publish/",
            {"environment": "sandbox", "approval_rate": "98", "locale": "us", "approved_hits": "", "confirmed": "yes"},
            follow=True,
        )
    html = response.content.decode()
    assert "Published: 1 HITs created" in html
    assert "https://workersandbox.mturk.com/projects/G1/tasks" in html
    batch.refresh_from_db()
    assert batch.qualifications == {"approval_rate": 98, "locale": "US", "approved_hits": None}
    assert RemoteHIT.objects.get().external_id == "H1"
    published = Activity.objects.get(benchmark=batch.benchmark, kind=ActivityKind.PUBLISHED)
    assert published.actor_name == "rita" and published.result["hits_created"] == 1


def test_production_needs_an_explicit_confirmation(researcher: Client) -> None:
    batch = make_batch(hits=1)
    response = researcher.post(
        f"/batches/{batch.pk}/crowd/publish/", {"environment": "production", "confirmed": "yes"}, follow=True
    )
    assert "Tick this to publish to production." in response.content.decode()
    assert not RemoteHIT.objects.exists()


def test_mturks_refusal_is_shown_on_the_page(researcher: Client, monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_client_error("create_hit_type", service_error_code="RequestError", service_message="Not enough funds")
        response = researcher.post(
            f"/batches/{batch.pk}/crowd/publish/", {"environment": "sandbox", "confirmed": "yes"}, follow=True
        )
    assert "MTurk refused create_hit_type: Not enough funds" in response.content.decode()


def test_sync_approve_reject_bonus_and_block_from_the_page(researcher: Client, monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    good = submitted_assignment(posting.hit, mturk_worker("W1"), external_id="A1", external_status="Submitted")
    bad = submitted_assignment(posting.hit, mturk_worker("W2"), external_id="A2", external_status="Submitted")
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("approve_assignment", {}, {"AssignmentId": "A1", "OverrideRejection": False})
        stub.add_response("reject_assignment", {}, {"AssignmentId": "A2", "RequesterFeedback": batch.rejection_message})
        stub.add_response("list_bonus_payments", {"BonusPayments": []})
        stub.add_response("send_bonus", {})
        stub.add_response("create_worker_block", {}, {"WorkerId": "W2", "Reason": "Random answers"})
        researcher.post(f"/assignments/{good.pk}/approve/", {"confirmed": "yes"})
        researcher.post(f"/assignments/{bad.pk}/reject/", {"confirmed": "yes"})
        bonus_page = researcher.post(
            f"/assignments/{good.pk}/bonus/",
            {"amount": "0.30", "reason": "Great work", "confirmed": "yes"},
            follow=True,
        )
        researcher.post(
            f"/workers/{bad.worker_id}/crowd-block/",
            {"reason": "Random answers", "next": "/elsewhere", "confirmed": "yes"},
        )
    assert "$0.30 bonus (+ $0.06 MTurk fee) sent to W1" in bonus_page.content.decode()
    good.refresh_from_db()
    bad.refresh_from_db()
    assert (good.status, bad.status) == ("approved", "rejected")
    assert Bonus.objects.get().status == "sent"
    bad.worker.refresh_from_db()
    assert bad.worker.blocked
    # Each decision is in the benchmark's activity log, with who made it and what came of it.
    log = {entry.kind: entry for entry in Activity.objects.filter(benchmark=batch.benchmark, actor_name="rita")}
    assert {ActivityKind.APPROVED, ActivityKind.REJECTED, ActivityKind.BONUSED, ActivityKind.BLOCKED} <= set(log)
    assert log[ActivityKind.APPROVED].result["assignment"] == good.pk
    assert log[ActivityKind.BONUSED].result == {
        "bonus": Bonus.objects.get().pk,
        "assignment": good.pk,
        "worker": "W1",
        "amount": "0.30",
        "status": "sent",
    }
    assert "Random answers" in log[ActivityKind.BLOCKED].summary


def test_the_review_policy_is_saved(researcher: Client) -> None:
    batch = make_batch(hits=1)
    researcher.post(
        f"/batches/{batch.pk}/crowd/policy/", {"filtered_policy": "reject", "rejection_message": "Checks failed."}
    )
    batch.refresh_from_db()
    assert (batch.filtered_policy, batch.rejection_message) == (FilteredPolicy.REJECT, "Checks failed.")


def test_the_benchmark_page_lists_its_mturk_batches(researcher: Client) -> None:
    batch = make_batch(hits=1)
    html = researcher.get(f"/benchmarks/{batch.benchmark.name}/").content.decode()
    assert f'href="/batches/{batch.pk}/crowd/"' in html


def test_admin_actions_call_the_same_services(cast: Cast, settings: Any, monkeypatch: Any) -> None:
    settings.SITE_URL = SITE
    cast.researcher.is_superuser = True
    cast.researcher.save()
    client = Client()
    client.force_login(cast.researcher)
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    assignment = submitted_assignment(posting.hit, mturk_worker("W1"), external_id="A1", external_status="Submitted")
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("approve_assignment", {}, {"AssignmentId": "A1", "OverrideRejection": False})
        response = client.post(
            "/admin/hits/assignment/",
            {"action": "approve_assignments", "_selected_action": [assignment.pk]},
            follow=True,
        )
        stub.add_response("update_expiration_for_hit", {})
        client.post(
            "/admin/hits/batch/", {"action": "expire_batches", "_selected_action": [batch.pk], "confirmed": "yes"}
        )
    assert "1 assignment(s) approved." in response.content.decode()
    assignment.refresh_from_db()
    batch.refresh_from_db()
    assert (assignment.status, batch.status) == ("approved", "closed")
