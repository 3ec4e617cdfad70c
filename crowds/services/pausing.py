"""Pausing and resuming a batch (docs/design.md §16): a paused batch hands out no new work, on any
crowd; work already taken may still be submitted, and is reviewed and paid as usual.

The local queue's claim and the projects list read ``Batch.paused_at`` (``hits.services.queue``,
``hits.selectors.projects``), as do the crowd pages that take in a new worker; the crowd itself is
told by its backend (``CrowdBackend.pause``: MTurk expires the live HITs and later moves their expiry
on again; Prolific pauses the study). The crowd is asked first, with no row lock held, and the
batch's state changes after it by a conditional UPDATE, so a retry or a double click changes nothing
twice and each change writes one entry in the activity log.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.activity import activity_record
from annotation.models import ActivityKind
from crowds.interface import get_backend
from crowds.services.publishing import CrowdActionRefused, _batch_lease, _busy
from hits.models import Batch, BatchStatus


def _published(batch: Batch) -> bool:
    """Whether the crowd has anything of the batch to pause: the local queue always, a crowd once published."""
    return not get_backend(batch.backend).remote or "published_at" in batch.external


def batch_pause(*, batch: Batch, by: Any = None) -> bool:
    """Pause an open batch. Returns True if this call paused it, False if it was paused already.

    A closed batch cannot be paused (it hands out nothing); one not published yet may be, and is
    then not published until it is resumed (``batch_publish`` refuses it)."""
    batch = Batch.objects.get(pk=batch.pk)
    if batch.status == BatchStatus.CLOSED:
        raise CrowdActionRefused(f"batch {batch.pk} is closed: there is nothing to pause")
    if batch.paused_at is not None:
        return False
    backend = get_backend(batch.backend)
    if _published(batch):
        with _batch_lease(batch) as held:
            if not held:
                raise CrowdActionRefused(_busy(batch))
            backend.pause(batch=batch)
    now = timezone.now()
    with transaction.atomic():
        changed = Batch.objects.filter(pk=batch.pk, paused_at__isnull=True).update(paused_at=now)
        if changed:
            activity_record(
                benchmark=batch.benchmark_id,
                kind=ActivityKind.BATCH_PAUSED,
                summary=f"batch {batch.pk} paused: it hands out no new HITs; work taken may still be submitted",
                by=by,
                result={"batch": batch.pk, "backend": batch.backend},
            )
    return changed == 1


def batch_resume(*, batch: Batch, by: Any = None) -> bool:
    """Hand a paused batch's work out again. Returns True if this call resumed it."""
    batch = Batch.objects.get(pk=batch.pk)
    if batch.paused_at is None:
        return False
    paused_at = batch.paused_at
    if _published(batch) and batch.status != BatchStatus.CLOSED:
        with _batch_lease(batch) as held:
            if not held:
                raise CrowdActionRefused(_busy(batch))
            get_backend(batch.backend).resume(batch=batch, paused_at=paused_at)
    with transaction.atomic():
        changed = Batch.objects.filter(pk=batch.pk, paused_at=paused_at).update(paused_at=None)
        if changed:
            minutes = max(1, round((timezone.now() - paused_at).total_seconds() / 60))
            activity_record(
                benchmark=batch.benchmark_id,
                kind=ActivityKind.BATCH_RESUMED,
                summary=f"batch {batch.pk} resumed after {minutes} minutes paused: it hands out its HITs again",
                by=by,
                result={"batch": batch.pk, "backend": batch.backend},
            )
    return changed == 1
