"""Celery tasks of the hits app: thin wrappers around one service each."""

from celery import shared_task

from hits.models import Batch
from hits.services import assignments_expire_overdue, batch_sync, batches_sync_open


@shared_task(name="hits.tasks.expire_overdue_assignments", ignore_result=True)
def expire_overdue_assignments() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): expire claims past their deadline; safe to run concurrently."""
    return assignments_expire_overdue()


@shared_task(name="hits.tasks.mturk_sync_open_batches", ignore_result=True)
def mturk_sync_open_batches() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): sync every published crowd batch; returns how many were synced."""
    return len(batches_sync_open())


@shared_task(name="hits.tasks.batch_sync", ignore_result=True)
def batch_sync_task(batch_id: int) -> None:
    """Sync one batch (queued from the researcher's page); a batch deleted meanwhile is skipped."""
    batch = Batch.objects.filter(pk=batch_id).first()
    if batch is None:
        return
    batch_sync(batch=batch)
