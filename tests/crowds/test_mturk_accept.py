"""An MTurk worker's first visit to the ExternalQuestion page: one assignment per worker per HIT."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Target, TargetStage, Worker
from crowds.services import CrowdActionRefused, assignment_accept_remote
from hits.models import HIT, Assignment, AssignmentStatus, BatchStatus
from tests.crowds.crowd_helpers import make_batch, mturk_worker, publish_locally, submitted_assignment

pytestmark = pytest.mark.django_db


def _accept(posting, worker: str, assignment: str, **kwargs):  # type: ignore[no-untyped-def]
    return assignment_accept_remote(
        hit=posting.hit,
        worker_external_id=worker,
        assignment_external_id=assignment,
        hit_external_id=posting.external_id,
        **kwargs,
    )


def test_a_first_visit_creates_the_worker_and_takes_no_slot_since_mturk_decides_who_works() -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    assignment = _accept(posting, "W1", "A1")
    assert Worker.objects.get(kind="mturk", external_id="W1") == assignment.worker
    assert (assignment.status, assignment.external_id) == (AssignmentStatus.CLAIMED, "A1")
    assert HIT.objects.get(pk=posting.hit_id).assignments_active == 0
    assert assignment.deadline > timezone.now() + timedelta(minutes=30)


def test_a_reload_returns_the_same_assignment() -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    first = _accept(posting, "W1", "A1")
    assert _accept(posting, "W1", "A1") == first
    assert Assignment.objects.count() == 1


def test_a_hundred_and_fifty_forged_opens_leave_every_slot_to_real_workers() -> None:
    (posting,) = publish_locally(make_batch(hits=1, assignments=3))
    for number in range(150):
        _accept(posting, f"FORGED{number}", f"FAKE{number}")
    assert HIT.objects.get(pk=posting.hit_id).assignments_active == 0
    real = _accept(posting, "REALWORKER", "REALASSIGNMENT")
    assert real.status == AssignmentStatus.CLAIMED


def test_a_claim_is_never_rebound_to_another_assignment_id_and_a_second_id_gets_a_row_of_its_own() -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    real = _accept(posting, "W1", "A1-real")
    for status in (AssignmentStatus.CLAIMED, AssignmentStatus.EXPIRED, AssignmentStatus.RETURNED):
        Assignment.objects.filter(pk=real.pk).update(status=status)
        other = _accept(posting, "W1", f"A1-{status}")
        assert other.pk != real.pk and other.external_id == f"A1-{status}"
    real.refresh_from_db()
    assert real.external_id == "A1-real"
    assert Assignment.objects.filter(hit=posting.hit, worker=real.worker).count() == 4


def test_a_worker_whose_work_mturk_confirmed_is_asked_to_return_a_repost_of_it() -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    submitted_assignment(posting.hit, mturk_worker("W1"), external_id="A1", external_status="Submitted")
    with pytest.raises(CrowdActionRefused, match="already done this HIT"):
        _accept(posting, "W1", "A-other")


def test_unconfirmed_work_under_a_workers_id_never_turns_that_worker_away() -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    forged = submitted_assignment(posting.hit, mturk_worker("W1"), external_id="MADE-UP")
    genuine = _accept(posting, "W1", "A-genuine")
    assert genuine.pk != forged.pk and genuine.status == AssignmentStatus.CLAIMED


def test_a_blocked_worker_is_refused() -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    Worker.objects.create(kind="mturk", external_id="W1", blocked=True)
    with pytest.raises(CrowdActionRefused, match="cannot take this HIT"):
        _accept(posting, "W1", "A1")


def test_ids_that_do_not_belong_to_this_hit_are_refused() -> None:
    first, second = publish_locally(make_batch(hits=2))
    with pytest.raises(CrowdActionRefused, match="does not belong"):
        assignment_accept_remote(
            hit=first.hit, worker_external_id="W1", assignment_external_id="A1", hit_external_id=second.external_id
        )
    # Pending on one HIT, the id may be named on another (one of them is forged; the sync tells which)...
    _accept(first, "W1", "A1")
    assert _accept(second, "W1", "A1").hit_id == second.hit_id
    # ...but once MTurk confirmed it on the first, it belongs there.
    Assignment.objects.filter(hit=first.hit, external_id="A1").update(
        status=AssignmentStatus.SUBMITTED, external_status="Submitted"
    )
    with pytest.raises(CrowdActionRefused, match="belongs to another HIT"):
        _accept(second, "W2", "A1")


def test_a_closed_or_local_batch_takes_no_crowd_worker() -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    batch.status = BatchStatus.CLOSED
    batch.save()
    with pytest.raises(CrowdActionRefused, match="no longer available"):
        _accept(posting, "W1", "A1")
    local = make_batch(name="local", backend="local", hits=1)
    with pytest.raises(CrowdActionRefused, match="not offered on a crowd"):
        assignment_accept_remote(hit=local.hits.get(), worker_external_id="W1", assignment_external_id="A1")


def test_work_accepted_before_the_batch_was_expired_can_still_be_reopened() -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    first = _accept(posting, "W1", "A1")
    batch.status = BatchStatus.CLOSED
    batch.save()
    assert _accept(posting, "W1", "A1") == first
    with pytest.raises(CrowdActionRefused, match="no longer available"):
        _accept(posting, "W2", "A2")


def test_a_hit_whose_target_is_done_takes_no_one_even_with_room() -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    Target.objects.filter(pk=posting.hit.target_id).update(stage=TargetStage.DONE)
    with pytest.raises(CrowdActionRefused, match="no longer available"):
        _accept(posting, "W1", "A1")
    assert not Assignment.objects.exists()
