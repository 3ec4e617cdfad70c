"""Assignments and answers written directly, standing in for the queue's claim and submit."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from annotation.models import Worker, WorkerKind
from hits.models import HIT, Answer, Assignment, AssignmentStatus
from schemes.swords.items import ItemKind


def worker(name: str) -> Worker:
    return Worker.objects.get_or_create(kind=WorkerKind.SIMULATED, external_id=name)[0]


def make_assignment(
    hit: HIT,
    name: str,
    *,
    status: str = AssignmentStatus.SUBMITTED,
    filtered: bool = False,
    seconds: float | None = 30.0,
    deadline_in: timedelta = timedelta(minutes=30),
    answer: str | None = "accept",
) -> Assignment:
    """An assignment of `hit` by worker `name`; submitted ones answer every item with `answer`
    (controls answered correctly)."""
    now = timezone.now()
    submitted = status in (AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED, AssignmentStatus.REJECTED)
    assignment = Assignment.objects.create(
        hit=hit,
        worker=worker(name),
        status=status,
        filtered=filtered,
        claimed_at=now - timedelta(minutes=5),
        deadline=now + deadline_in,
        submitted_at=now if submitted else None,
        seconds_on_page=seconds if submitted else None,
        controls_total=2 if submitted else 0,
        controls_correct=2 if submitted else 0,
    )
    if submitted and answer:
        Answer.objects.bulk_create(
            Answer(
                assignment=assignment,
                item=item,
                value="reject" if item.kind == ItemKind.CONTROL_DISTRACTOR else answer,
            )
            for item in hit.items.all()
        )
    return assignment
