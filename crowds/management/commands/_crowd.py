"""Look-ups shared by the crowd commands: a batch by id, an assignment by id or the crowd's id (MTurk
AssignmentId, Prolific submission id), and the names the commands give each crowd."""

from __future__ import annotations

from django.core.management.base import CommandError

from annotation.models import Worker, WorkerKind
from hits.models import Assignment, Batch


def get_batch(value: str | int) -> Batch:
    try:
        return Batch.objects.select_related("benchmark").get(pk=int(value))
    except (ValueError, Batch.DoesNotExist):
        raise CommandError(f"no batch with id {value!r} (see the benchmark page or the admin for batch ids)") from None


def get_assignment(value: str) -> Assignment:
    """An assignment by its id here, or by the crowd's assignment id."""
    found = Assignment.objects.filter(pk=int(value)) if value.isdigit() else Assignment.objects.none()
    found = found or Assignment.objects.filter(external_id=value)
    assignment = found.select_related("hit__batch", "worker").first()
    if assignment is None:
        raise CommandError(
            f"no assignment with id or MTurk AssignmentId {value!r}, nor with that Prolific submission id"
        )
    return assignment


CROWD_NAMES = {"mturk": "MTurk", "prolific": "Prolific"}


def get_mturk_worker(value: str) -> Worker:
    worker = Worker.objects.filter(kind=WorkerKind.MTURK, external_id=value).first()
    if worker is None:
        raise CommandError(f"no MTurk worker {value!r} has worked here")
    return worker
