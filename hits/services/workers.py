"""Blocking a worker: the queue offers them nothing more and the review room filters their work (docs/design.md §5)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.activity import activity_record
from annotation.models import ActivityKind, Worker
from crowdlex.followup import benchmark_refresh_queue
from hits.models import Assignment

# Workers blocked by the platform rather than a researcher carry this prefix in blocked_reason,
# so clearing the flag that caused the block also lifts it.
AUTO_BLOCK_PREFIX = "automatic: "


def worker_benchmark_ids(worker: Worker) -> list[int]:
    """The benchmarks a worker has assignments in."""
    return list(
        Assignment.objects.filter(worker=worker)
        .values_list("hit__batch__benchmark_id", flat=True)
        .distinct()
        .order_by()
    )


def worker_activity_record(*, worker: Worker, kind: str, benchmark_ids: list[int], by: Any) -> None:
    """A block or unblock in the activity log of every benchmark the worker has worked in (a block holds
    everywhere; each benchmark's log shows it)."""
    verb = "blocked" if kind == ActivityKind.BLOCKED else "unblocked"
    reason = f": {worker.blocked_reason}" if worker.blocked else ""
    # In id order: each entry moves its benchmark's change counter (annotation.changes), and two
    # blocks must take those rows in the same order.
    for benchmark_id in sorted(benchmark_ids):
        activity_record(
            benchmark=benchmark_id,
            kind=kind,
            summary=f"worker {worker.external_id} ({worker.get_kind_display()}) {verb}{reason}",
            by=by,
            result={"worker": worker.external_id, "kind": worker.kind, "reason": worker.blocked_reason},
        )


def worker_block(*, worker: Worker, reason: str, by: AbstractBaseUser | None = None) -> Worker:
    """Block a worker: they are offered no more HITs anywhere, and their labels stop counting.

    Every benchmark they worked on is refreshed after commit, which filters their work and
    re-opens its slots for others. A claim they hold keeps running until it expires or is
    returned; its submission will be filtered. Idempotent.
    """
    reason = reason.strip() or "blocked by a researcher"
    if by is not None:
        reason = f"{reason} ({by.get_username()})"
    with transaction.atomic():
        locked = Worker.objects.select_for_update().get(pk=worker.pk)
        if not locked.blocked or locked.blocked_reason.startswith(AUTO_BLOCK_PREFIX):
            locked.blocked = True
            locked.blocked_reason = reason
            locked.save(update_fields=["blocked", "blocked_reason"])
            benchmarks = worker_benchmark_ids(locked)
            worker_activity_record(worker=locked, kind=ActivityKind.BLOCKED, benchmark_ids=benchmarks, by=by)
            benchmark_refresh_queue(benchmarks)
    worker.blocked, worker.blocked_reason = locked.blocked, locked.blocked_reason
    return locked
