"""Celery tasks of the hits app: thin wrappers around one service each.

A task imports its service inside the function, and a service that queues a task defines it beside
itself (``hits.notifications.services.notification_deliver_task``, imported here so that the worker
finds it), so no two modules import each other (docs/conventions.md, "Services and selectors").
"""

from celery import shared_task

from hits.notifications.services import notification_deliver_task

__all__ = ["expire_overdue_assignments", "notification_deliver_task"]


@shared_task(name="hits.tasks.expire_overdue_assignments", ignore_result=True)
def expire_overdue_assignments() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): expire claims past their deadline; safe to run concurrently."""
    from hits.services import assignments_expire_overdue

    return assignments_expire_overdue()
