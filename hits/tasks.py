"""Celery tasks of the hits app: thin wrappers around one service each.

Each imports its service inside the function, and services queue these tasks by their registered
names (docs/conventions.md, "Services and selectors"), so no two modules import each other.
"""

from celery import shared_task


@shared_task(name="hits.tasks.expire_overdue_assignments", ignore_result=True)
def expire_overdue_assignments() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): expire claims past their deadline; safe to run concurrently."""
    from hits.services import assignments_expire_overdue

    return assignments_expire_overdue()


@shared_task(name="hits.tasks.notification_deliver", ignore_result=True)
def notification_deliver_task(notification_id: int, attempt: int = 1) -> None:
    """E-mail and post one notification (docs/notifications.md). A failed post is queued again with
    a doubling wait (``WEBHOOK_RETRY_SECONDS``, then twice that...) up to ``WEBHOOK_MAX_ATTEMPTS``
    posts; each attempt is recorded once, so a task run twice posts once."""
    from hits.notifications import notification_deliver

    wait = notification_deliver(notification_id=notification_id, attempt=attempt)
    if wait is not None:
        notification_deliver_task.apply_async((notification_id, attempt + 1), countdown=wait)
