"""Researchers' decisions on workers: clear a flag, unblock, and the review settings (docs/design.md §5).

Blocking itself is ``hits.services.worker_block`` (the queue is what a block closes).

Each queues a refresh of the benchmarks it touches once committed, so filtering follows the decision.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotation.activity import activity_record
from annotation.models import ActivityKind, Benchmark, Worker
from crowdlex.followup import benchmark_refresh_queue
from hits.services.guards import mitigations_update
from hits.services.workers import AUTO_BLOCK_PREFIX, worker_activity_record, worker_benchmark_ids
from review.models import FlagReason, ReviewSettings, WorkerFlag
from review.services.flags import cleared_by_researcher
from review.services.signals import signals_request


def worker_flag_clear(*, flag: WorkerFlag, by: AbstractBaseUser | None) -> WorkerFlag:
    """A researcher reviewed the flag and trusts the worker: clear it and let their work count again.

    The flag stays cleared on later refreshes unless new failing work arrives (control
    accuracy). If the flag had blocked the worker automatically and no other active flag
    remains, the block is lifted too. The benchmark is refreshed after commit (un-filtering).
    Idempotent: clearing a cleared flag changes nothing.
    """
    now = timezone.now()
    with transaction.atomic():
        locked = WorkerFlag.objects.select_for_update().get(pk=flag.pk)
        if cleared_by_researcher(locked):
            return locked
        cleared: dict[str, Any] = {"by": "researcher", "at": now.isoformat()}
        if by is not None:
            cleared["user"] = by.get_username()
        if locked.reason == FlagReason.CONTROL_ACCURACY:
            cleared["failed_count"] = int(locked.evidence.get("failed_count", 0))
        locked.evidence = {**locked.evidence, "cleared": cleared}
        locked.cleared_at = now
        locked.cleared_by = by if by is not None and by.pk is not None else None  # type: ignore[assignment]
        locked.save(update_fields=["evidence", "cleared_at", "cleared_by", "updated_at"])
        worker = Worker.objects.select_for_update().get(pk=locked.worker_id)
        still_flagged = WorkerFlag.objects.filter(worker=worker, cleared_at__isnull=True).exists()
        if worker.blocked and worker.blocked_reason.startswith(AUTO_BLOCK_PREFIX) and not still_flagged:
            worker.blocked = False
            worker.blocked_reason = ""
            worker.save(update_fields=["blocked", "blocked_reason"])
            benchmark_refresh_queue(worker_benchmark_ids(worker))
        benchmark_refresh_queue([locked.benchmark_id])
    flag.refresh_from_db()
    return locked


def worker_unblock(*, worker: Worker, by: AbstractBaseUser | None = None) -> Worker:
    """Lift a block: the worker is offered HITs again and their work counts unless a flag still says otherwise.

    Active flags that would block them again automatically are cleared as the researcher's
    decision (otherwise the next refresh would undo the unblock). Idempotent.
    """
    now = timezone.now()
    with transaction.atomic():
        locked = Worker.objects.select_for_update().get(pk=worker.pk)
        if locked.blocked:
            auto = locked.blocked_reason.startswith(AUTO_BLOCK_PREFIX)
            locked.blocked = False
            locked.blocked_reason = ""
            locked.save(update_fields=["blocked", "blocked_reason"])
            if auto:
                for flag in WorkerFlag.objects.filter(worker=locked, cleared_at__isnull=True):
                    flag.cleared_at = now
                    cleared: dict[str, Any] = {"by": "researcher", "at": now.isoformat(), "unblocked": True}
                    if by is not None:
                        cleared["user"] = by.get_username()
                    if flag.reason == FlagReason.CONTROL_ACCURACY:
                        cleared["failed_count"] = int(flag.evidence.get("failed_count", 0))
                    flag.evidence = {**flag.evidence, "cleared": cleared}
                    flag.cleared_by = by if by is not None and by.pk is not None else None  # type: ignore[assignment]
                    flag.save(update_fields=["evidence", "cleared_at", "cleared_by", "updated_at"])
            benchmarks = worker_benchmark_ids(locked)
            worker_activity_record(worker=locked, kind=ActivityKind.UNBLOCKED, benchmark_ids=benchmarks, by=by)
            benchmark_refresh_queue(benchmarks)
    worker.blocked, worker.blocked_reason = locked.blocked, locked.blocked_reason
    return locked


REVIEW_SETTING_NAMES = ("auto_block_spammers", "auto_block_signals", "signal_overrides")


def review_settings_update(
    *,
    benchmark: Benchmark,
    auto_block_spammers: bool | None = None,
    auto_block_signals: bool | None = None,
    signal_overrides: dict[str, Any] | None = None,
    pledge: bool | None = None,
    block_copy_paste: bool | None = None,
    notice: bool | None = None,
    by: AbstractBaseUser | None = None,
) -> ReviewSettings:
    """Change a benchmark's review settings (only the arguments given) and refresh it after commit.

    The mitigations against answers from language models (``pledge``, ``block_copy_paste``, ``notice``)
    belong to the annotator's page, so they are kept by ``hits`` (``mitigations_update``) and edited here,
    with the thresholds of the signals that measure them. Invalid overrides raise
    ``django.core.exceptions.ValidationError`` naming the setting.
    """
    with transaction.atomic():
        if any(value is not None for value in (pledge, block_copy_paste, notice)):
            mitigations_update(benchmark=benchmark, pledge=pledge, block_copy_paste=block_copy_paste, notice=notice)
        settings, _ = ReviewSettings.objects.select_for_update().get_or_create(benchmark=benchmark)
        before = {name: getattr(settings, name) for name in REVIEW_SETTING_NAMES}
        if auto_block_spammers is not None:
            settings.auto_block_spammers = auto_block_spammers
        if auto_block_signals is not None:
            settings.auto_block_signals = auto_block_signals
        if signal_overrides is not None:
            settings.signal_overrides = signal_overrides
        settings.updated_by = by if by is not None and by.pk is not None else None  # type: ignore[assignment]
        settings.full_clean(exclude=["benchmark", "updated_by"])
        settings.save()
        changed = {
            name: [before[name], getattr(settings, name)]
            for name in REVIEW_SETTING_NAMES
            if getattr(settings, name) != before[name]
        }
        if changed:
            activity_record(
                benchmark=benchmark,
                kind=ActivityKind.SETTING_CHANGED,
                summary="review settings changed: "
                + ", ".join(f"{name} {old} → {new}" for name, (old, new) in sorted(changed.items())),
                by=by,
                result={"changed": changed},
            )
        benchmark_refresh_queue([benchmark.pk])
        # New thresholds apply at once, not after the throttle.
        signals_request(benchmark_id=benchmark.pk, at_once=True)
    return settings
