from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from annotation.models import Worker
from hits.models import HIT, Assignment, AssignmentStatus
from hits.services import (
    SubmissionRefused,
    assignment_claim_next,
    assignment_return,
    assignment_submit,
    assignments_expire_overdue,
)
from hits.tasks import expire_overdue_assignments
from tests.base import Cast
from tests.hits.factories import honest_answers, make_benchmark, make_hits

pytestmark = pytest.mark.django_db


def claim(user: User, **kwargs: Any) -> Assignment:
    assignment = assignment_claim_next(worker=Worker.objects.get(user=user), **kwargs)
    assert assignment is not None
    return assignment


def test_overdue_claims_expire_and_their_slots_go_back_to_the_pool(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1, assignments_per_hit=2)
    start = timezone.now()
    alice = claim(cast.alice, now=start)
    bob = claim(cast.bob, now=start + timedelta(minutes=20))
    assert claim_or_none(cast.carol, now=start) is None

    expired = assignments_expire_overdue(now=start + timedelta(minutes=31))

    assert expired == 1
    alice.refresh_from_db()
    bob.refresh_from_db()
    assert (alice.status, bob.status) == (AssignmentStatus.EXPIRED, AssignmentStatus.CLAIMED)
    hit.refresh_from_db()
    assert hit.assignments_active == 1
    # The slot is free again for someone else, and the expired row is kept.
    assert claim_or_none(cast.carol, now=start + timedelta(minutes=31)) is not None
    assert Assignment.objects.count() == 3


def claim_or_none(user: User, **kwargs: Any) -> Assignment | None:
    return assignment_claim_next(worker=Worker.objects.get(user=user), **kwargs)


def test_expiring_twice_changes_nothing_the_second_time(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    start = timezone.now()
    claim(cast.alice, now=start)

    assert assignments_expire_overdue(now=start + timedelta(hours=1)) == 1
    assert assignments_expire_overdue(now=start + timedelta(hours=2)) == 0
    assert HIT.objects.get().assignments_active == 0


def test_the_periodic_task_expires_overdue_claims(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice, now=timezone.now() - timedelta(hours=1))

    expire_overdue_assignments.delay()

    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.EXPIRED
    assert HIT.objects.get().assignments_active == 0


def test_submitted_work_never_expires(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    start = timezone.now()
    assignment_submit(assignment=claim(cast.alice, now=start), answers=honest_answers(hit), now=start)

    assert assignments_expire_overdue(now=start + timedelta(days=1)) == 0
    hit.refresh_from_db()
    assert hit.assignments_active == 1


def test_returning_a_hit_frees_its_slot_and_keeps_the_row(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1, assignments_per_hit=1)
    assignment = claim(cast.alice)

    returned = assignment_return(assignment=assignment)

    assert returned.status == AssignmentStatus.RETURNED
    hit.refresh_from_db()
    assert hit.assignments_active == 0
    assert claim_or_none(cast.bob) is not None
    # Returning again is harmless; the worker is not offered the HIT they returned.
    assert assignment_return(assignment=assignment).status == AssignmentStatus.RETURNED
    assert claim_or_none(cast.alice) is None
    assert HIT.objects.get().assignments_active == 1


def test_a_submitted_hit_cannot_be_returned(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    assignment_submit(assignment=assignment, answers=honest_answers(hit))

    with pytest.raises(SubmissionRefused, match="already submitted"):
        assignment_return(assignment=assignment)
    assert HIT.objects.get().assignments_active == 1
