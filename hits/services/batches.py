"""Batch life cycle: closing and reopening (researchers, from the admin, pages and API)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from annotation.activity import activity_record
from annotation.models import ActivityKind, Benchmark
from hits.models import Batch, BatchStatus, HITItem


class BatchStateError(ValueError):
    """The batch cannot move to the asked state; the message says why."""


def batch_close(*, batch: Batch, by: Any = None) -> bool:
    """Close a batch: it offers no more HITs and frees its candidates for a new batch of the step.

    Nothing is deleted; assignments keep their state. A conditional UPDATE makes it idempotent and
    safe under concurrency: it returns True if this call closed the batch, False if it was closed.
    Only the call that closed it writes the activity log (``by``: who asked; None: the platform).
    """
    with transaction.atomic():
        changed = Batch.objects.filter(pk=batch.pk).exclude(status=BatchStatus.CLOSED).update(status=BatchStatus.CLOSED)
        if changed:
            activity_record(
                benchmark=batch.benchmark_id,
                kind=ActivityKind.BATCH_CLOSED,
                summary=f"batch {batch.pk} closed: it offers no more HITs",
                by=by,
                result={"batch": batch.pk},
            )
    batch.status = BatchStatus.CLOSED
    return changed == 1


def batch_reopen(*, batch: Batch, by: Any = None) -> bool:
    """Open a closed batch again, unless another open batch of its step now holds its candidates,
    or (a step-3 batch of the pipeline) another one now collects step 3 of its step-2 batch.

    Runs under the benchmark's row lock, like generation, so the check and the update cannot race
    with a generation for the same benchmark. Returns True if this call reopened it.
    """
    with transaction.atomic():
        Benchmark.objects.select_for_update(no_key=True).get(pk=batch.benchmark_id)
        current = Batch.objects.select_for_update().get(pk=batch.pk)
        if current.status != BatchStatus.CLOSED:
            batch.status = current.status
            return False
        successor = (
            Batch.objects.filter(parent_id=current.parent_id)
            .exclude(pk=batch.pk)
            .exclude(status=BatchStatus.CLOSED)
            .values_list("pk", flat=True)
            .first()
            if current.parent_id is not None
            else None
        )
        if successor is not None:
            raise BatchStateError(
                f"batch {batch.pk} cannot reopen: batch {successor} now collects step 3 of batch {current.parent_id}"
            )
        candidate_ids = HITItem.objects.filter(hit__batch=batch, candidate__isnull=False).values("candidate_id")
        clash = (
            Batch.objects.filter(benchmark_id=batch.benchmark_id, step=batch.step)
            .exclude(pk=batch.pk)
            .exclude(status=BatchStatus.CLOSED)
            .filter(hits__items__candidate_id__in=candidate_ids)
            .values_list("pk", flat=True)
            .distinct()
        )
        clashing = sorted(clash)
        if clashing:
            raise BatchStateError(
                f"batch {batch.pk} cannot reopen: open batch {', '.join(map(str, clashing))} "
                "holds some of its candidates"
            )
        Batch.objects.filter(pk=batch.pk).update(status=BatchStatus.OPEN)
        activity_record(
            benchmark=batch.benchmark_id,
            kind=ActivityKind.BATCH_REOPENED,
            summary=f"batch {batch.pk} reopened",
            by=by,
            result={"batch": batch.pk},
        )
    batch.status = BatchStatus.OPEN
    return True
