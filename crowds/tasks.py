"""Celery tasks of the crowds: thin wrappers around one service each (docs/conventions.md).

Their names are the ones they had in the hits app, so the beat schedule and queued tasks still find them.
"""

from datetime import timedelta
from typing import Any

from celery import shared_task

from crowds.interface import BackendError
from hits.models import Batch


@shared_task(name="hits.tasks.mturk_sync_open_batches", ignore_result=True)
def crowd_batches_sync_open() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): sync every published crowd batch; returns how many were synced."""
    from crowds.services import batches_sync_open

    return len(batches_sync_open())


@shared_task(name="hits.tasks.batch_sync")
def batch_sync_task(batch_id: int, decide_now: bool = False) -> dict[str, Any] | None:
    """Sync one batch (queued from the researcher's page). Returns the report, or the refusal as
    ``{"error": ...}``; a batch deleted meanwhile is skipped. Idempotent: the sync takes a lease."""
    from crowds.services import CrowdActionRefused, batch_sync

    batch = Batch.objects.filter(pk=batch_id).first()
    if batch is None:
        return None
    try:
        report = batch_sync(batch=batch, hold=timedelta(0) if decide_now else None)
    except (BackendError, CrowdActionRefused) as error:
        return {"error": str(error)}
    return {**report.as_dict(), "summary": report.summary()}


def publish_arguments(
    options: Any = None,
    user_id: Any = None,
    former: tuple[Any, ...] = (),
    *,
    sandbox: bool | None = None,
    qualifications: dict[str, Any] | None = None,
) -> tuple[dict[str, Any] | None, int | None]:
    """The crowd's options and the account of a publish message, in either shape it was queued in.

    Now: ``(batch_id, options, user_id)``. Before the crowds had an app of their own (messages still
    queued across that upgrade, docs/deploy.md "Upgrading"): ``(batch_id, sandbox, qualifications,
    user_id, options)``, by position or by name, where ``sandbox`` and ``qualifications`` were publish
    options passed one by one and ``options`` held the others. A message of the former shape is told
    apart by what it carries: a third or fourth argument, a flag where the options go, or options
    where the account goes. Pure: it reads nothing.
    """
    if len(former) > 2:
        raise TypeError(f"a publish message takes at most 5 arguments, not {len(former) + 3}")
    if former or isinstance(options, bool) or isinstance(user_id, dict):
        sandbox = options if sandbox is None else sandbox
        qualifications = user_id if qualifications is None else qualifications
        user_id = former[0] if former else None
        options = former[1] if len(former) > 1 else None
    separate = {"sandbox": sandbox, "qualifications": qualifications}
    chosen = {key: value for key, value in separate.items() if value is not None}
    if chosen:
        options = {**(options or {}), **chosen}
    return options, user_id


@shared_task(name="hits.tasks.batch_publish")
def batch_publish_task(
    batch_id: int,
    options: dict[str, Any] | None = None,
    user_id: int | None = None,
    *former: Any,
    sandbox: bool | None = None,
    qualifications: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Publish one batch (queued from the researcher's page: hundreds of HITs outlast a request).

    Idempotent: a retry finds the HITs already made through their request tokens. ``user_id``: the
    account that asked, for the activity log (gone or None: the platform); ``options``: the crowd's
    own publish options (its backend's ``publish_prepare``). ``former``, ``sandbox`` and
    ``qualifications`` take a message queued in the former shape (``publish_arguments``).
    """
    from django.contrib.auth.models import User

    from crowds.services import CrowdActionRefused, batch_publish

    options, user_id = publish_arguments(options, user_id, former, sandbox=sandbox, qualifications=qualifications)
    batch = Batch.objects.filter(pk=batch_id).first()
    if batch is None:
        return None
    try:
        by = User.objects.filter(pk=user_id).first() if user_id is not None else None
        result = batch_publish(batch=batch, options=options, by=by)
    except (BackendError, CrowdActionRefused) as error:
        return {"error": str(error)}
    return {
        "hits_created": result.hits_created,
        "hits_existing": result.hits_existing,
        "hit_type_id": result.hit_type_id,
        "messages": result.messages,
    }
