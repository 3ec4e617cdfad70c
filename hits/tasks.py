"""Celery tasks of the hits app: thin wrappers around one service each."""

from celery import shared_task

from hits.services import assignments_expire_overdue


@shared_task(name="hits.tasks.expire_overdue_assignments", ignore_result=True)
def expire_overdue_assignments() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): expire claims past their deadline; safe to run concurrently."""
    return assignments_expire_overdue()
