"""Deciding submitted work now, messaging a batch's workers and the admin's expiring of batches ask
first, with what they will do; asking calls no crowd and changes nothing, confirming acts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from crowds.mturk import EXPIRE_NOW
from hits.models import Assignment, Batch, BatchStatus, FilteredPolicy, RemoteHIT
from tests.base import PASSWORD, Cast
from tests.crowds.crowd_helpers import (
    SITE,
    make_batch,
    mturk_worker,
    publish_locally,
    remote_assignment,
    stubbed_mturk,
    submitted_assignment,
)

pytestmark = pytest.mark.django_db

LISTED = ["Submitted", "Approved", "Rejected"]


@pytest.fixture
def researcher(cast: Cast, settings: Any) -> Client:
    settings.SITE_URL = SITE
    settings.MTURK_RECONCILE_GRACE_SECONDS = 900
    client = Client()
    assert client.login(username="rita", password=PASSWORD)
    return client


def _statuses() -> dict[str, str]:
    return {assignment.external_id: assignment.status for assignment in Assignment.objects.all()}


def test_deciding_now_asks_with_the_approvals_rejections_and_dollars_then_decides(
    researcher: Client, monkeypatch: Any
) -> None:
    batch = make_batch(hits=1, assignments=2, filtered_policy=FilteredPolicy.REJECT, rejection_message="Checks failed.")
    (posting,) = publish_locally(batch)
    # Submitted a minute ago: inside the hold, so only deciding now reviews them.
    recent = timezone.now() - timedelta(minutes=1)
    for worker, external_id, filtered in (("W1", "A1", False), ("W2", "A2", False), ("W3", "A3", True)):
        submitted_assignment(
            posting.hit,
            mturk_worker(worker),
            external_id=external_id,
            filtered=filtered,
            submitted_at=recent,
            external_status="Submitted",
        )
    url = f"/batches/{batch.pk}/crowd/sync/"
    with stubbed_mturk(monkeypatch) as stub:  # no response stubbed: any call would fail the test
        asked = researcher.post(url, {"decide_now": "on"})
        stub.assert_no_pending_responses()
    html = asked.content.decode()
    assert asked.status_code == 200 and f"Sync batch {batch.pk} and decide its submitted work now?" in html
    assert "approve 2 submitted assignments and pay their workers $0.20 in rewards ($0.24 with MTurk" in html
    assert "reject 1 filtered assignments" in html and "Sync and pay $0.24" in html
    assert 'name="decide_now" value="on"' in html and 'name="confirmed" value="yes"' in html
    assert set(_statuses().values()) == {"submitted"}

    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {
                "Assignments": [
                    remote_assignment(name, worker, posting.external_id, SubmitTime=recent)
                    for name, worker in (("A1", "W1"), ("A2", "W2"), ("A3", "W3"))
                ]
            },
            {"HITId": posting.external_id, "MaxResults": 100, "AssignmentStatuses": LISTED},
        )
        for name in ("A1", "A2"):
            stub.add_response("approve_assignment", {}, {"AssignmentId": name, "OverrideRejection": False})
        stub.add_response("reject_assignment", {}, {"AssignmentId": "A3", "RequesterFeedback": "Checks failed."})
        done = researcher.post(url, {"decide_now": "on", "confirmed": "yes"})
    assert done.status_code == 302
    assert _statuses() == {"A1": "approved", "A2": "approved", "A3": "rejected"}


def test_a_sync_without_deciding_now_does_not_ask(researcher: Client, monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": []},
            {"HITId": posting.external_id, "MaxResults": 100, "AssignmentStatuses": LISTED},
        )
        response = researcher.post(f"/batches/{batch.pk}/crowd/sync/")
    assert response.status_code == 302
    assert "synced_at" in Batch.objects.get(pk=batch.pk).external


def test_notifying_asks_with_how_many_workers_then_messages_them(researcher: Client, monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    submitted_assignment(posting.hit, mturk_worker("W1"), external_id="A1", external_status="Submitted")
    submitted_assignment(posting.hit, mturk_worker("W2"), external_id="A2", external_status="Submitted")
    # Named only by a page's URL, never found in MTurk's list: not written to.
    submitted_assignment(posting.hit, mturk_worker("W3"), external_id="A3")
    url = f"/batches/{batch.pk}/crowd/notify/"
    message = {"subject": "Step 3", "text": "Up now."}
    with stubbed_mturk(monkeypatch) as stub:
        asked = researcher.post(url, message)
        stub.assert_no_pending_responses()
    html = asked.content.decode()
    assert asked.status_code == 200 and f"Message the workers of batch {batch.pk}?" in html
    assert "to the 2 workers whose submitted work MTurk confirmed" in html and "Message 2 workers" in html
    assert 'name="subject" value="Step 3"' in html

    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "notify_workers",
            {"NotifyWorkersFailureStatuses": []},
            {"Subject": "Step 3", "MessageText": "Up now.", "WorkerIds": ["W1", "W2"]},
        )
        done = researcher.post(url, {**message, "confirmed": "yes"}, follow=True)
    assert "2 workers notified." in done.content.decode()


def test_the_admin_expire_action_asks_with_the_hits_then_expires(cast: Cast, monkeypatch: Any, settings: Any) -> None:
    settings.SITE_URL = SITE
    cast.researcher.is_superuser = True
    cast.researcher.save()
    client = Client()
    client.force_login(cast.researcher)
    batch = make_batch(hits=2)
    first, second = publish_locally(batch)
    RemoteHIT.objects.filter(pk=second.pk).update(expired_at=timezone.now())
    chosen = {"action": "expire_batches", "_selected_action": [batch.pk]}
    with stubbed_mturk(monkeypatch) as stub:
        asked = client.post("/admin/hits/batch/", chosen)
        stub.assert_no_pending_responses()
    html = asked.content.decode()
    assert asked.status_code == 200 and "Expire every HIT of 1 batches?" in html
    assert f"expire the 1 live postings of 1 HITs on their crowd (batches {batch.pk})" in html
    assert "close the 1 batches" in html and 'name="action" value="expire_batches"' in html
    assert Batch.objects.get(pk=batch.pk).status == BatchStatus.OPEN

    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("update_expiration_for_hit", {}, {"HITId": first.external_id, "ExpireAt": EXPIRE_NOW})
        done = client.post("/admin/hits/batch/", {**chosen, "confirmed": "yes"}, follow=True)
    assert "1 batch(es) expired." in done.content.decode()
    assert Batch.objects.get(pk=batch.pk).status == BatchStatus.CLOSED
