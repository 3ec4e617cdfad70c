"""The local queue behind the same crowd interface: state changes here, nothing remote."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.utils import timezone

from annotation.models import Worker, WorkerKind
from crowds.interface import get_backend
from crowds.services import (
    assignment_approve,
    assignment_reject,
    batch_expire,
    batch_publish,
    batch_sync,
    worker_bonus,
    workers_notify,
)
from crowds.tasks import crowd_batches_sync_open
from hits.models import HIT, Assignment, AssignmentStatus, BatchStatus, BonusStatus
from tests.crowds.crowd_helpers import make_batch, submitted_assignment

pytestmark = pytest.mark.django_db


def _local_worker(name: str) -> Worker:
    return Worker.objects.create(kind=WorkerKind.LOCAL, external_id=name)


def test_publishing_opens_a_draft_batch_and_expiring_closes_it() -> None:
    batch = make_batch(backend="local", hits=2, status=BatchStatus.DRAFT)
    assert batch_publish(batch=batch).hits_existing == 2
    batch.refresh_from_db()
    assert batch.status == BatchStatus.OPEN
    assert batch_expire(batch=batch) == 2
    batch.refresh_from_db()
    assert batch.status == BatchStatus.CLOSED


def test_syncing_a_local_batch_expires_overdue_claims() -> None:
    batch = make_batch(backend="local", hits=1)
    hit = batch.hits.get()
    Assignment.objects.create(
        hit=hit,
        worker=_local_worker("late"),
        claimed_at=timezone.now() - timedelta(hours=2),
        deadline=timezone.now() - timedelta(hours=1),
    )
    HIT.objects.filter(pk=hit.pk).update(assignments_active=1)
    assert batch_sync(batch=batch).expired_claims == 1
    assert HIT.objects.get(pk=hit.pk).assignments_active == 0


def test_approve_reject_and_bonus_are_recorded_without_a_crowd() -> None:
    batch = make_batch(backend="local", hits=1)
    hit = batch.hits.get()
    good = submitted_assignment(hit, _local_worker("alice"), external_id="")
    bad = submitted_assignment(hit, _local_worker("sam"), external_id="")
    assert assignment_approve(assignment=good).status == AssignmentStatus.APPROVED
    rejected = assignment_reject(assignment=bad)
    assert rejected.status == AssignmentStatus.REJECTED and rejected.filtered
    assert rejected.feedback == batch.rejection_message
    assert HIT.objects.get(pk=hit.pk).assignments_active == 1
    bonus = worker_bonus(assignment=good, amount=Decimal("0.50"), reason="Thorough")
    assert bonus.status == BonusStatus.SENT
    result = workers_notify(workers=[good.worker], subject="Hello", text="More work soon.")
    assert result.notified == 0 and "alice" in result.failures


def test_the_local_queue_costs_rewards_only() -> None:
    batch = make_batch(backend="local", hits=2)
    estimate = get_backend("local").cost_estimate(batch=batch)
    assert (estimate.total, estimate.fees_total) == (Decimal("0.60"), 0)


def test_the_beat_schedule_syncs_crowd_batches_periodically() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["mturk-sync"]
    assert entry["task"] == "hits.tasks.mturk_sync_open_batches"
    # Nothing published: the task runs and syncs nothing.
    make_batch(hits=1)
    assert crowd_batches_sync_open() == 0
