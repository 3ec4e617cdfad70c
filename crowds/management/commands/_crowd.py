"""Look-ups shared by the crowd commands: a batch by id, an assignment by id or the crowd's id (MTurk
AssignmentId, Prolific submission id), a crowd's worker by the crowd's id."""

from __future__ import annotations

from django.core.management.base import CommandError

from annotation.models import Worker
from crowds.interface import backend_label, backends
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
        raise CommandError(f"no assignment with id {value!r} here, nor with that id on a crowd")
    return assignment


def get_crowd_worker(value: str, *, crowd: str | None = None) -> Worker:
    """A worker a crowd's link brought, by the crowd's worker id (of ``crowd`` only, when given)."""
    kinds = [backend.worker_kind for backend in backends() if backend.worker_kind and crowd in (None, backend.name)]
    found = list(Worker.objects.filter(kind__in=kinds, external_id=value)[:2])
    where = f"{backend_label(crowd)} worker" if crowd else "crowd worker"
    if not found:
        raise CommandError(f"no {where} {value!r} has worked here")
    if len(found) > 1:
        raise CommandError(f"{value!r} names workers of more than one crowd: say which with the crowd's own command")
    return found[0]
